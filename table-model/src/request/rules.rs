//! The rules of the service a request is for, beyond Azure Table Storage's (`docs/rules.md` §13.1): checked
//! on every key and custom property name before a request is made. On Azure Table Storage and Azurite every
//! check returns at once.

use super::error::{RequestError, RequestErrorKind};
use crate::{KeyKind, RuleSet, RuleSetError};
use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
use std::fmt;

fn refused(error: RuleSetError, value: &str) -> RequestError {
    RequestError::new(RequestErrorKind::ServiceRule { error, value: value.to_owned() })
}

/// Checks a PartitionKey and a RowKey against the rule set's key limits.
pub(crate) fn check_keys(rules: RuleSet, partition_key: &str, row_key: &str) -> Result<(), RequestError> {
    if rules == RuleSet::Storage {
        return Ok(());
    }
    check_key(rules, KeyKind::Partition, partition_key)?;
    check_key(rules, KeyKind::Row, row_key)
}

/// Checks one key against the rule set's limit for its kind.
pub(crate) fn check_key(rules: RuleSet, kind: KeyKind, key: &str) -> Result<(), RequestError> {
    rules.check_key(kind, key).map_err(|e| refused(e, key))
}

/// Checks an encoded entity: its keys, and the name of every property of its JSON body (a body this crate
/// wrote, whose top-level names are the keys, the properties and their `@odata.type` annotations; none of the
/// fixed names matches a reserved one, so every name is checked as it is).
pub(crate) fn check_entity(
    rules: RuleSet,
    partition_key: &str,
    row_key: &str,
    body: &[u8],
) -> Result<(), RequestError> {
    if rules == RuleSet::Storage {
        return Ok(());
    }
    check_keys(rules, partition_key, row_key)?;
    let mut de = serde_json::Deserializer::from_slice(body);
    match de.deserialize_map(Names(rules)) {
        Ok(result) => result,
        // The body was written by this crate; a body that is not a JSON object has no name to refuse.
        Err(_) => Ok(()),
    }
}

/// Reads the names of a JSON object's members, skipping their values, and checks each one.
struct Names(RuleSet);

impl<'de> Visitor<'de> for Names {
    type Value = Result<(), RequestError>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entity body")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // The first refusal; the rest of the object is still read, as the deserializer expects it to be.
        let mut first = Ok(());
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            map.next_value::<IgnoredAny>()?;
            if first.is_ok() {
                first = self.0.check_property_name(&name).map_err(|e| refused(e, &name));
            }
        }
        Ok(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RuleSetErrorKind, ServiceKind};

    #[test]
    fn storage_takes_what_cosmos_refuses() {
        let long = "r".repeat(256);
        let body = br#"{"PartitionKey":"p","RowKey":"r","ID":1,"ResourceId@odata.type":"Edm.Int64","ResourceId":"1"}"#;
        for kind in [ServiceKind::Storage, ServiceKind::Azurite] {
            assert_eq!(check_keys(kind.rules(), &"p".repeat(1025), &long), Ok(()));
            assert_eq!(check_entity(kind.rules(), "p", &long, body), Ok(()));
        }
        let err = check_entity(RuleSet::CosmosDb, "p", "r", body).unwrap_err();
        let RequestErrorKind::ServiceRule { error, value } = err.kind() else { panic!("{err}") };
        assert_eq!((error.kind(), value.as_str()), (RuleSetErrorKind::ReservedPropertyName { reserved: "ID" }, "ID"));
    }

    #[test]
    fn every_name_of_the_body_is_checked() {
        for name in ["id", "Rid", "ETAG", "resourceId"] {
            let body = format!(r#"{{"PartitionKey":"p","RowKey":"r","A":{{"x":1}},"{name}":"v"}}"#);
            let err = check_entity(RuleSet::Portable, "p", "r", body.as_bytes()).unwrap_err();
            assert!(err.to_string().starts_with(&format!("invalid property name \"{name}\" for both")), "{err}");
        }
        let body = br#"{"PartitionKey":"p","RowKey":"r","Identity":"ID","IDs":[1],"Timestamp":"t"}"#;
        assert_eq!(check_entity(RuleSet::CosmosDb, "p", "r", body), Ok(()));
    }
}
