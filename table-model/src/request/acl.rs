//! Requests for a table's stored access policies (`?comp=acl`, `docs/rules.md` §9.3).

use super::error::RequestError;
use super::TableService;
use crate::name::TableName;
use crate::sas::{encode_signed_identifiers, SignedIdentifier};
use http::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use http::{Method, Request};

/// The `Content-Type` and `Accept` of the policies' XML document.
const XML_CONTENT_TYPE: &str = "application/xml";

impl TableService {
    /// `GET /<table>?comp=acl`: the table's stored access policies, `200 OK` with a `SignedIdentifiers` XML
    /// document (read it with [`response::access_policies`](crate::response::access_policies)).
    ///
    /// ```
    /// use table_model::TableService;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// let request = service.get_access_policy(&"AuditLog".parse()?)?;
    /// assert_eq!(request.uri(), "http://127.0.0.1:10002/devstoreaccount1/AuditLog?comp=acl");
    /// assert_eq!(request.headers()["accept"], "application/xml");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RequestErrorKind::NotSupported`](crate::RequestErrorKind::NotSupported) for the Cosmos DB Table API,
    /// which does not serve stored access policies.
    pub fn get_access_policy(&self, table: &TableName) -> Result<Request<Vec<u8>>, RequestError> {
        self.served("get access policy")?;
        let mut request = self.request(Method::GET, &format!("/{}", table.as_str()), &acl(), None)?;
        request.headers_mut().insert(ACCEPT, HeaderValue::from_static(XML_CONTENT_TYPE));
        Ok(self.signed(request))
    }

    /// `PUT /<table>?comp=acl`: replaces the table's stored access policies with these (none removes them
    /// all); `204 No Content`. Removing or changing a policy revokes or changes every SAS that names it.
    ///
    /// ```
    /// use table_model::sas::{AccessPolicy, SignedIdentifier, TableSasPermissions};
    /// use table_model::TableService;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// let readers = SignedIdentifier::new("readers".parse()?, AccessPolicy::new(TableSasPermissions::READ));
    /// let request = service.set_access_policy(&"AuditLog".parse()?, &[readers])?;
    /// assert_eq!((request.method().as_str(), request.headers()["content-type"].to_str()?), ("PUT", "application/xml"));
    /// assert!(std::str::from_utf8(request.body())?.contains("<Id>readers</Id>"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RequestErrorKind::AccessPolicy`](crate::RequestErrorKind::AccessPolicy) for more than 5 policies, an
    /// identifier given twice, or a time outside the years 1 to 9999;
    /// [`RequestErrorKind::NotSupported`](crate::RequestErrorKind::NotSupported) for the Cosmos DB Table API.
    pub fn set_access_policy(
        &self,
        table: &TableName,
        policies: &[SignedIdentifier],
    ) -> Result<Request<Vec<u8>>, RequestError> {
        self.served("set access policy")?;
        let body = encode_signed_identifiers(policies)?;
        let mut request = self.request(Method::PUT, &format!("/{}", table.as_str()), &acl(), Some(body))?;
        request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(XML_CONTENT_TYPE));
        request.headers_mut().insert(ACCEPT, HeaderValue::from_static(XML_CONTENT_TYPE));
        Ok(self.signed(request))
    }
}

fn acl() -> [(&'static str, String); 1] {
    [("comp", "acl".to_owned())]
}
