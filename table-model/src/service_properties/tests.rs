use super::*;
use proptest::prelude::*;

/// The shape of the REST reference's `Get Table Service Properties` answer (our own values), with the
/// service's line breaks and indentation.
const ANSWER: &str = "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<StorageServiceProperties>\r\n  \
    <Logging>\r\n    <Version>1.0</Version>\r\n    <Delete>false</Delete>\r\n    <Read>true</Read>\r\n    \
    <Write>true</Write>\r\n    <RetentionPolicy>\r\n      <Enabled>true</Enabled>\r\n      <Days>9</Days>\r\n    \
    </RetentionPolicy>\r\n  </Logging>\r\n  <HourMetrics>\r\n    <Version>1.0</Version>\r\n    \
    <Enabled>true</Enabled>\r\n    <IncludeAPIs>true</IncludeAPIs>\r\n    <RetentionPolicy>\r\n      \
    <Enabled>true</Enabled>\r\n      <Days>30</Days>\r\n    </RetentionPolicy>\r\n  </HourMetrics>\r\n  \
    <MinuteMetrics>\r\n    <Version>1.0</Version>\r\n    <Enabled>false</Enabled>\r\n    <RetentionPolicy>\r\n      \
    <Enabled>false</Enabled>\r\n    </RetentionPolicy>\r\n  </MinuteMetrics>\r\n  <Cors>\r\n    <CorsRule>\r\n      \
    <AllowedOrigins>https://app.example,https://admin.example</AllowedOrigins>\r\n      \
    <AllowedMethods>GET,MERGE</AllowedMethods>\r\n      <MaxAgeInSeconds>120</MaxAgeInSeconds>\r\n      \
    <ExposedHeaders>x-ms-meta-*,x-ms-request-id</ExposedHeaders>\r\n      \
    <AllowedHeaders>x-ms-meta-owner,x-ms-client-*</AllowedHeaders>\r\n    </CorsRule>\r\n    <CorsRule>\r\n      \
    <AllowedOrigins>*</AllowedOrigins>\r\n      <AllowedMethods>GET</AllowedMethods>\r\n      \
    <MaxAgeInSeconds>0</MaxAgeInSeconds>\r\n      <ExposedHeaders />\r\n      <AllowedHeaders></AllowedHeaders>\r\n    \
    </CorsRule>\r\n  </Cors>\r\n</StorageServiceProperties>";

fn full() -> ServiceProperties {
    ServiceProperties::new()
        .with_logging(AnalyticsLogging::new(RetentionPolicy::Days(9)).with_read(true).with_write(true))
        .with_hour_metrics(Metrics::enabled(true, RetentionPolicy::Days(30)))
        .with_minute_metrics(Metrics::disabled())
        .with_cors(vec![
            CorsRule::new(["https://app.example", "https://admin.example"], ["GET", "MERGE"])
                .with_max_age(120)
                .with_exposed_headers(["x-ms-meta-*", "x-ms-request-id"])
                .with_allowed_headers(["x-ms-meta-owner", "x-ms-client-*"]),
            CorsRule::new(["*"], ["GET"]),
        ])
}

#[test]
fn reads_the_documented_answer() {
    assert_eq!(decode_service_properties(ANSWER.as_bytes()).unwrap(), full());
}

#[test]
fn writes_the_documented_shape() {
    let xml = String::from_utf8(encode_service_properties(&full()).unwrap()).unwrap();
    assert_eq!(
        xml,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>\
         <Logging><Version>1.0</Version><Delete>false</Delete><Read>true</Read><Write>true</Write>\
         <RetentionPolicy><Enabled>true</Enabled><Days>9</Days></RetentionPolicy></Logging>\
         <HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs>\
         <RetentionPolicy><Enabled>true</Enabled><Days>30</Days></RetentionPolicy></HourMetrics>\
         <MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled>\
         <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>\
         <Cors><CorsRule><AllowedOrigins>https://app.example,https://admin.example</AllowedOrigins>\
         <AllowedMethods>GET,MERGE</AllowedMethods><MaxAgeInSeconds>120</MaxAgeInSeconds>\
         <ExposedHeaders>x-ms-meta-*,x-ms-request-id</ExposedHeaders>\
         <AllowedHeaders>x-ms-meta-owner,x-ms-client-*</AllowedHeaders></CorsRule>\
         <CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>\
         <MaxAgeInSeconds>0</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders></AllowedHeaders>\
         </CorsRule></Cors></StorageServiceProperties>"
    );
    assert_eq!(decode_service_properties(xml.as_bytes()).unwrap(), full());
}

#[test]
fn only_the_parts_set_are_written_and_read() {
    let none = String::from_utf8(encode_service_properties(&ServiceProperties::new()).unwrap()).unwrap();
    assert_eq!(none, "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties></StorageServiceProperties>");
    assert_eq!(decode_service_properties(none.as_bytes()).unwrap(), ServiceProperties::new());

    let no_cors = ServiceProperties::new().with_cors(Vec::new());
    let xml = String::from_utf8(encode_service_properties(&no_cors).unwrap()).unwrap();
    assert!(xml.ends_with("<StorageServiceProperties><Cors></Cors></StorageServiceProperties>"), "{xml}");
    assert_eq!(decode_service_properties(xml.as_bytes()).unwrap(), no_cors);

    let minute = ServiceProperties::new().with_minute_metrics(Metrics::enabled(false, RetentionPolicy::Disabled));
    let read = decode_service_properties(&encode_service_properties(&minute).unwrap()).unwrap();
    assert_eq!((read.logging, read.hour_metrics, read.cors), (None, None, None));
    assert_eq!(read.minute_metrics, minute.minute_metrics);
}

#[test]
fn reading_skips_unknown_elements_and_takes_namespaces_and_escapes() {
    let body = "<StorageServiceProperties xmlns:x=\"urn:x\"><DefaultServiceVersion>2019-02-02</DefaultServiceVersion>\
                <x:Cors><CorsRule><AllowedOrigins>https://a.example/?q=1&amp;r=&#50;</AllowedOrigins>\
                <AllowedMethods><![CDATA[PUT]]></AllowedMethods><MaxAgeInSeconds> 5 </MaxAgeInSeconds>\
                <Future>1</Future></CorsRule></x:Cors></StorageServiceProperties>";
    let read = decode_service_properties(body.as_bytes()).unwrap();
    let rule = &read.cors.unwrap()[0];
    assert_eq!(rule.allowed_origins, ["https://a.example/?q=1&r=2"]);
    assert_eq!((rule.allowed_methods.as_slice(), rule.max_age_in_seconds), (&["PUT".to_owned()][..], 5));
    assert!(rule.allowed_headers.is_empty() && rule.exposed_headers.is_empty());
}

#[test]
fn refuses_what_is_not_a_properties_document() {
    let e = |body: &str| decode_service_properties(body.as_bytes()).unwrap_err();
    let wrap = |inner: &str| format!("<StorageServiceProperties>{inner}</StorageServiceProperties>");
    let retention = "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>";
    assert_eq!(
        e("<SignedIdentifiers/>"),
        "the root element is `<SignedIdentifiers>`, expected `<StorageServiceProperties>`"
    );
    assert_eq!(
        e(&wrap(&format!(
            "<Logging><Version>1.0</Version><Delete>false</Delete><Read>yes</Read>{retention}</Logging>"
        ))),
        "`Logging.Read` is \"yes\", expected `true` or `false`"
    );
    assert_eq!(
        e(&wrap(&format!(
            "<Logging><Version>1.0</Version><Delete>false</Delete><Read>true</Read>{retention}</Logging>"
        ))),
        "`Logging` has no `Write`"
    );
    assert_eq!(
        e(&wrap("<HourMetrics><Version>1.0</Version><Enabled>false</Enabled></HourMetrics>")),
        "`HourMetrics` has no `RetentionPolicy`"
    );
    assert_eq!(
        e(&wrap(
            "<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>true\
                 </Enabled></RetentionPolicy></MinuteMetrics>"
        )),
        "`MinuteMetrics.RetentionPolicy` has no `Days`"
    );
    assert_eq!(
        e(&wrap(
            "<Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>\
                 <MaxAgeInSeconds>-1</MaxAgeInSeconds></CorsRule></Cors>"
        )),
        "`Cors.CorsRule[0].MaxAgeInSeconds` is \"-1\", expected a whole number of 0 or more"
    );
    assert_eq!(
        e(&wrap(
            "<Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors>"
        )),
        "`Cors.CorsRule[0]` has no `AllowedMethods`"
    );
    assert!(e("<StorageServiceProperties><Logging>").contains("`<Logging>` is not closed"));
    assert!(e("<StorageServiceProperties></Logging>").starts_with("the service properties are not XML"));
    assert!(e("<a/><b/>").contains("more than one root element"));
    assert_eq!(e(""), "the service properties are empty");
    assert!(e("<a>&nbsp;</a>").contains("unknown XML entity `&nbsp;`"));
    assert!(e(&"<a>".repeat(100_000)).contains("deeper than 16 levels"));
    assert!(decode_service_properties(&[0xff, 0xfe]).unwrap_err().contains("not UTF-8"));
}

#[test]
fn reads_the_statistics() {
    let stats = |inner: &str| {
        decode_service_stats(
            format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats>{inner}</StorageServiceStats>")
                .as_bytes(),
        )
    };
    let live = stats(
        "<GeoReplication><Status>live</Status><LastSyncTime>Wed, 18 Nov 2026 07:08:09 GMT</LastSyncTime></GeoReplication>",
    )
    .unwrap()
    .geo_replication
    .unwrap();
    assert_eq!(live.status, GeoReplicationStatus::Live);
    assert_eq!(live.last_sync_time, Some(DateTime::parse_from_rfc3339("2026-11-18T07:08:09Z").unwrap().to_utc()));
    let booting = stats("<GeoReplication><Status>bootstrap</Status><LastSyncTime></LastSyncTime></GeoReplication>")
        .unwrap()
        .geo_replication
        .unwrap();
    assert_eq!((booting.status, booting.last_sync_time), (GeoReplicationStatus::Bootstrap, None));
    let unknown = stats("<GeoReplication><Status>resyncing</Status><LastSyncTime/></GeoReplication>").unwrap();
    assert_eq!(unknown.geo_replication.unwrap().status, GeoReplicationStatus::Other("resyncing".to_owned()));
    let off = stats("<GeoReplication><Status>unavailable</Status></GeoReplication>").unwrap();
    assert_eq!(off.geo_replication.unwrap().status.as_str(), "unavailable");
    assert_eq!(stats("").unwrap(), ServiceStats::default());

    assert_eq!(stats("<GeoReplication/>").unwrap_err(), "`GeoReplication` has no `Status`");
    assert!(stats("<GeoReplication><Status>live</Status><LastSyncTime>yesterday</LastSyncTime></GeoReplication>")
        .unwrap_err()
        .starts_with("`GeoReplication.LastSyncTime` \"yesterday\" is not an RFC 1123 date"));
    // RFC 2822 reads a year of five digits, or one that a zone moves past 9999: RFC 1123 cannot write them back
    // (libFuzzer found `to_rfc2822` panicking on the first).
    let sync = |time: &str| {
        stats(&format!("<GeoReplication><Status>live</Status><LastSyncTime>{time}</LastSyncTime></GeoReplication>"))
            .map(|s| s.geo_replication.unwrap().last_sync_time.unwrap())
    };
    assert_eq!(
        sync("Tue, 2 Jan 20300 00:00:00 +0000").unwrap_err(),
        "`GeoReplication.LastSyncTime` \"Tue, 2 Jan 20300 00:00:00 +0000\" is not an RFC 1123 date: its UTC year \
         20300 is outside 1 to 9999"
    );
    assert!(sync("Fri, 31 Dec 9999 23:00:00 -0200").unwrap_err().contains("its UTC year 10000 is outside 1 to 9999"));
    assert!(sync("Sat, 1 Jan 0000 00:00:00 GMT").unwrap_err().contains("its UTC year 0 is outside 1 to 9999"));
    for edge in ["Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 1 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 9999 23:00:00 +0200"] {
        let time = sync(edge).unwrap();
        assert_eq!(sync(&time.to_rfc2822()), Ok(time), "{edge}");
    }
    assert_eq!(
        decode_service_stats(b"<StorageServiceProperties/>").unwrap_err(),
        "the root element is `<StorageServiceProperties>`, expected `<StorageServiceStats>`"
    );
}

fn refusal(properties: &ServiceProperties) -> String {
    let err = properties.check().unwrap_err();
    assert_eq!(encode_service_properties(properties).unwrap_err(), err);
    err.to_string()
}

#[test]
fn retention_days_are_1_to_365() {
    for days in [1, 365] {
        assert!(ServiceProperties::new()
            .with_logging(AnalyticsLogging::new(RetentionPolicy::Days(days)))
            .check()
            .is_ok());
    }
    assert_eq!(
        refusal(&ServiceProperties::new().with_logging(AnalyticsLogging::new(RetentionPolicy::Days(0)))),
        "invalid service properties: `Logging.RetentionPolicy.Days` must be 1 to 365, found 0"
    );
    let err = ServiceProperties::new().with_hour_metrics(Metrics::enabled(true, RetentionPolicy::Days(366))).check();
    assert_eq!(err.unwrap_err().kind(), &ServicePropertiesErrorKind::RetentionDays { field: "HourMetrics", days: 366 });
}

#[test]
fn include_apis_goes_with_enabled_metrics_only() {
    let mut on = Metrics::enabled(false, RetentionPolicy::Disabled);
    on.include_apis = None;
    assert_eq!(
        refusal(&ServiceProperties::new().with_hour_metrics(on)),
        "invalid service properties: `HourMetrics.IncludeAPIs` is required when `HourMetrics.Enabled` is true"
    );
    let mut off = Metrics::disabled();
    off.include_apis = Some(false);
    assert_eq!(
        refusal(&ServiceProperties::new().with_minute_metrics(off)),
        "invalid service properties: `MinuteMetrics.IncludeAPIs` is given while `MinuteMetrics.Enabled` is false; \
         give it only for enabled metrics"
    );
    let mut version = Metrics::disabled();
    version.version = "1.0 ".to_owned();
    assert_eq!(
        refusal(&ServiceProperties::new().with_minute_metrics(version)),
        "invalid service properties: `MinuteMetrics.Version` must be a Storage Analytics version such as `1.0` \
         (not empty, no whitespace or control character), found \"1.0 \""
    );
    let mut empty = AnalyticsLogging::new(RetentionPolicy::Disabled);
    empty.version.clear();
    assert!(matches!(
        ServiceProperties::new().with_logging(empty).check().unwrap_err().kind(),
        ServicePropertiesErrorKind::Version { field: "Logging", .. }
    ));
}

fn cors(rules: Vec<CorsRule>) -> ServiceProperties {
    ServiceProperties::new().with_cors(rules)
}

fn rule() -> CorsRule {
    CorsRule::new(["https://a.example"], ["GET"])
}

#[test]
fn cors_rule_limits() {
    assert!(cors(vec![rule(); 5]).check().is_ok());
    assert_eq!(refusal(&cors(vec![rule(); 6])), "invalid service properties: `Cors` has 6 rules, at most 5");
    assert_eq!(
        refusal(&cors(vec![rule(), CorsRule::new(Vec::<String>::new(), ["GET"])])),
        "invalid service properties: CORS rule 1: `AllowedOrigins` is empty; give at least one"
    );
    assert_eq!(
        refusal(&cors(vec![CorsRule::new(["*"], Vec::<String>::new())])),
        "invalid service properties: CORS rule 0: `AllowedMethods` is empty; give at least one"
    );
    let origins = |n: usize| (0..n).map(|i| format!("https://{i}.ex")).collect::<Vec<_>>();
    assert!(cors(vec![CorsRule::new(origins(64), ["GET"])]).check().is_ok());
    assert_eq!(
        refusal(&cors(vec![CorsRule::new(origins(65), ["GET"])])),
        "invalid service properties: CORS rule 0: `AllowedOrigins` has 65 origins, at most 64"
    );
    for method in CORS_METHODS {
        assert!(cors(vec![CorsRule::new(["*"], [method])]).check().is_ok(), "{method}");
    }
    for method in ["get", "PATCH", "TRACE", "CONNECT"] {
        let err = cors(vec![rule(), CorsRule::new(["*"], ["GET", method])]).check().unwrap_err();
        assert_eq!(err.kind(), &ServicePropertiesErrorKind::CorsMethod { rule: 1, method: method.to_owned() });
    }
}

#[test]
fn cors_header_limits() {
    let headers = |n: usize, prefixed: usize| {
        (0..n).map(|i| format!("x-h{i}")).chain((0..prefixed).map(|i| format!("x-p{i}-*"))).collect::<Vec<_>>()
    };
    assert!(cors(vec![rule().with_allowed_headers(headers(64, 2)).with_exposed_headers(["*"])]).check().is_ok());
    assert_eq!(
        refusal(&cors(vec![rule().with_exposed_headers(headers(65, 0))])),
        "invalid service properties: CORS rule 0: `ExposedHeaders` has 65 headers named in full, at most 64"
    );
    assert_eq!(
        refusal(&cors(vec![rule(), rule().with_allowed_headers(headers(0, 3))])),
        "invalid service properties: CORS rule 1: `AllowedHeaders` has 3 prefixed headers, at most 2"
    );
}

#[test]
fn cors_values_are_1_to_256_characters_without_separators() {
    let long = format!("https://{}", "é".repeat(248));
    assert_eq!(long.chars().count(), 256);
    assert!(cors(vec![CorsRule::new([long.clone()], ["GET"])]).check().is_ok());
    assert_eq!(
        refusal(&cors(vec![CorsRule::new(["*".to_owned(), format!("{long}x")], ["GET"])])),
        "invalid service properties: CORS rule 0: `AllowedOrigins` value 1 must be 1 to 256 characters, found 257"
    );
    assert_eq!(
        refusal(&cors(vec![rule().with_allowed_headers(["a", ""])])),
        "invalid service properties: CORS rule 0: `AllowedHeaders` value 1 must be 1 to 256 characters, found 0"
    );
    assert_eq!(
        refusal(&cors(vec![CorsRule::new(["https://a.example,https://b.example"], ["GET"])])),
        "invalid service properties: CORS rule 0: `AllowedOrigins` value 0 has character `,`, which a \
         comma-separated list cannot carry"
    );
    for (bad, shown) in [(" x", "U+0020"), ("x\ty", "U+0009"), ("x\u{7f}", "U+007F")] {
        let err = refusal(&cors(vec![rule().with_exposed_headers([bad])]));
        assert!(
            err.ends_with(&format!(
                "`ExposedHeaders` value 0 has character {shown}, which a comma-separated list cannot carry"
            )),
            "{err}"
        );
    }
}

#[test]
fn cors_rules_are_at_most_2_kib_in_all() {
    // One rule of 8 origins of 254 bytes and a method: 8 * 254 + 7 commas + 3 + 1 (max age `0`) = 2043 bytes.
    let origins = |len: usize| (0..8).map(|i| format!("https://{i}{}", "a".repeat(len - 9))).collect::<Vec<_>>();
    assert!(cors(vec![CorsRule::new(origins(254), ["GET"])]).check().is_ok());
    // The same with a max age of 8 digits: 2050 bytes.
    let over = cors(vec![CorsRule::new(origins(254), ["GET"]).with_max_age(12_345_678)]);
    assert_eq!(
        refusal(&over),
        "invalid service properties: `Cors` rules must be at most 2048 bytes in all without the XML tags, found 2050"
    );
}

/// A generated value of every shape the checks accept.
fn any_properties() -> impl Strategy<Value = ServiceProperties> {
    let retention = prop_oneof![Just(RetentionPolicy::Disabled), (1u32..=365).prop_map(RetentionPolicy::Days)];
    let logging = (any::<[bool; 3]>(), retention.clone())
        .prop_map(|([r, w, d], p)| AnalyticsLogging::new(p).with_read(r).with_write(w).with_delete(d));
    let metrics = (proptest::option::of(any::<bool>()), retention).prop_map(|(apis, p)| match apis {
        Some(apis) => Metrics::enabled(apis, p),
        None => Metrics { retention_policy: p, ..Metrics::disabled() },
    });
    let value = "[A-Za-z0-9:/.*_-]{1,20}";
    let rule = (
        proptest::collection::vec(value, 1..4),
        proptest::sample::subsequence(CORS_METHODS.to_vec(), 1..=7),
        proptest::collection::vec("[a-z-]{1,12}", 0..4),
        proptest::collection::vec("[a-z-]{1,12}", 0..4),
        any::<u32>(),
    )
        .prop_map(|(origins, methods, allowed, exposed, age)| {
            CorsRule::new(origins, methods)
                .with_allowed_headers(allowed)
                .with_exposed_headers(exposed)
                .with_max_age(age)
        });
    (
        proptest::option::of(logging),
        proptest::option::of(metrics.clone()),
        proptest::option::of(metrics),
        proptest::option::of(proptest::collection::vec(rule, 0..=5)),
    )
        .prop_map(|(logging, hour_metrics, minute_metrics, cors)| ServiceProperties {
            logging,
            hour_metrics,
            minute_metrics,
            cors,
        })
}

proptest! {
    /// What is written is read back the same.
    #[test]
    fn written_properties_read_back_equal(properties in any_properties()) {
        let xml = encode_service_properties(&properties).unwrap();
        prop_assert_eq!(decode_service_properties(&xml).unwrap(), properties);
    }

    /// Untrusted bodies: any bytes, any text, are read or refused with a reason; nothing panics.
    #[test]
    fn any_body_is_read_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..300), text in ".{0,300}") {
        for body in [bytes.as_slice(), text.as_bytes()] {
            let _ = decode_service_properties(body).map_err(|e| assert!(!e.is_empty()));
            let _ = decode_service_stats(body).map_err(|e| assert!(!e.is_empty()));
        }
    }

    /// A document cut short anywhere, or with a byte changed, is read or refused; cut short it is refused.
    #[test]
    fn truncated_or_altered_documents_never_panic(cut in 0..ANSWER.len(), at in 0..ANSWER.len(), byte in any::<u8>()) {
        let body = ANSWER.as_bytes();
        prop_assert!(decode_service_properties(&body[..cut]).is_err());
        let mut altered = body.to_vec();
        altered[at] = byte;
        let _ = decode_service_properties(&altered);
        let stats = b"<StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>Wed, 18 Nov 2026 \
                      07:08:09 GMT</LastSyncTime></GeoReplication></StorageServiceStats>";
        let _ = decode_service_stats(&stats[..cut.min(stats.len())]);
    }
}
