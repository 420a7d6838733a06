//! Stored access policies: the start, expiry and permissions a table keeps under an identifier, which a SAS
//! names with `si` (`docs/rules.md` §9.3), and their XML document (`SignedIdentifiers`, `?comp=acl`).

use super::error::{SasError, SasErrorKind};
use super::{sas_time, TableSasPermissions};
use crate::limits::{ACCESS_POLICIES_MAX, ACCESS_POLICY_ID_MAX_CHARS, TIME_MAX_YEAR, TIME_MIN_YEAR};
use crate::xml::{self, text};
use chrono::{DateTime, Datelike as _, Utc};
use std::fmt;
use std::str::FromStr;

/// The identifier of a stored access policy: 1 to 64 characters, no control character.
///
/// ```
/// use table_model::sas::PolicyId;
/// let id = PolicyId::new("audit-readers")?;
/// assert_eq!(id.as_str(), "audit-readers");
/// let err = PolicyId::new("x".repeat(65)).unwrap_err();
/// assert_eq!(err.to_string(), "invalid stored access policy identifier: must be 1 to 64 characters, found 65");
/// # Ok::<(), table_model::SasError>(())
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PolicyId(String);

impl PolicyId {
    /// Checks an identifier.
    ///
    /// # Errors
    /// [`SasErrorKind::PolicyIdLength`] for an empty one or one over 64 characters;
    /// [`SasErrorKind::PolicyIdCharacter`] for a control character, which the policies' XML cannot carry.
    pub fn new(id: impl Into<String>) -> Result<Self, SasError> {
        let id = id.into();
        let chars = id.chars().count();
        if chars == 0 || chars > ACCESS_POLICY_ID_MAX_CHARS {
            return Err(SasError::new(SasErrorKind::PolicyIdLength { chars }));
        }
        if let Some((index, ch)) = id.char_indices().find(|(_, c)| c.is_control()) {
            return Err(SasError::new(SasErrorKind::PolicyIdCharacter { ch, index }));
        }
        Ok(PolicyId(id))
    }

    /// The identifier.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for PolicyId {
    type Err = SasError;
    fn from_str(id: &str) -> Result<Self, SasError> {
        PolicyId::new(id)
    }
}

impl fmt::Debug for PolicyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for PolicyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for PolicyId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// What a stored access policy grants: each field left out here must be given by the SAS that names the
/// policy, and each field given here must not be (the service refuses a field given twice). Times are kept in
/// whole seconds.
///
/// ```
/// use table_model::sas::{AccessPolicy, TableSasPermissions};
/// let expiry = chrono::DateTime::parse_from_rfc3339("2026-11-23T00:00:00Z").unwrap().to_utc();
/// let policy = AccessPolicy::new(TableSasPermissions::READ).with_expiry(expiry);
/// assert_eq!(policy.expiry, Some(expiry));
/// assert_eq!(policy.start, None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AccessPolicy {
    /// When SAS tokens naming the policy become valid.
    pub start: Option<DateTime<Utc>>,
    /// When they stop being valid.
    pub expiry: Option<DateTime<Utc>>,
    /// What they allow (empty: the SAS gives them).
    pub permissions: TableSasPermissions,
}

impl AccessPolicy {
    /// A policy with these permissions and no times.
    pub fn new(permissions: TableSasPermissions) -> Self {
        AccessPolicy { start: None, expiry: None, permissions }
    }

    /// With this start: a `chrono::DateTime<Utc>` or a [`table_model::DateTime`](crate::DateTime).
    #[must_use]
    pub fn with_start(mut self, start: impl Into<DateTime<Utc>>) -> Self {
        self.start = Some(start.into());
        self
    }

    /// With this expiry: a `chrono::DateTime<Utc>` or a [`table_model::DateTime`](crate::DateTime).
    #[must_use]
    pub fn with_expiry(mut self, expiry: impl Into<DateTime<Utc>>) -> Self {
        self.expiry = Some(expiry.into());
        self
    }
}

/// A stored access policy and its identifier, one of at most 5 on a table.
///
/// ```
/// use table_model::sas::{AccessPolicy, SignedIdentifier, TableSasPermissions};
/// let readers = SignedIdentifier::new("readers".parse()?, AccessPolicy::new(TableSasPermissions::READ));
/// assert_eq!(readers.id.as_str(), "readers");
/// # Ok::<(), table_model::SasError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SignedIdentifier {
    /// The identifier a SAS names in `si`.
    pub id: PolicyId,
    /// The policy.
    pub policy: AccessPolicy,
}

impl SignedIdentifier {
    /// A policy under this identifier.
    pub fn new(id: PolicyId, policy: AccessPolicy) -> Self {
        SignedIdentifier { id, policy }
    }
}

/// Checks a table's policies (at most 5, no identifier twice) and writes them as the `SignedIdentifiers`
/// document of `Set Table ACL`.
pub(crate) fn encode_signed_identifiers(list: &[SignedIdentifier]) -> Result<Vec<u8>, SasError> {
    if list.len() > ACCESS_POLICIES_MAX {
        return Err(SasError::new(SasErrorKind::TooManyPolicies { found: list.len() }));
    }
    let mut formatted = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        if list[..i].iter().any(|earlier| earlier.id == s.id) {
            return Err(SasError::new(SasErrorKind::DuplicatePolicyId { id: s.id.to_string() }));
        }
        let start = s.policy.start.as_ref().map(|t| sas_time(t, "Start")).transpose()?;
        let expiry = s.policy.expiry.as_ref().map(|t| sas_time(t, "Expiry")).transpose()?;
        formatted.push((s.id.as_str(), start, expiry, s.policy.permissions.to_string()));
    }
    Ok(xml::write_document("SignedIdentifiers", |w| {
        for (id, start, expiry, permissions) in &formatted {
            w.create_element("SignedIdentifier").write_inner_content(|w| {
                text(w, "Id", id)?;
                w.create_element("AccessPolicy").write_inner_content(|w| {
                    if let Some(start) = start {
                        text(w, "Start", start)?;
                    }
                    if let Some(expiry) = expiry {
                        text(w, "Expiry", expiry)?;
                    }
                    if !permissions.is_empty() {
                        text(w, "Permission", permissions)?;
                    }
                    Ok(())
                })?;
                Ok(())
            })?;
        }
        Ok(())
    }))
}

/// Reads the `SignedIdentifiers` document of `Get Table ACL`; the error says what is wrong with it.
pub(crate) fn decode_signed_identifiers(body: &[u8]) -> Result<Vec<SignedIdentifier>, String> {
    let root = xml::read_tree(body, "access policies")?;
    let mut out = Vec::new();
    for identifier in root.children.iter().filter(|n| n.name == "SignedIdentifier") {
        let id = identifier.child("Id").ok_or("a `SignedIdentifier` has no `Id`")?;
        let id = PolicyId::new(id.text.as_str()).map_err(|e| e.to_string())?;
        let mut policy = AccessPolicy::default();
        if let Some(access) = identifier.child("AccessPolicy") {
            if let Some(start) = access.child("Start") {
                policy.start = read_time(&start.text, "Start")?;
            }
            if let Some(expiry) = access.child("Expiry") {
                policy.expiry = read_time(&expiry.text, "Expiry")?;
            }
            if let Some(permission) = access.child("Permission") {
                let value = &permission.text;
                policy.permissions = TableSasPermissions::parse(value.trim())
                    .map_err(|_| format!("`Permission` {value:?} is not letters of `raud`"))?;
            }
        }
        out.push(SignedIdentifier { id, policy });
    }
    Ok(out)
}

/// A policy's time, as the service writes it (`2026-11-22T00:00:00.0000000Z`), in whole seconds; empty is none.
/// A time whose UTC year is outside 1 to 9999 (`0000-01-01T00:00:00Z`, or `9999-12-31T23:00:00-02:00`) is
/// refused: it could not be written back ([`sas_time`]).
fn read_time(text: &str, field: &str) -> Result<Option<DateTime<Utc>>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let time = DateTime::parse_from_rfc3339(text).map_err(|e| format!("`{field}` {text:?} is not a time: {e}"))?;
    let time = time.to_utc();
    if !(TIME_MIN_YEAR..=TIME_MAX_YEAR).contains(&time.year()) {
        return Err(format!(
            "`{field}` {text:?} is not a time a policy holds: its UTC year {} is outside {TIME_MIN_YEAR} to \
             {TIME_MAX_YEAR}",
            time.year()
        ));
    }
    Ok(DateTime::from_timestamp(time.timestamp(), 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn times_are_chrono_or_table_model_instants() {
        let expiry: crate::DateTime = "2026-11-23T00:00:00Z".parse().unwrap();
        let by_chrono = AccessPolicy::new(TableSasPermissions::READ)
            .with_start(time("2026-11-22T00:00:00Z"))
            .with_expiry(time("2026-11-23T00:00:00Z"));
        let by_date_time = AccessPolicy::new(TableSasPermissions::READ)
            .with_start(crate::DateTime::parse("2026-11-22T00:00:00Z").unwrap())
            .with_expiry(expiry);
        assert_eq!(by_chrono, by_date_time);
        // The SAS builders take either too.
        let table = crate::TableName::from_static("Audit");
        let key = crate::AccountKey::development();
        let sign = |sas: crate::sas::TableSas| sas.sign("devstoreaccount1", &key).unwrap();
        let sas = crate::sas::TableSas::new(table).permissions(TableSasPermissions::READ);
        assert_eq!(
            sign(sas.clone().start(expiry).expiry(expiry.to_chrono() + chrono::Duration::hours(1))),
            sign(sas.start(time("2026-11-23T00:00:00Z")).expiry(time("2026-11-23T01:00:00Z")))
        );
        assert_eq!(
            crate::sas::AccountSas::new(
                crate::sas::AccountSasResourceTypes::OBJECT,
                crate::sas::AccountSasPermissions::READ,
                expiry
            )
            .sign("devstoreaccount1", &key)
            .unwrap(),
            crate::sas::AccountSas::new(
                crate::sas::AccountSasResourceTypes::OBJECT,
                crate::sas::AccountSasPermissions::READ,
                time("2026-11-23T00:00:00Z")
            )
            .sign("devstoreaccount1", &key)
            .unwrap()
        );
    }

    #[test]
    fn writes_the_documented_shape() {
        let list = [
            SignedIdentifier::new(
                PolicyId::new("a<&>\"'").unwrap(),
                AccessPolicy::new(TableSasPermissions::READ | TableSasPermissions::DELETE)
                    .with_start(time("2026-11-22T00:00:00.9Z"))
                    .with_expiry(time("2026-11-23T00:00:00Z")),
            ),
            SignedIdentifier::new(PolicyId::new("empty").unwrap(), AccessPolicy::default()),
        ];
        let xml = String::from_utf8(encode_signed_identifiers(&list).unwrap()).unwrap();
        assert_eq!(
            xml,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier>\
             <Id>a&lt;&amp;&gt;&quot;&apos;</Id><AccessPolicy><Start>2026-11-22T00:00:00Z</Start>\
             <Expiry>2026-11-23T00:00:00Z</Expiry><Permission>rd</Permission></AccessPolicy></SignedIdentifier>\
             <SignedIdentifier><Id>empty</Id><AccessPolicy></AccessPolicy></SignedIdentifier></SignedIdentifiers>"
        );
        let read = decode_signed_identifiers(xml.as_bytes()).unwrap();
        assert_eq!(read[0].policy.start, Some(time("2026-11-22T00:00:00Z")));
        assert_eq!(read[0].id, list[0].id);
        assert_eq!(read[1], list[1]);
        assert_eq!(
            String::from_utf8(encode_signed_identifiers(&[]).unwrap()).unwrap(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers></SignedIdentifiers>"
        );
    }

    #[test]
    fn reads_the_services_answer() {
        // The shape of the REST reference's Get Table ACL response, with the service's seven-digit fractions.
        let body = "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<SignedIdentifiers>\r\n  <SignedIdentifier>\
                    <Id>MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=</Id>\r\n    <AccessPolicy>\
                    <Start>2009-09-28T08:49:37.0000000Z</Start><Expiry>2009-09-29T08:49:37.1234567Z</Expiry>\
                    <Permission>raud</Permission></AccessPolicy></SignedIdentifier>\r\n<SignedIdentifier><Id>x&#x41;\
                    </Id><AccessPolicy/></SignedIdentifier></SignedIdentifiers>";
        let read = decode_signed_identifiers(body.as_bytes()).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].id.as_str(), "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=");
        assert_eq!(read[0].policy.start, Some(time("2009-09-28T08:49:37Z")));
        assert_eq!(read[0].policy.expiry, Some(time("2009-09-29T08:49:37Z")));
        assert_eq!(read[0].policy.permissions, TableSasPermissions::all());
        assert_eq!((read[1].id.as_str(), &read[1].policy), ("xA", &AccessPolicy::default()));
        assert!(decode_signed_identifiers(b"<?xml version=\"1.0\"?><SignedIdentifiers/>").unwrap().is_empty());
    }

    #[test]
    fn refuses_what_is_not_a_policy_list() {
        let e = |body: &str| decode_signed_identifiers(body.as_bytes()).unwrap_err();
        assert!(e("<SignedIdentifiers><SignedIdentifier><AccessPolicy/></SignedIdentifier></SignedIdentifiers>")
            .contains("has no `Id`"));
        assert!(e("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>rw</Permission>\
                   </AccessPolicy></SignedIdentifier></SignedIdentifiers>")
        .contains("`Permission` \"rw\""));
        assert!(e("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>soon</Start>\
                   </AccessPolicy></SignedIdentifier></SignedIdentifiers>")
        .contains("`Start` \"soon\" is not a time"));
        // A time a policy cannot be written back with (its UTC year outside 1 to 9999).
        let start = |time: &str| {
            decode_signed_identifiers(
                format!(
                    "<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>{time}</Start>\
                         </AccessPolicy></SignedIdentifier></SignedIdentifiers>"
                )
                .as_bytes(),
            )
        };
        assert_eq!(
            start("0000-12-31T00:00:00Z").unwrap_err(),
            "`Start` \"0000-12-31T00:00:00Z\" is not a time a policy holds: its UTC year 0 is outside 1 to 9999"
        );
        assert!(start("9999-12-31T23:00:00-02:00").unwrap_err().contains("its UTC year 10000 is outside"));
        assert!(start("0001-01-01T01:00:00+02:00").unwrap_err().contains("its UTC year 0 is outside"));
        let latest = start("9999-12-31T23:59:59.9999999Z").unwrap();
        assert!(encode_signed_identifiers(&latest).is_ok());
        assert!(e("<SignedIdentifiers><SignedIdentifier>").contains("not XML"));
        assert!(e("<a>&nbsp;</a>").contains("unknown XML entity"));
        assert!(decode_signed_identifiers(&[0xff, 0xfe]).unwrap_err().contains("not UTF-8"));
    }

    #[test]
    fn checks_the_list_before_writing_it() {
        let p = |id: &str| SignedIdentifier::new(PolicyId::new(id).unwrap(), AccessPolicy::default());
        let six: Vec<_> = (0..6).map(|i| p(&i.to_string())).collect();
        assert_eq!(
            encode_signed_identifiers(&six).unwrap_err().to_string(),
            "invalid stored access policy list: a table has at most 5 stored access policies, found 6"
        );
        assert!(encode_signed_identifiers(&six[..5]).is_ok());
        assert_eq!(
            encode_signed_identifiers(&[p("a"), p("b"), p("a")]).unwrap_err().to_string(),
            "invalid stored access policy list: identifier `a` is given more than once"
        );
        let far = AccessPolicy::default().with_expiry(DateTime::from_timestamp(253_402_300_800, 0).unwrap());
        let err = encode_signed_identifiers(&[SignedIdentifier::new(PolicyId::new("a").unwrap(), far)]).unwrap_err();
        assert_eq!(err.to_string(), "invalid shared access time: `Expiry` must be in the years 1 to 9999, found 10000");
    }

    #[test]
    fn identifiers() {
        assert!(PolicyId::new("x".repeat(64)).is_ok());
        assert!(PolicyId::new("é".repeat(64)).is_ok());
        assert_eq!(
            PolicyId::new("").unwrap_err().to_string(),
            "invalid stored access policy identifier: must be 1 to 64 characters, found 0"
        );
        assert_eq!(
            PolicyId::new("ab\u{1}").unwrap_err().to_string(),
            "invalid stored access policy identifier: character U+0001 at index 2 is not allowed (a control character)"
        );
    }
}
