//! The service's error codes as an enum (`docs/rules.md` §11): the `x-ms-error-code` header, or the `code` of
//! the error body, of every failed request.
//!
//! Layer: wire.

use std::fmt;
use std::str::FromStr;

macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident,)*) => {
        /// A documented error code of the Table service or of Azure Storage in general, with [`ErrorCode::Other`]
        /// for any other code, so that matching on a service error is one `match` arm.
        ///
        /// Codes are matched exactly as the service spells them; an unknown code keeps its text.
        ///
        /// ```
        /// use table_model::ErrorCode;
        /// let code: ErrorCode = "UpdateConditionNotSatisfied".parse().unwrap();
        /// assert_eq!(code, ErrorCode::UpdateConditionNotSatisfied);
        /// assert_eq!(code.as_str(), "UpdateConditionNotSatisfied");
        /// assert_eq!(ErrorCode::from("SomethingNew"), ErrorCode::Other("SomethingNew".into()));
        /// assert!(ErrorCode::ServerBusy.is_transient());
        /// ```
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
            /// A code this crate does not list, as the service sent it.
            Other(Box<str>),
        }

        impl ErrorCode {
            /// The code as the service spells it.
            pub fn as_str(&self) -> &str {
                match self {
                    $(ErrorCode::$variant => stringify!($variant),)*
                    ErrorCode::Other(code) => code,
                }
            }

            fn known(code: &str) -> Option<ErrorCode> {
                Some(match code {
                    $(stringify!($variant) => ErrorCode::$variant,)*
                    _ => return None,
                })
            }

            /// Every listed code (not [`ErrorCode::Other`]), in the order of the documentation above.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];
        }
    };
}

error_codes! {
    // Table service codes.
    /// 409: an insert of an entity that exists (the key pair is taken).
    EntityAlreadyExists,
    /// 404: the entity does not exist (some versions and emulators say `ResourceNotFound`).
    EntityNotFound,
    /// 413 or 400: the entity is over 1 MiB.
    EntityTooLarge,
    /// 400: the same property twice in one entity.
    DuplicatePropertiesSpecified,
    /// 400: one entity twice in one batch.
    InvalidDuplicateRow,
    /// 400: a property value does not match its declared type.
    InvalidValueType,
    /// 415: the JSON format asked for is not supported.
    JsonFormatNotSupported,
    /// 415: Atom is not supported (Cosmos DB Table API).
    AtomFormatNotSupported,
    /// 405: the method is not allowed on this resource.
    MethodNotAllowed,
    /// 501: the operation is not implemented.
    NotImplemented,
    /// 400: a property has no value.
    PropertiesNeedValue,
    /// 400: a property name is not valid.
    PropertyNameInvalid,
    /// 400: a property name is over 255 characters.
    PropertyNameTooLong,
    /// 400: a property value is over 64 KiB.
    PropertyValueTooLarge,
    /// 409: a create of a table that exists.
    TableAlreadyExists,
    /// 409: the table is being deleted; it can be created again later.
    TableBeingDeleted,
    /// 404: the table does not exist.
    TableNotFound,
    /// 400: more than 252 custom properties.
    TooManyProperties,
    /// 412: the ETag given in `If-Match` is no longer the entity's (optimistic concurrency lost).
    UpdateConditionNotSatisfied,
    /// 400: more than one `X-HTTP-Method` header.
    XMethodIncorrectCount,
    /// 400: an `X-HTTP-Method` value that is not a method.
    XMethodIncorrectValue,
    /// 400: `X-HTTP-Method` on a request that is not a `POST`.
    XMethodNotUsingPost,
    // Azure Storage codes common to every service.
    /// 403: the account is disabled.
    AccountIsDisabled,
    /// 403: the signature or the credential was not accepted.
    AuthenticationFailed,
    /// 403: the credential may not perform this operation.
    AuthorizationFailure,
    /// 403: the SAS does not grant the permission the operation needs.
    AuthorizationPermissionMismatch,
    /// 403: the SAS does not allow this protocol.
    AuthorizationProtocolMismatch,
    /// 403: the SAS does not cover this resource type.
    AuthorizationResourceTypeMismatch,
    /// 403: the SAS does not cover this service.
    AuthorizationServiceMismatch,
    /// 403: the SAS does not allow this client address.
    AuthorizationSourceIPMismatch,
    /// 412: a precondition header was not met.
    ConditionNotMet,
    /// 403: the account may not perform this operation.
    InsufficientAccountPermissions,
    /// 500: the server met an internal error; the request can be retried.
    InternalError,
    /// 400: the authentication information is malformed.
    InvalidAuthenticationInfo,
    /// 400: a header value is not valid.
    InvalidHeaderValue,
    /// 400: the HTTP verb is not recognised.
    InvalidHttpVerb,
    /// 400: one of the request inputs is not valid (also a malformed filter or body).
    InvalidInput,
    /// 400: a query parameter value is not valid.
    InvalidQueryParameterValue,
    /// 400: a resource name is not valid (for example a table name).
    InvalidResourceName,
    /// 400: the URI is not valid.
    InvalidUri,
    /// 400: the XML body is not valid.
    InvalidXmlDocument,
    /// 411: the `Content-Length` header is missing.
    MissingContentLengthHeader,
    /// 400: a required header is missing.
    MissingRequiredHeader,
    /// 400: a required query parameter is missing.
    MissingRequiredQueryParameter,
    /// 500: the operation did not complete in the permitted time; it may or may not have been applied.
    OperationTimedOut,
    /// 400: an input is out of range (for example a DateTime before 1601 or a key too long).
    OutOfRangeInput,
    /// 400: a query parameter is out of range (for example `$top` over 1,000).
    OutOfRangeQueryParameterValue,
    /// 413: the request body is too large (for example a batch over 4 MiB).
    RequestBodyTooLarge,
    /// 400: the request URL could not be parsed.
    RequestUrlFailedToParse,
    /// 409: the resource exists.
    ResourceAlreadyExists,
    /// 404: the resource does not exist (an entity or a table).
    ResourceNotFound,
    /// 409: the resource is not of the expected type.
    ResourceTypeMismatch,
    /// 503: the server is busy (throttling); retry after a back-off.
    ServerBusy,
    /// 429: too many requests (the Cosmos DB Table API's throttling, "Request rate is large").
    TooManyRequests,
    /// 400: a header is not supported.
    UnsupportedHeader,
    /// 405: the HTTP verb is not supported.
    UnsupportedHttpVerb,
    /// 400: a query parameter is not supported.
    UnsupportedQueryParameter,
}

impl ErrorCode {
    /// Whether the code says the request may succeed if sent again after a back-off: `ServerBusy`,
    /// `InternalError`, `TooManyRequests` and `OperationTimedOut`.
    ///
    /// `OperationTimedOut` is transient, but a write that timed out may have been applied: whether it is safe
    /// to send it again depends on the operation, not on the code.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ErrorCode::ServerBusy
                | ErrorCode::InternalError
                | ErrorCode::TooManyRequests
                | ErrorCode::OperationTimedOut
        )
    }
}

impl From<&str> for ErrorCode {
    fn from(code: &str) -> Self {
        ErrorCode::known(code).unwrap_or_else(|| ErrorCode::Other(code.into()))
    }
}

impl FromStr for ErrorCode {
    type Err = std::convert::Infallible;
    fn from_str(code: &str) -> Result<Self, Self::Err> {
        Ok(ErrorCode::from(code))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_text() {
        for code in ErrorCode::ALL {
            assert_eq!(&ErrorCode::from(code.as_str()), code);
            assert!(!matches!(code, ErrorCode::Other(_)));
        }
        assert_eq!(ErrorCode::ALL.len(), 57);
    }

    #[test]
    fn unknown_and_differently_cased_codes_are_other() {
        assert_eq!(ErrorCode::from("entityalreadyexists"), ErrorCode::Other("entityalreadyexists".into()));
        assert_eq!(ErrorCode::from("").as_str(), "");
        assert_eq!(ErrorCode::from("X").to_string(), "X");
        assert!(!ErrorCode::UpdateConditionNotSatisfied.is_transient());
        assert!(ErrorCode::OperationTimedOut.is_transient());
    }
}
