//! Requests for the service's properties (`?restype=service&comp=properties`) and the statistics of its
//! secondary (`?restype=service&comp=stats`), `docs/rules.md` §9.5.

use super::error::{RequestError, RequestErrorKind};
use super::TableService;
use crate::connection::ServiceKind;
use crate::service_properties::{encode_service_properties, ServiceProperties};
use http::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use http::{Method, Request};

/// The `Content-Type` and `Accept` of the properties' and statistics' XML documents.
const XML_CONTENT_TYPE: &str = "application/xml";

impl TableService {
    /// `GET /?restype=service&comp=properties`: the service's logging, metrics and CORS rules, `200 OK` with a
    /// `StorageServiceProperties` XML document (read it with
    /// [`response::service_properties`](crate::response::service_properties)).
    ///
    /// ```
    /// use table_model::{RequestErrorKind, ServiceKind, TableService};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// let request = service.get_service_properties()?;
    /// assert_eq!(request.uri(), "http://127.0.0.1:10002/devstoreaccount1/?restype=service&comp=properties");
    /// assert_eq!(request.headers()["accept"], "application/xml");
    ///
    /// let cosmos = service.with_service_kind(ServiceKind::CosmosDb);
    /// let err = cosmos.get_service_properties().unwrap_err();
    /// assert!(matches!(err.kind(), RequestErrorKind::NotSupported { .. }));
    /// assert_eq!(err.to_string(), "get service properties is not served by Cosmos DB for Table");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RequestErrorKind::NotSupported`] for the Cosmos DB Table API, which does not serve it.
    pub fn get_service_properties(&self) -> Result<Request<Vec<u8>>, RequestError> {
        self.served("get service properties")?;
        let mut request = self.request(Method::GET, "/", &properties_query(), None)?;
        request.headers_mut().insert(ACCEPT, HeaderValue::from_static(XML_CONTENT_TYPE));
        Ok(self.signed(request))
    }

    /// `PUT /?restype=service&comp=properties`: sets the parts of the service's properties that are given
    /// and leaves the others as they are; `202 Accepted` (read it with
    /// [`response::accepted`](crate::response::accepted)). The properties are checked first
    /// ([`ServiceProperties::check`]).
    ///
    /// ```
    /// use table_model::service_properties::{Metrics, RetentionPolicy, ServiceProperties};
    /// use table_model::TableService;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// let metrics = ServiceProperties::new().with_hour_metrics(Metrics::enabled(true, RetentionPolicy::Days(7)));
    /// let request = service.set_service_properties(&metrics)?;
    /// assert_eq!(request.method(), "PUT");
    /// assert_eq!(request.headers()["content-type"], "application/xml");
    /// let body = std::str::from_utf8(request.body())?;
    /// assert!(body.contains("<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true<"));
    /// assert!(!body.contains("<Logging>"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RequestErrorKind::ServiceProperties`] for properties that break a rule (the error names the field
    /// and, for CORS, the rule's index); [`RequestErrorKind::NotSupported`] for the Cosmos DB Table API.
    pub fn set_service_properties(&self, properties: &ServiceProperties) -> Result<Request<Vec<u8>>, RequestError> {
        self.served("set service properties")?;
        let body = encode_service_properties(properties)?;
        let mut request = self.request(Method::PUT, "/", &properties_query(), Some(body))?;
        request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(XML_CONTENT_TYPE));
        request.headers_mut().insert(ACCEPT, HeaderValue::from_static(XML_CONTENT_TYPE));
        Ok(self.signed(request))
    }

    /// `GET /?restype=service&comp=stats` on the secondary location ([`Endpoint::secondary`]): the
    /// geo-replication status, `200 OK` with a `StorageServiceStats` XML document (read it with
    /// [`response::service_stats`](crate::response::service_stats)). The service answers it only on the
    /// secondary of an account with read-access geo-redundant replication; Azurite answers it on its
    /// `<account>-secondary` path and refuses it on the primary (`400 InvalidQueryParameterValue`). When the
    /// endpoint does not name its account (a custom domain), the request goes to the endpoint as given: make
    /// the service with the secondary's URL then.
    ///
    /// ```
    /// use table_model::TableService;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let azure = TableService::from_connection_string(
    ///     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=a2V5;EndpointSuffix=core.windows.net",
    /// )?;
    /// let request = azure.get_service_stats()?;
    /// assert_eq!(request.uri(), "https://acme-secondary.table.core.windows.net/?restype=service&comp=stats");
    /// // Signed for the primary account, as the service expects.
    /// assert!(request.headers()["authorization"].to_str()?.starts_with("SharedKey acme:"));
    ///
    /// let azurite = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// assert_eq!(
    ///     azurite.get_service_stats()?.uri(),
    ///     "http://127.0.0.1:10002/devstoreaccount1-secondary/?restype=service&comp=stats"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// [`Endpoint::secondary`]: crate::Endpoint::secondary
    ///
    /// # Errors
    /// [`RequestErrorKind::NotSupported`] for the Cosmos DB Table API, which does not serve it.
    pub fn get_service_stats(&self) -> Result<Request<Vec<u8>>, RequestError> {
        self.served("get service stats")?;
        let params = [("restype", "service".to_owned()), ("comp", "stats".to_owned())];
        let mut request = match self.endpoint.secondary() {
            Some(secondary) => {
                let at_secondary = TableService { endpoint: secondary, ..self.clone() };
                at_secondary.request(Method::GET, "/", &params, None)?
            }
            None => self.request(Method::GET, "/", &params, None)?,
        };
        request.headers_mut().insert(ACCEPT, HeaderValue::from_static(XML_CONTENT_TYPE));
        Ok(self.signed(request))
    }

    /// Refuses an operation the Cosmos DB Table API does not serve (service properties and statistics, stored
    /// access policies) before anything is built.
    pub(super) fn served(&self, operation: &'static str) -> Result<(), RequestError> {
        match self.kind {
            ServiceKind::CosmosDb => {
                Err(RequestError::new(RequestErrorKind::NotSupported { operation, service: self.kind }))
            }
            _ => Ok(()),
        }
    }
}

fn properties_query() -> [(&'static str, String); 2] {
    [("restype", "service".to_owned()), ("comp", "properties".to_owned())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{signature, string_to_sign};
    use crate::connection::{AccountKey, Credential, Endpoint};
    use crate::service_properties::{CorsRule, Metrics, RetentionPolicy};
    use crate::ServicePropertiesErrorKind;
    use std::time::{Duration, UNIX_EPOCH};

    fn at(url: &str) -> TableService {
        TableService::new(Endpoint::parse(url).unwrap(), Credential::SharedKey(AccountKey::development()))
            .at_time(UNIX_EPOCH + Duration::from_secs(1_795_306_922))
    }

    fn header<'a>(r: &'a Request<Vec<u8>>, name: &str) -> &'a str {
        r.headers()[name].to_str().unwrap()
    }

    /// The request is signed for the primary account over its own path and `comp`, as the service expects.
    fn assert_signed(r: &Request<Vec<u8>>, account: &str, resource: &str) {
        let to_sign = string_to_sign(r, account);
        assert!(to_sign.ends_with(resource), "{to_sign}");
        let expected = format!("SharedKey {account}:{}", signature(&AccountKey::development(), &to_sign));
        assert_eq!(header(r, "authorization"), expected);
    }

    #[test]
    fn properties_requests() {
        let service = at("https://acme.table.core.windows.net");
        let get = service.get_service_properties().unwrap();
        assert_eq!(
            (get.method(), get.uri().to_string().as_str()),
            (&Method::GET, "https://acme.table.core.windows.net/?restype=service&comp=properties")
        );
        assert_eq!((header(&get, "accept"), header(&get, "x-ms-version")), ("application/xml", "2019-02-02"));
        assert!(get.body().is_empty());
        assert_signed(&get, "acme", "\n/acme/?comp=properties");

        let properties = ServiceProperties::new().with_hour_metrics(Metrics::enabled(false, RetentionPolicy::Days(2)));
        let set = service.set_service_properties(&properties).unwrap();
        assert_eq!((set.method(), set.uri()), (&Method::PUT, get.uri()));
        assert_eq!((header(&set, "content-type"), header(&set, "accept")), ("application/xml", "application/xml"));
        assert_eq!(set.body(), &encode_service_properties(&properties).unwrap());
        assert_signed(&set, "acme", "\n/acme/?comp=properties");

        let local = at("http://127.0.0.1:10002/devstoreaccount1").get_service_properties().unwrap();
        assert_eq!(local.uri(), "http://127.0.0.1:10002/devstoreaccount1/?restype=service&comp=properties");
        assert_signed(&local, "devstoreaccount1", "\n/devstoreaccount1/devstoreaccount1/?comp=properties");
    }

    #[test]
    fn properties_are_checked_before_anything_is_built() {
        let service = at("https://acme.table.core.windows.net");
        let rules = vec![CorsRule::new(["*"], ["GET"]); 6];
        let err = service.set_service_properties(&ServiceProperties::new().with_cors(rules)).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                RequestErrorKind::ServiceProperties(e) if e.kind() == &ServicePropertiesErrorKind::TooManyCorsRules { found: 6 }
            ),
            "{err}"
        );
        assert_eq!(err.to_string(), "invalid service properties: `Cors` has 6 rules, at most 5");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn statistics_go_to_the_secondary() {
        let azure = at("https://acme.table.core.windows.net").get_service_stats().unwrap();
        assert_eq!(azure.uri(), "https://acme-secondary.table.core.windows.net/?restype=service&comp=stats");
        assert_eq!(header(&azure, "accept"), "application/xml");
        assert_signed(&azure, "acme", "\n/acme/?comp=stats");

        let local = at("http://127.0.0.1:10002/devstoreaccount1").get_service_stats().unwrap();
        assert_eq!(local.uri(), "http://127.0.0.1:10002/devstoreaccount1-secondary/?restype=service&comp=stats");
        // Azurite takes the path as sent, `-secondary` included, in the string to sign.
        assert_signed(&local, "devstoreaccount1", "\n/devstoreaccount1/devstoreaccount1-secondary/?comp=stats");

        // A custom domain does not name the account: the request goes where the endpoint says.
        let custom = TableService::new(
            Endpoint::with_account("https://tables.contoso.com", "acme").unwrap(),
            Credential::SharedKey(AccountKey::development()),
        );
        assert_eq!(custom.get_service_stats().unwrap().uri(), "https://tables.contoso.com/?restype=service&comp=stats");

        // A SAS goes along to the secondary.
        let sas = TableService::new(
            Endpoint::parse("https://acme.table.core.windows.net").unwrap(),
            Credential::Sas(crate::SasToken::new("sv=2019-02-02&ss=t&srt=s&sp=r&sig=x").unwrap()),
        );
        assert_eq!(
            sas.get_service_stats().unwrap().uri(),
            "https://acme-secondary.table.core.windows.net/?restype=service&comp=stats&sv=2019-02-02&ss=t&srt=s&sp=r&sig=x"
        );
    }

    #[test]
    fn secondary_endpoints() {
        let secondary = |url: &str| Endpoint::parse(url).unwrap().secondary().map(|e| e.url().to_owned());
        assert_eq!(
            secondary("https://Acme.table.core.windows.net/").as_deref(),
            Some("https://Acme-secondary.table.core.windows.net")
        );
        assert_eq!(
            secondary("https://acme.table.core.chinacloudapi.cn:443").as_deref(),
            Some("https://acme-secondary.table.core.chinacloudapi.cn:443")
        );
        assert_eq!(
            secondary("http://localhost:10002/devstoreaccount1/").as_deref(),
            Some("http://localhost:10002/devstoreaccount1-secondary")
        );
        assert_eq!(
            secondary("http://[::1]:10002/devstoreaccount1").as_deref(),
            Some("http://[::1]:10002/devstoreaccount1-secondary")
        );
        assert_eq!(secondary("https://acme-secondary.table.core.windows.net"), None);
        let moved = Endpoint::parse("http://127.0.0.1:10002/devstoreaccount1").unwrap().secondary().unwrap();
        assert_eq!(
            (moved.account(), moved.path(), moved.is_path_style()),
            ("devstoreaccount1", "/devstoreaccount1-secondary", true)
        );
        let azure = Endpoint::parse("https://acme.table.core.windows.net").unwrap().secondary().unwrap();
        assert_eq!((azure.account(), azure.path(), azure.kind()), ("acme", "", ServiceKind::Storage));
        assert_eq!(Endpoint::with_account("http://127.0.0.1:10002/other", "acme").unwrap().secondary(), None);
        assert_eq!(Endpoint::with_account("https://proxy:8443", "acme").unwrap().secondary(), None);
    }

    /// Cosmos DB serves none of these: each is refused with the same typed error, whether the kind comes from
    /// the URL or is set, and nothing is built.
    #[test]
    fn cosmos_refuses_service_properties_statistics_and_access_policies() {
        let table = crate::TableName::new("Audit").unwrap();
        for service in [
            at("https://acme.table.cosmos.azure.com:443"),
            at("https://acme.table.core.windows.net").with_service_kind(ServiceKind::CosmosDb),
        ] {
            let results = [
                ("get service properties", service.get_service_properties()),
                ("set service properties", service.set_service_properties(&ServiceProperties::new())),
                ("get service stats", service.get_service_stats()),
                ("get access policy", service.get_access_policy(&table)),
                ("set access policy", service.set_access_policy(&table, &[])),
            ];
            for (operation, result) in results {
                let err = result.unwrap_err();
                assert_eq!(err.kind(), &RequestErrorKind::NotSupported { operation, service: ServiceKind::CosmosDb });
                assert_eq!(err.to_string(), format!("{operation} is not served by Cosmos DB for Table"));
            }
            // Invalid properties on Cosmos DB: the service's refusal comes first.
            let bad = ServiceProperties::new().with_cors(vec![CorsRule::new(["*"], ["GET"]); 6]);
            assert!(matches!(
                service.set_service_properties(&bad).unwrap_err().kind(),
                RequestErrorKind::NotSupported { .. }
            ));
        }
        for kind in [ServiceKind::Storage, ServiceKind::Azurite] {
            let service = at("https://acme.table.core.windows.net").with_service_kind(kind);
            assert!(service.get_service_properties().is_ok() && service.get_access_policy(&table).is_ok());
        }
    }
}
