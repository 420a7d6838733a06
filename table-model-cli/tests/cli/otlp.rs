//! `--otlp-endpoint`: the client's spans reach an OpenTelemetry collector over OTLP/HTTP as one tree per call,
//! with no secret in them, and a collector that is down changes nothing about the command.

use crate::support::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use std::net::TcpListener;
use table_model::DEVELOPMENT_ACCOUNT_KEY;
use table_model_test_utils::loopback::{self, reply};

/// A loopback OTLP/HTTP collector ([`loopback::Server`]): answers `200` to every request and keeps it.
struct Collector {
    server: loopback::Server,
}

impl Collector {
    async fn start() -> Collector {
        let server = loopback::Server::http(|_| reply(200, &[("content-type", "application/x-protobuf")], "")).await;
        Collector { server }
    }

    fn url(&self) -> String {
        self.server.origin()
    }

    /// Every span received, with its resource's `service.name`.
    fn spans(&self) -> Vec<(String, Span)> {
        let mut spans = Vec::new();
        for request in self.server.seen() {
            assert_eq!(request.path(), "/v1/traces");
            let export = ExportTraceServiceRequest::decode(request.body).expect("an OTLP protobuf export");
            for resource in export.resource_spans {
                let attributes = resource.resource.map(|r| r.attributes).unwrap_or_default();
                let service = text_of(&attributes, "service.name").unwrap_or_default();
                for scope in resource.scope_spans {
                    spans.extend(scope.spans.into_iter().map(|span| (service.clone(), span)));
                }
            }
        }
        spans
    }
}

/// [`tablectl`] off the runtime's threads, so the collector answers while it runs.
async fn tablectl_beside(connection_string: &str, dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let (connection_string, dir) = (connection_string.to_owned(), dir.to_owned());
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tablectl(&connection_string, &dir, &args)
    })
    .await
    .unwrap()
}

fn text_of(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|a| a.key == key).and_then(|a| match &a.value {
        Some(AnyValue { value: Some(any_value::Value::StringValue(s)) }) => Some(s.clone()),
        _ => None,
    })
}

fn values(span: &Span) -> Vec<String> {
    span.attributes
        .iter()
        .filter_map(|a| a.value.as_ref().and_then(|v| v.value.as_ref()))
        .map(|v| format!("{v:?}"))
        .collect()
}

#[tokio::test]
async fn an_import_and_a_count_send_one_span_tree_per_call_with_no_secret() {
    let azurite = azurite!();
    let dir = temp_dir("otlp");
    let name = unique_table("Otlp");
    let lines: Vec<String> =
        (0..6).map(|i| format!(r#"{{"PartitionKey":"p{}","RowKey":"r{i}","N":{i}}}"#, i % 2)).collect();
    std::fs::write(dir.join("in.jsonl"), lines.join("\n") + "\n").unwrap();
    let collector = Collector::start().await;
    let url = collector.url();

    let out = tablectl_beside(
        &azurite.connection_string,
        &dir,
        &["--otlp-endpoint", &url, "import", "in.jsonl", name.as_str()],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out =
        tablectl_beside(&azurite.connection_string, &dir, &["count", name.as_str(), "--otlp-endpoint", &url]).await;
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "6\n".to_owned()), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "a collector that takes the spans is not mentioned");

    let spans = collector.spans();
    assert!(spans.iter().all(|(service, _)| service == "tablectl"), "the resource is tablectl's");
    let calls: Vec<&Span> = spans.iter().map(|(_, s)| s).filter(|s| s.kind == SpanKind::Internal as i32).collect();
    let tries: Vec<&Span> = spans.iter().map(|(_, s)| s).filter(|s| s.kind == SpanKind::Client as i32).collect();
    let names: Vec<&str> = calls.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&"Storage.Tables.TableClient.create_table_if_not_exists"), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("Storage.Tables.TableClient.") && n.contains("query")), "{names:?}");
    // The import's transactions: one per partition, each under the import's write, with its partition.
    let transactions: Vec<&&Span> =
        calls.iter().filter(|s| text_of(&s.attributes, "table_model.partition_key").is_some()).collect();
    let mut partitions: Vec<String> =
        transactions.iter().filter_map(|s| text_of(&s.attributes, "table_model.partition_key")).collect();
    partitions.sort();
    partitions.dedup();
    assert_eq!(partitions, ["p0", "p1"], "{names:?}");
    for transaction in &transactions {
        let parent = calls.iter().find(|c| c.span_id == transaction.parent_span_id);
        assert!(parent.is_some(), "transaction {} has its call as parent", transaction.name);
    }
    // Each call span names the service; each try is a child of a call span of the same trace.
    for call in calls.iter().filter(|s| s.parent_span_id.is_empty()) {
        assert_eq!(text_of(&call.attributes, "az.namespace").as_deref(), Some("Microsoft.Storage"), "{}", call.name);
    }
    assert!(tries.len() >= calls.iter().filter(|s| s.parent_span_id.is_empty()).count(), "a try per call at least");
    for try_ in &tries {
        let parent = calls.iter().find(|c| c.span_id == try_.parent_span_id && c.trace_id == try_.trace_id);
        assert!(
            parent.is_some(),
            "the try {} ({:?}) is under a call",
            try_.name,
            text_of(&try_.attributes, "url.full")
        );
        assert!(text_of(&try_.attributes, "url.full").is_some());
    }
    // No key, signature or token in any attribute.
    for (_, span) in &spans {
        for value in values(span) {
            assert!(
                !value.contains(DEVELOPMENT_ACCOUNT_KEY) && !value.contains(&DEVELOPMENT_ACCOUNT_KEY[..20]),
                "{value}"
            );
            assert!(!value.contains("sig=") && !value.contains("Bearer") && !value.contains("SharedKey"), "{value}");
        }
    }
}

#[test]
fn a_collector_that_is_down_changes_nothing_but_a_line_on_stderr() {
    let azurite = azurite!();
    let dir = temp_dir("otlp-down");
    let name = unique_table("OtlpDown");
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    std::fs::write(dir.join("in.jsonl"), "{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n").unwrap();
    let out =
        tablectl(&azurite.connection_string, &dir, &["import", "in.jsonl", name.as_str(), "--otlp-endpoint", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let expected = format!("spans could not be sent to the OpenTelemetry collector at {url}/v1/traces");
    assert!(stderr.contains(&expected), "{stderr}");
    let out = tablectl(&azurite.connection_string, &dir, &["count", name.as_str()]);
    assert_eq!(text(&out.stdout), "1\n", "the import wrote its entity");
}

#[test]
fn an_endpoint_that_is_no_http_url_is_refused_before_anything_is_sent() {
    let dir = temp_dir("otlp-bad");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
         TableEndpoint=http://{}/devstoreaccount1",
        listener.local_addr().unwrap()
    );
    listener.set_nonblocking(true).unwrap();
    let out = tablectl(&connection_string, &dir, &["count", "Tbl", "--otlp-endpoint", "localhost:4318"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--otlp-endpoint `localhost:4318`"), "{}", text(&out.stderr));
    assert!(listener.accept().is_err(), "nothing reached the service");
}
