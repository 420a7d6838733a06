//! The Table service's account-wide settings and the statistics of its secondary (`docs/rules.md` §9.5):
//! Storage Analytics logging, hour and minute metrics and CORS rules
//! ([`TableService::get_service_properties`](crate::TableService::get_service_properties) and
//! [`set_service_properties`](crate::TableService::set_service_properties), `?restype=service&comp=properties`),
//! and geo-replication ([`TableService::get_service_stats`](crate::TableService::get_service_stats),
//! `?restype=service&comp=stats`), with their XML documents. Azure Table Storage and Azurite serve them; the
//! Cosmos DB Table API does not, and requests for a Cosmos DB endpoint are refused before they are built.
//!
//! ```
//! use table_model::service_properties::{AnalyticsLogging, CorsRule, Metrics, RetentionPolicy, ServiceProperties};
//! let properties = ServiceProperties::new()
//!     .with_logging(AnalyticsLogging::new(RetentionPolicy::Days(7)).with_write(true).with_delete(true))
//!     .with_hour_metrics(Metrics::enabled(true, RetentionPolicy::Days(30)))
//!     .with_cors(vec![CorsRule::new(["https://contoso.com"], ["GET", "PUT"]).with_max_age(600)]);
//! assert!(properties.check().is_ok());
//! // Left out: the minute metrics stay as the service has them.
//! assert_eq!(properties.minute_metrics, None);
//!
//! let too_long = ServiceProperties::new().with_minute_metrics(Metrics::enabled(false, RetentionPolicy::Days(400)));
//! assert_eq!(
//!     too_long.check().unwrap_err().to_string(),
//!     "invalid service properties: `MinuteMetrics.RetentionPolicy.Days` must be 1 to 365, found 400"
//! );
//! ```
//!
//! Layer: wire.

pub(crate) mod error;

use crate::limits::{
    CORS_HEADERS_MAX, CORS_METHODS, CORS_ORIGINS_MAX, CORS_PREFIXED_HEADERS_MAX, CORS_RULES_MAX, CORS_RULES_MAX_BYTES,
    CORS_VALUE_MAX_CHARS, RETENTION_DAYS_MAX, RETENTION_DAYS_MIN, TIME_MAX_YEAR, TIME_MIN_YEAR,
};
use crate::xml::{self, read_tree, text, Node, XmlWriter};
use chrono::{DateTime, Datelike as _, Utc};
use error::{ServicePropertiesError, ServicePropertiesErrorKind};

/// The Storage Analytics version the service knows, and the one the constructors set.
///
/// ```
/// use table_model::service_properties::{Metrics, ANALYTICS_VERSION};
/// assert_eq!(Metrics::disabled().version, ANALYTICS_VERSION);
/// ```
pub const ANALYTICS_VERSION: &str = "1.0";

/// The Table service's properties: each part is optional. A part left out of a set is left as the service
/// has it (a partial update, as the service documents); a part the service's answer does not carry is `None`.
///
/// ```
/// use table_model::service_properties::{Metrics, RetentionPolicy, ServiceProperties};
/// let only_metrics = ServiceProperties::new().with_hour_metrics(Metrics::disabled());
/// assert_eq!((only_metrics.logging, only_metrics.cors), (None, None));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ServiceProperties {
    /// Storage Analytics logging (`Logging`).
    pub logging: Option<AnalyticsLogging>,
    /// Request statistics in hourly aggregates (`HourMetrics`).
    pub hour_metrics: Option<Metrics>,
    /// Request statistics in minute aggregates (`MinuteMetrics`).
    pub minute_metrics: Option<Metrics>,
    /// The CORS rules (`Cors`), at most 5; an empty list removes every rule, which turns CORS off.
    pub cors: Option<Vec<CorsRule>>,
}

impl ServiceProperties {
    /// Properties with no part set: sending them changes nothing.
    pub fn new() -> Self {
        ServiceProperties::default()
    }

    /// With this logging.
    #[must_use]
    pub fn with_logging(mut self, logging: AnalyticsLogging) -> Self {
        self.logging = Some(logging);
        self
    }

    /// With these hour metrics.
    #[must_use]
    pub fn with_hour_metrics(mut self, metrics: Metrics) -> Self {
        self.hour_metrics = Some(metrics);
        self
    }

    /// With these minute metrics.
    #[must_use]
    pub fn with_minute_metrics(mut self, metrics: Metrics) -> Self {
        self.minute_metrics = Some(metrics);
        self
    }

    /// With these CORS rules, replacing every rule the service has (none: CORS off).
    #[must_use]
    pub fn with_cors(mut self, rules: Vec<CorsRule>) -> Self {
        self.cors = Some(rules);
        self
    }

    /// Checks every rule the service documents for these properties (`docs/rules.md` §9.5); the request
    /// builder runs it before anything is sent.
    ///
    /// ```
    /// use table_model::service_properties::{CorsRule, ServiceProperties};
    /// let rule = CorsRule::new(["https://contoso.com"], ["GET", "TRACE"]);
    /// let err = ServiceProperties::new().with_cors(vec![rule]).check().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid service properties: CORS rule 0: `AllowedMethods` has `TRACE`; the service takes \
    ///      DELETE, GET, HEAD, MERGE, POST, OPTIONS and PUT"
    /// );
    /// ```
    ///
    /// # Errors
    /// [`ServicePropertiesErrorKind`] names the field and the rule broken: retention days outside 1 to 365,
    /// `IncludeAPIs` missing for enabled metrics or given for disabled ones, an empty or unwritable `Version`,
    /// more than 5 CORS rules, a rule without origins or methods, over 64 origins or headers, over 2 prefixed
    /// headers, a value over 256 characters or holding a `,`, whitespace or a control character, a method the
    /// service does not take, or rules over 2 KiB in all.
    pub fn check(&self) -> Result<(), ServicePropertiesError> {
        if let Some(logging) = &self.logging {
            check_version("Logging", &logging.version)?;
            logging.retention_policy.check("Logging")?;
        }
        for (field, metrics) in [("HourMetrics", &self.hour_metrics), ("MinuteMetrics", &self.minute_metrics)] {
            if let Some(metrics) = metrics {
                metrics.check(field)?;
            }
        }
        if let Some(rules) = &self.cors {
            check_cors(rules)?;
        }
        Ok(())
    }
}

/// Storage Analytics logging: which requests are logged, and for how long the logs are kept.
///
/// ```
/// use table_model::service_properties::{AnalyticsLogging, RetentionPolicy};
/// let writes = AnalyticsLogging::new(RetentionPolicy::Days(14)).with_write(true).with_delete(true);
/// assert_eq!((writes.read, writes.write, writes.delete), (false, true, true));
/// assert_eq!(writes.version, "1.0");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AnalyticsLogging {
    /// The Storage Analytics version (`1.0`).
    pub version: String,
    /// Whether delete requests are logged.
    pub delete: bool,
    /// Whether read requests are logged.
    pub read: bool,
    /// Whether write requests are logged.
    pub write: bool,
    /// How long the logs are kept.
    pub retention_policy: RetentionPolicy,
}

impl AnalyticsLogging {
    /// Logging of no request (version `1.0`), its logs kept as given; turn kinds of request on with
    /// [`with_read`](Self::with_read), [`with_write`](Self::with_write) and [`with_delete`](Self::with_delete).
    pub fn new(retention_policy: RetentionPolicy) -> Self {
        AnalyticsLogging {
            version: ANALYTICS_VERSION.to_owned(),
            delete: false,
            read: false,
            write: false,
            retention_policy,
        }
    }

    /// Whether read requests are logged.
    #[must_use]
    pub fn with_read(mut self, read: bool) -> Self {
        self.read = read;
        self
    }

    /// Whether write requests are logged.
    #[must_use]
    pub fn with_write(mut self, write: bool) -> Self {
        self.write = write;
        self
    }

    /// Whether delete requests are logged.
    #[must_use]
    pub fn with_delete(mut self, delete: bool) -> Self {
        self.delete = delete;
        self
    }
}

/// Hour or minute metrics: request statistics, with or without a breakdown by API.
///
/// ```
/// use table_model::service_properties::{Metrics, RetentionPolicy};
/// let on = Metrics::enabled(true, RetentionPolicy::Days(7));
/// assert_eq!((on.enabled, on.include_apis), (true, Some(true)));
/// let off = Metrics::disabled();
/// assert_eq!((off.enabled, off.include_apis, off.retention_policy), (false, None, RetentionPolicy::Disabled));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Metrics {
    /// The Storage Analytics version (`1.0`).
    pub version: String,
    /// Whether metrics are collected.
    pub enabled: bool,
    /// Whether they break statistics down by API: required when `enabled`, and only then.
    pub include_apis: Option<bool>,
    /// How long the metrics are kept.
    pub retention_policy: RetentionPolicy,
}

impl Metrics {
    /// Metrics collected (version `1.0`), broken down by API or not, kept as given.
    pub fn enabled(include_apis: bool, retention_policy: RetentionPolicy) -> Self {
        Metrics {
            version: ANALYTICS_VERSION.to_owned(),
            enabled: true,
            include_apis: Some(include_apis),
            retention_policy,
        }
    }

    /// No metrics (version `1.0`), no retention.
    pub fn disabled() -> Self {
        Metrics {
            version: ANALYTICS_VERSION.to_owned(),
            enabled: false,
            include_apis: None,
            retention_policy: RetentionPolicy::Disabled,
        }
    }

    fn check(&self, field: &'static str) -> Result<(), ServicePropertiesError> {
        check_version(field, &self.version)?;
        match (self.enabled, self.include_apis) {
            (true, None) | (false, Some(_)) => {
                return Err(ServicePropertiesError::new(ServicePropertiesErrorKind::IncludeApis {
                    field,
                    enabled: self.enabled,
                }));
            }
            _ => {}
        }
        self.retention_policy.check(field)
    }
}

/// How long logs or metrics are kept: not deleted by age, or deleted after 1 to 365 days.
///
/// ```
/// use table_model::service_properties::RetentionPolicy;
/// assert_eq!(RetentionPolicy::Days(7).days(), Some(7));
/// assert_eq!(RetentionPolicy::Disabled.days(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetentionPolicy {
    /// Kept until deleted by hand (`<Enabled>false</Enabled>`).
    Disabled,
    /// Deleted once older than this many days, 1 to 365 (`<Enabled>true</Enabled><Days>n</Days>`).
    Days(u32),
}

impl RetentionPolicy {
    /// The days kept, when a retention is set.
    pub fn days(self) -> Option<u32> {
        match self {
            RetentionPolicy::Disabled => None,
            RetentionPolicy::Days(days) => Some(days),
        }
    }

    fn check(self, field: &'static str) -> Result<(), ServicePropertiesError> {
        match self {
            RetentionPolicy::Days(days) if !(RETENTION_DAYS_MIN..=RETENTION_DAYS_MAX).contains(&days) => {
                Err(ServicePropertiesError::new(ServicePropertiesErrorKind::RetentionDays { field, days }))
            }
            _ => Ok(()),
        }
    }
}

/// One CORS rule: which origins may call the service from a browser, with which methods and headers, and
/// how long a browser may cache the preflight answer. On the wire each list is comma-separated.
///
/// ```
/// use table_model::service_properties::CorsRule;
/// let rule = CorsRule::new(["https://contoso.com", "https://fabrikam.com"], ["GET", "MERGE"])
///     .with_allowed_headers(["x-ms-meta-*", "content-type"])
///     .with_exposed_headers(["x-ms-request-id"])
///     .with_max_age(3600);
/// assert_eq!(rule.allowed_origins.len(), 2);
/// assert_eq!(rule.max_age_in_seconds, 3600);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CorsRule {
    /// The origins allowed (`https://contoso.com`), or `*` for any: 1 to 64, each up to 256 characters.
    pub allowed_origins: Vec<String>,
    /// The methods allowed: at least one of `DELETE`, `GET`, `HEAD`, `MERGE`, `POST`, `OPTIONS` and `PUT`.
    pub allowed_methods: Vec<String>,
    /// The request headers allowed: up to 64 names and 2 prefixes (`x-ms-meta-*`), each up to 256 characters.
    pub allowed_headers: Vec<String>,
    /// The response headers a browser shows the caller, with the limits of `allowed_headers`.
    pub exposed_headers: Vec<String>,
    /// How long a browser may cache the answer to a preflight request, in seconds.
    pub max_age_in_seconds: u32,
}

impl CorsRule {
    /// A rule for these origins and methods, with no headers and no preflight caching.
    pub fn new<O, M>(origins: impl IntoIterator<Item = O>, methods: impl IntoIterator<Item = M>) -> Self
    where
        O: Into<String>,
        M: Into<String>,
    {
        CorsRule {
            allowed_origins: origins.into_iter().map(Into::into).collect(),
            allowed_methods: methods.into_iter().map(Into::into).collect(),
            allowed_headers: Vec::new(),
            exposed_headers: Vec::new(),
            max_age_in_seconds: 0,
        }
    }

    /// With these allowed request headers.
    #[must_use]
    pub fn with_allowed_headers<H: Into<String>>(mut self, headers: impl IntoIterator<Item = H>) -> Self {
        self.allowed_headers = headers.into_iter().map(Into::into).collect();
        self
    }

    /// With these exposed response headers.
    #[must_use]
    pub fn with_exposed_headers<H: Into<String>>(mut self, headers: impl IntoIterator<Item = H>) -> Self {
        self.exposed_headers = headers.into_iter().map(Into::into).collect();
        self
    }

    /// With this preflight cache age, in seconds.
    #[must_use]
    pub fn with_max_age(mut self, seconds: u32) -> Self {
        self.max_age_in_seconds = seconds;
        self
    }
}

/// The statistics of the secondary location of a geo-redundant account (read-access geo-redundant
/// replication): the `StorageServiceStats` document of `Get Table Service Stats`.
///
/// ```
/// use table_model::service_properties::{GeoReplicationStatus, ServiceStats};
/// let stats = ServiceStats::default();
/// assert!(stats.geo_replication.is_none());
/// assert_eq!(GeoReplicationStatus::from("live"), GeoReplicationStatus::Live);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ServiceStats {
    /// The replication to the secondary, when the answer carries it.
    pub geo_replication: Option<GeoReplication>,
}

/// The state of the replication to the secondary location.
///
/// ```
/// use table_model::response;
/// use table_model::service_properties::GeoReplicationStatus;
/// let body = "<StorageServiceStats><GeoReplication><Status>bootstrap</Status><LastSyncTime/></GeoReplication>\
///             </StorageServiceStats>";
/// let geo = response::service_stats(&http::Response::new(body))?.geo_replication.unwrap();
/// assert_eq!((geo.status, geo.last_sync_time), (GeoReplicationStatus::Bootstrap, None));
/// # Ok::<(), table_model::ResponseError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct GeoReplication {
    /// Whether the secondary is live.
    pub status: GeoReplicationStatus,
    /// Every write to the primary before this time can be read on the secondary (later ones may be); `None`
    /// when the service gives no time (while the secondary is bootstrapping or unavailable).
    pub last_sync_time: Option<DateTime<Utc>>,
}

/// The status of the secondary location; a status this crate does not know is kept as it was sent.
///
/// ```
/// use table_model::service_properties::GeoReplicationStatus;
/// assert_eq!(GeoReplicationStatus::from("bootstrap"), GeoReplicationStatus::Bootstrap);
/// assert_eq!(GeoReplicationStatus::from("paused"), GeoReplicationStatus::Other("paused".to_owned()));
/// assert_eq!(GeoReplicationStatus::Unavailable.as_str(), "unavailable");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GeoReplicationStatus {
    /// The secondary is active and operational (`live`).
    Live,
    /// The initial synchronization from the primary is in progress (`bootstrap`).
    Bootstrap,
    /// The secondary is unavailable (`unavailable`).
    Unavailable,
    /// Another status, as the service wrote it.
    Other(String),
}

impl GeoReplicationStatus {
    /// The status as the service writes it.
    pub fn as_str(&self) -> &str {
        match self {
            GeoReplicationStatus::Live => "live",
            GeoReplicationStatus::Bootstrap => "bootstrap",
            GeoReplicationStatus::Unavailable => "unavailable",
            GeoReplicationStatus::Other(other) => other,
        }
    }
}

impl From<&str> for GeoReplicationStatus {
    fn from(status: &str) -> Self {
        match status {
            "live" => GeoReplicationStatus::Live,
            "bootstrap" => GeoReplicationStatus::Bootstrap,
            "unavailable" => GeoReplicationStatus::Unavailable,
            other => GeoReplicationStatus::Other(other.to_owned()),
        }
    }
}

fn error(kind: ServicePropertiesErrorKind) -> ServicePropertiesError {
    ServicePropertiesError::new(kind)
}

/// A version must be written, and written as XML 1.0 can carry it.
fn check_version(field: &'static str, version: &str) -> Result<(), ServicePropertiesError> {
    if version.is_empty() || version.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(error(ServicePropertiesErrorKind::Version { field, version: version.to_owned() }));
    }
    Ok(())
}

fn check_cors(rules: &[CorsRule]) -> Result<(), ServicePropertiesError> {
    if rules.len() > CORS_RULES_MAX {
        return Err(error(ServicePropertiesErrorKind::TooManyCorsRules { found: rules.len() }));
    }
    let mut bytes = 0;
    for (rule, r) in rules.iter().enumerate() {
        for (field, values) in [("AllowedOrigins", &r.allowed_origins), ("AllowedMethods", &r.allowed_methods)] {
            if values.is_empty() {
                return Err(error(ServicePropertiesErrorKind::CorsEmpty { rule, field }));
            }
        }
        if r.allowed_origins.len() > CORS_ORIGINS_MAX {
            return Err(error(ServicePropertiesErrorKind::CorsCount {
                rule,
                field: "AllowedOrigins",
                found: r.allowed_origins.len(),
                max: CORS_ORIGINS_MAX,
            }));
        }
        for (field, values) in [
            ("AllowedOrigins", &r.allowed_origins),
            ("AllowedMethods", &r.allowed_methods),
            ("AllowedHeaders", &r.allowed_headers),
            ("ExposedHeaders", &r.exposed_headers),
        ] {
            for (index, value) in values.iter().enumerate() {
                check_cors_value(rule, field, index, value)?;
            }
            bytes += joined_len(values);
        }
        if let Some(method) = r.allowed_methods.iter().find(|m| !CORS_METHODS.contains(&m.as_str())) {
            return Err(error(ServicePropertiesErrorKind::CorsMethod { rule, method: method.clone() }));
        }
        for (field, headers) in [("AllowedHeaders", &r.allowed_headers), ("ExposedHeaders", &r.exposed_headers)] {
            let prefixed = headers.iter().filter(|h| is_prefixed(h)).count();
            let defined = headers.len() - prefixed;
            if defined > CORS_HEADERS_MAX {
                return Err(error(ServicePropertiesErrorKind::CorsCount {
                    rule,
                    field,
                    found: defined,
                    max: CORS_HEADERS_MAX,
                }));
            }
            if prefixed > CORS_PREFIXED_HEADERS_MAX {
                return Err(error(ServicePropertiesErrorKind::CorsPrefixedHeaders { rule, field, found: prefixed }));
            }
        }
        bytes += r.max_age_in_seconds.to_string().len();
    }
    if bytes > CORS_RULES_MAX_BYTES {
        return Err(error(ServicePropertiesErrorKind::CorsTooLarge { bytes }));
    }
    Ok(())
}

/// A header given by its prefix (`x-ms-meta-*`); `*` alone allows every header and is not one.
fn is_prefixed(header: &str) -> bool {
    header.len() > 1 && header.ends_with('*')
}

/// The length of a comma-separated list as written.
fn joined_len(values: &[String]) -> usize {
    values.iter().map(String::len).sum::<usize>() + values.len().saturating_sub(1)
}

fn check_cors_value(rule: usize, field: &'static str, index: usize, value: &str) -> Result<(), ServicePropertiesError> {
    let chars = value.chars().count();
    if chars == 0 || chars > CORS_VALUE_MAX_CHARS {
        return Err(error(ServicePropertiesErrorKind::CorsValueLength { rule, field, index, chars }));
    }
    if let Some(ch) = value.chars().find(|&c| c == ',' || c.is_whitespace() || c.is_control()) {
        return Err(error(ServicePropertiesErrorKind::CorsValueCharacter { rule, field, index, ch }));
    }
    Ok(())
}

/// Checks the properties and writes the `StorageServiceProperties` document of `Set Table Service Properties`:
/// only the parts that are set.
pub(crate) fn encode_service_properties(properties: &ServiceProperties) -> Result<Vec<u8>, ServicePropertiesError> {
    properties.check()?;
    Ok(xml::write_document("StorageServiceProperties", |w| {
        let retention = |w: &mut XmlWriter, policy: RetentionPolicy| -> std::io::Result<()> {
            w.create_element("RetentionPolicy").write_inner_content(|w| {
                text(w, "Enabled", bool_text(policy.days().is_some()))?;
                if let Some(days) = policy.days() {
                    text(w, "Days", &days.to_string())?;
                }
                Ok(())
            })?;
            Ok(())
        };
        if let Some(logging) = &properties.logging {
            w.create_element("Logging").write_inner_content(|w| {
                text(w, "Version", &logging.version)?;
                text(w, "Delete", bool_text(logging.delete))?;
                text(w, "Read", bool_text(logging.read))?;
                text(w, "Write", bool_text(logging.write))?;
                retention(w, logging.retention_policy)
            })?;
        }
        for (name, metrics) in
            [("HourMetrics", &properties.hour_metrics), ("MinuteMetrics", &properties.minute_metrics)]
        {
            if let Some(metrics) = metrics {
                w.create_element(name).write_inner_content(|w| {
                    text(w, "Version", &metrics.version)?;
                    text(w, "Enabled", bool_text(metrics.enabled))?;
                    if let Some(include) = metrics.include_apis {
                        text(w, "IncludeAPIs", bool_text(include))?;
                    }
                    retention(w, metrics.retention_policy)
                })?;
            }
        }
        if let Some(rules) = &properties.cors {
            w.create_element("Cors").write_inner_content(|w| {
                for rule in rules {
                    w.create_element("CorsRule").write_inner_content(|w| {
                        text(w, "AllowedOrigins", &rule.allowed_origins.join(","))?;
                        text(w, "AllowedMethods", &rule.allowed_methods.join(","))?;
                        text(w, "MaxAgeInSeconds", &rule.max_age_in_seconds.to_string())?;
                        text(w, "ExposedHeaders", &rule.exposed_headers.join(","))?;
                        text(w, "AllowedHeaders", &rule.allowed_headers.join(","))
                    })?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }))
}

fn bool_text(value: bool) -> &'static str {
    if value {
        "true"
    } else {
        "false"
    }
}

/// Reads the `StorageServiceProperties` document of `Get Table Service Properties`; elements it does not
/// know are skipped, parts it does not carry are `None`.
pub(crate) fn decode_service_properties(body: &[u8]) -> Result<ServiceProperties, String> {
    let root = read_tree(body, "service properties")?;
    if root.name != "StorageServiceProperties" {
        return Err(format!("the root element is `<{}>`, expected `<StorageServiceProperties>`", root.name));
    }
    let mut properties = ServiceProperties::new();
    if let Some(node) = root.child("Logging") {
        properties.logging = Some(AnalyticsLogging {
            version: node.required("Logging", "Version")?.text.trim().to_owned(),
            delete: node.bool("Logging", "Delete")?,
            read: node.bool("Logging", "Read")?,
            write: node.bool("Logging", "Write")?,
            retention_policy: read_retention(node, "Logging")?,
        });
    }
    for (name, slot) in
        [("HourMetrics", &mut properties.hour_metrics), ("MinuteMetrics", &mut properties.minute_metrics)]
    {
        if let Some(node) = root.child(name) {
            let include_apis = match node.child("IncludeAPIs") {
                Some(_) => Some(node.bool(name, "IncludeAPIs")?),
                None => None,
            };
            *slot = Some(Metrics {
                version: node.required(name, "Version")?.text.trim().to_owned(),
                enabled: node.bool(name, "Enabled")?,
                include_apis,
                retention_policy: read_retention(node, name)?,
            });
        }
    }
    if let Some(node) = root.child("Cors") {
        let mut rules = Vec::new();
        for (i, rule) in node.children.iter().filter(|c| c.name == "CorsRule").enumerate() {
            let path = format!("Cors.CorsRule[{i}]");
            let list = |name: &str| rule.child(name).map(|n| split_list(&n.text)).unwrap_or_default();
            rule.required(&path, "AllowedOrigins")?;
            rule.required(&path, "AllowedMethods")?;
            rules.push(CorsRule {
                allowed_origins: list("AllowedOrigins"),
                allowed_methods: list("AllowedMethods"),
                allowed_headers: list("AllowedHeaders"),
                exposed_headers: list("ExposedHeaders"),
                max_age_in_seconds: rule.number(&path, "MaxAgeInSeconds")?,
            });
        }
        properties.cors = Some(rules);
    }
    Ok(properties)
}

fn read_retention(parent: &Node, path: &str) -> Result<RetentionPolicy, String> {
    let node = parent.required(path, "RetentionPolicy")?;
    let path = format!("{path}.RetentionPolicy");
    if node.bool(&path, "Enabled")? {
        Ok(RetentionPolicy::Days(node.number(&path, "Days")?))
    } else {
        Ok(RetentionPolicy::Disabled)
    }
}

/// A comma-separated list as the service writes it; empty is none.
fn split_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned).collect()
}

/// Reads the `StorageServiceStats` document of `Get Table Service Stats`: a status this crate does not know is
/// kept; an empty `LastSyncTime` is `None`.
pub(crate) fn decode_service_stats(body: &[u8]) -> Result<ServiceStats, String> {
    let root = read_tree(body, "service statistics")?;
    if root.name != "StorageServiceStats" {
        return Err(format!("the root element is `<{}>`, expected `<StorageServiceStats>`", root.name));
    }
    let Some(node) = root.child("GeoReplication") else { return Ok(ServiceStats::default()) };
    let status = GeoReplicationStatus::from(node.required("GeoReplication", "Status")?.text.trim());
    let last_sync_time = match node.child("LastSyncTime").map(|n| n.text.trim()) {
        None | Some("") => None,
        Some(text) => Some(read_rfc1123(text, "GeoReplication.LastSyncTime")?),
    };
    Ok(ServiceStats { geo_replication: Some(GeoReplication { status, last_sync_time }) })
}

/// An RFC 1123 date (`Wed, 18 Nov 2026 07:08:09 GMT`), read as RFC 2822 reads it (any zone, converted to UTC).
/// Its UTC year must have four digits, 1 to 9999, as RFC 1123 writes it: RFC 2822 reads `20300` as a year too,
/// and a time that late could not be written back as the date it came as.
fn read_rfc1123(text: &str, field: &str) -> Result<DateTime<Utc>, String> {
    let time = DateTime::parse_from_rfc2822(text)
        .map_err(|e| format!("`{field}` {text:?} is not an RFC 1123 date: {e}"))?
        .to_utc();
    if !(TIME_MIN_YEAR..=TIME_MAX_YEAR).contains(&time.year()) {
        return Err(format!(
            "`{field}` {text:?} is not an RFC 1123 date: its UTC year {} is outside {TIME_MIN_YEAR} to {TIME_MAX_YEAR}",
            time.year()
        ));
    }
    Ok(time)
}

#[cfg(test)]
mod tests;
