//! The error of service properties that break a rule.

use std::fmt;

/// Why service properties break a rule (`docs/rules.md` §9.5). Fields are named as the XML document names
/// them (`HourMetrics.RetentionPolicy.Days`); CORS rules by their index in the list, from 0.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServicePropertiesErrorKind {
    /// A retention outside 1 to 365 days.
    RetentionDays {
        /// Whose retention: `Logging`, `HourMetrics` or `MinuteMetrics`.
        field: &'static str,
        /// The days found.
        days: u32,
    },
    /// `IncludeAPIs` missing for enabled metrics (`enabled`), or given for disabled ones.
    IncludeApis {
        /// `HourMetrics` or `MinuteMetrics`.
        field: &'static str,
        /// Whether the metrics are enabled.
        enabled: bool,
    },
    /// A Storage Analytics version that is empty or holds whitespace or a control character.
    Version {
        /// Whose version: `Logging`, `HourMetrics` or `MinuteMetrics`.
        field: &'static str,
        /// The version found.
        version: String,
    },
    /// More than 5 CORS rules.
    TooManyCorsRules {
        /// How many were given.
        found: usize,
    },
    /// A CORS rule without origins or without methods.
    CorsEmpty {
        /// The rule's index.
        rule: usize,
        /// `AllowedOrigins` or `AllowedMethods`.
        field: &'static str,
    },
    /// More than 64 origins, or more than 64 headers named in full.
    CorsCount {
        /// The rule's index.
        rule: usize,
        /// `AllowedOrigins`, `AllowedHeaders` or `ExposedHeaders`.
        field: &'static str,
        /// How many were given.
        found: usize,
        /// The most the service takes.
        max: usize,
    },
    /// More than 2 prefixed headers (`x-ms-meta-*`).
    CorsPrefixedHeaders {
        /// The rule's index.
        rule: usize,
        /// `AllowedHeaders` or `ExposedHeaders`.
        field: &'static str,
        /// How many were given.
        found: usize,
    },
    /// An empty origin, method or header, or one over 256 characters.
    CorsValueLength {
        /// The rule's index.
        rule: usize,
        /// The list it is in.
        field: &'static str,
        /// Its index in the list.
        index: usize,
        /// Its length, in characters.
        chars: usize,
    },
    /// An origin, method or header with a character the comma-separated list cannot carry: `,`, whitespace or
    /// a control character.
    CorsValueCharacter {
        /// The rule's index.
        rule: usize,
        /// The list it is in.
        field: &'static str,
        /// Its index in the list.
        index: usize,
        /// The character.
        ch: char,
    },
    /// A method the service does not take in a CORS rule.
    CorsMethod {
        /// The rule's index.
        rule: usize,
        /// The method found.
        method: String,
    },
    /// CORS rules over 2 KiB in all, without the XML tags.
    CorsTooLarge {
        /// Their size, in bytes.
        bytes: usize,
    },
}

/// The error for service properties that break a rule: nothing is sent.
///
/// ```
/// use table_model::service_properties::{CorsRule, ServiceProperties};
/// use table_model::ServicePropertiesErrorKind;
/// let rule = CorsRule::new(["https://contoso.com"], ["GET"]).with_allowed_headers(["a*", "b*", "c*"]);
/// let err = ServiceProperties::new().with_cors(vec![rule]).check().unwrap_err();
/// assert!(matches!(err.kind(), ServicePropertiesErrorKind::CorsPrefixedHeaders { rule: 0, found: 3, .. }));
/// assert_eq!(
///     err.to_string(),
///     "invalid service properties: CORS rule 0: `AllowedHeaders` has 3 prefixed headers, at most 2"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePropertiesError {
    kind: ServicePropertiesErrorKind,
}

impl ServicePropertiesError {
    pub(crate) fn new(kind: ServicePropertiesErrorKind) -> Self {
        ServicePropertiesError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &ServicePropertiesErrorKind {
        &self.kind
    }
}

impl fmt::Display for ServicePropertiesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::limits::{
            CORS_PREFIXED_HEADERS_MAX, CORS_RULES_MAX, CORS_RULES_MAX_BYTES, CORS_VALUE_MAX_CHARS, RETENTION_DAYS_MAX,
            RETENTION_DAYS_MIN,
        };
        f.write_str("invalid service properties: ")?;
        match &self.kind {
            ServicePropertiesErrorKind::RetentionDays { field, days } => write!(
                f,
                "`{field}.RetentionPolicy.Days` must be {RETENTION_DAYS_MIN} to {RETENTION_DAYS_MAX}, found {days}"
            ),
            ServicePropertiesErrorKind::IncludeApis { field, enabled: true } => {
                write!(f, "`{field}.IncludeAPIs` is required when `{field}.Enabled` is true")
            }
            ServicePropertiesErrorKind::IncludeApis { field, enabled: false } => {
                write!(
                    f,
                    "`{field}.IncludeAPIs` is given while `{field}.Enabled` is false; give it only for enabled \
                     metrics"
                )
            }
            ServicePropertiesErrorKind::Version { field, version } => write!(
                f,
                "`{field}.Version` must be a Storage Analytics version such as `1.0` (not empty, no whitespace or control \
                 character), found {version:?}"
            ),
            ServicePropertiesErrorKind::TooManyCorsRules { found } => {
                write!(f, "`Cors` has {found} rules, at most {CORS_RULES_MAX}")
            }
            ServicePropertiesErrorKind::CorsEmpty { rule, field } => {
                write!(f, "CORS rule {rule}: `{field}` is empty; give at least one")
            }
            ServicePropertiesErrorKind::CorsCount { rule, field, found, max } => {
                let what = if *field == "AllowedOrigins" { "origins" } else { "headers named in full" };
                write!(f, "CORS rule {rule}: `{field}` has {found} {what}, at most {max}")
            }
            ServicePropertiesErrorKind::CorsPrefixedHeaders { rule, field, found } => write!(
                f,
                "CORS rule {rule}: `{field}` has {found} prefixed headers, at most {CORS_PREFIXED_HEADERS_MAX}"
            ),
            ServicePropertiesErrorKind::CorsValueLength { rule, field, index, chars } => write!(
                f,
                "CORS rule {rule}: `{field}` value {index} must be 1 to {CORS_VALUE_MAX_CHARS} characters, found {chars}"
            ),
            ServicePropertiesErrorKind::CorsValueCharacter { rule, field, index, ch } => {
                let shown = table_model_rules::DisplayChar(*ch);
                write!(
                    f,
                    "CORS rule {rule}: `{field}` value {index} has character {shown}, which a comma-separated list \
                     cannot carry"
                )
            }
            ServicePropertiesErrorKind::CorsMethod { rule, method } => write!(
                f,
                "CORS rule {rule}: `AllowedMethods` has `{method}`; the service takes DELETE, GET, HEAD, MERGE, POST, \
                 OPTIONS and PUT"
            ),
            ServicePropertiesErrorKind::CorsTooLarge { bytes } => write!(
                f,
                "`Cors` rules must be at most {CORS_RULES_MAX_BYTES} bytes in all without the XML tags, found {bytes}"
            ),
        }
    }
}

impl std::error::Error for ServicePropertiesError {}
