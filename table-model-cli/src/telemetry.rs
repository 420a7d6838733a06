//! `--otlp-endpoint`: the client's spans sent to an OpenTelemetry collector over OTLP/HTTP (protobuf), for a long
//! copy or export watched in Jaeger, Tempo, Azure Monitor or any other OTLP backend. The spans are the ones the
//! client emits through `azure_core`'s instrumentation (`table_model::client::trace`: a span per call, a span per
//! try under it, a bulk write's transactions), bridged by `azure_core_opentelemetry`, batched on a thread of
//! their own and sent when the batch fills, every few seconds and when the command ends.
//!
//! Telemetry never changes what a command does or its exit status: spans the collector did not take are counted
//! and said on stderr once, at the end. The service's resource is `service.name` `tablectl` (unless
//! `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` says otherwise) and `service.version`; the collector's
//! headers (an API key, say) come from `OTEL_EXPORTER_OTLP_HEADERS` or `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, as
//! every OpenTelemetry SDK reads them.
//!
//! Layer: parts.

use crate::error::CliError;
use bytes::Bytes;
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use table_model::client::azure_core::tracing::TracerProvider;

/// How long one export to the collector may take before it counts as failed (the OTLP exporters' default).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The path of the traces of an OTLP/HTTP collector, added to an endpoint given without it.
const TRACES_PATH: &str = "/v1/traces";

/// The export of a run's spans to a collector: start it before the first client, hand its
/// [`tracer_provider`](Self::tracer_provider) to the clients' options, and [`finish`](Self::finish) it when the
/// command is done, which sends what is still batched.
#[derive(Debug)]
pub struct Collector {
    provider: SdkTracerProvider,
    endpoint: String,
    failures: Arc<Failures>,
}

impl Collector {
    /// Starts the export to the OTLP/HTTP collector at `endpoint` (`http://localhost:4318`, say; `/v1/traces` is
    /// added unless the URL ends with it). Nothing is sent until spans end.
    ///
    /// ```
    /// # fn main() -> Result<(), table_model_cli::error::CliError> {
    /// let collector = table_model_cli::telemetry::Collector::start("http://127.0.0.1:4318")?;
    /// assert_eq!(collector.endpoint(), "http://127.0.0.1:4318/v1/traces");
    /// assert_eq!(collector.finish(), None); // no span ended, so nothing failed to send
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// Invalid input (status 2) when `endpoint` is not an `http` or `https` URL with a host.
    pub fn start(endpoint: &str) -> Result<Collector, CliError> {
        let endpoint = traces_endpoint(endpoint)?;
        let transport = Transport::new().map_err(|e| CliError::failed(format!("cannot start the OTLP export: {e}")))?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(transport)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(endpoint.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| CliError::invalid(format!("--otlp-endpoint `{endpoint}`: {e}")))?;
        let failures = Arc::new(Failures::default());
        let exporter = Counted { inner: exporter, failures: failures.clone() };
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("tablectl");
        }
        let resource =
            resource.with_attribute(opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))).build();
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
        Ok(Collector { provider, endpoint, failures })
    }

    /// The URL the spans are sent to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The tracer provider of the clients' `InstrumentationOptions` (through `azure_core_opentelemetry`).
    pub fn tracer_provider(&self) -> Arc<dyn TracerProvider> {
        azure_core_opentelemetry::OpenTelemetryTracerProvider::new(Arc::new(self.provider.clone()))
    }

    /// Sends what is still batched and stops the export; what went wrong, if spans did not reach the collector
    /// (for stderr).
    pub fn finish(self) -> Option<String> {
        let shutdown = self.provider.shutdown();
        let failed = self.failures.spans.load(Ordering::Relaxed);
        let error = self.failures.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        match (failed, error, shutdown) {
            (0, None, Ok(())) => None,
            (0, None, Err(e)) => Some(format!("the OTLP export to {} did not finish: {e}", self.endpoint)),
            (failed, error, _) => Some(format!(
                "{failed} spans could not be sent to the OpenTelemetry collector at {}{}",
                self.endpoint,
                error.map(|e| format!(": {e}")).unwrap_or_default()
            )),
        }
    }
}

/// `endpoint` with the traces' path, checked.
fn traces_endpoint(endpoint: &str) -> Result<String, CliError> {
    let url = table_model::client::azure_core::http::Url::parse(endpoint)
        .map_err(|e| CliError::invalid(format!("--otlp-endpoint `{endpoint}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(CliError::invalid(format!(
            "--otlp-endpoint `{endpoint}`: expected an http or https URL of an OTLP collector, such as \
             http://localhost:4318"
        )));
    }
    let endpoint = endpoint.trim_end_matches('/');
    Ok(if url.path().trim_end_matches('/').ends_with(TRACES_PATH) {
        endpoint.to_owned()
    } else {
        format!("{endpoint}{TRACES_PATH}")
    })
}

/// The spans a run could not send, and the last reason.
#[derive(Debug, Default)]
struct Failures {
    spans: AtomicU64,
    last: Mutex<Option<String>>,
}

/// The OTLP exporter, counting the spans of each batch it could not send.
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    failures: Arc<Failures>,
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len() as u64;
        let result = self.inner.export(batch).await;
        if let Err(e) = &result {
            self.failures.spans.fetch_add(spans, Ordering::Relaxed);
            *self.failures.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.to_string());
        }
        result
    }

    fn shutdown_with_timeout(&mut self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&mut self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The exporter's HTTP client: reqwest, with the table client's TLS settings, on a runtime of its own. The batch
/// processor exports from a thread of its own, outside the command's runtime (which may have one thread, busy with
/// the command), so requests run on this runtime's thread and the exporter waits for their answer.
#[derive(Debug)]
struct Transport {
    client: reqwest::Client,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Transport {
    fn new() -> std::io::Result<Transport> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tablectl-otlp")
            .enable_all()
            .build()?;
        let tls = table_model::client::tls_config().map_err(std::io::Error::other)?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Transport { client, runtime: Some(runtime) })
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        // The exporter may be dropped where blocking is not allowed: its thread ends without being waited for.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Transport {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, opentelemetry_http::HttpError> {
        let runtime = self.runtime.as_ref().ok_or("the OTLP transport is shut down")?;
        let request = reqwest::Request::try_from(request)?;
        let client = self.client.clone();
        let sent = runtime.spawn(async move {
            let response = client.execute(request).await?;
            let mut answer = http::Response::builder().status(response.status());
            if let Some(headers) = answer.headers_mut() {
                *headers = response.headers().clone();
            }
            let body = response.bytes().await?;
            Ok::<_, opentelemetry_http::HttpError>(answer.body(body)?)
        });
        sent.await?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_path_is_added_once() {
        for (given, expected) in [
            ("http://localhost:4318", "http://localhost:4318/v1/traces"),
            ("http://localhost:4318/", "http://localhost:4318/v1/traces"),
            ("https://otel.example.com/v1/traces", "https://otel.example.com/v1/traces"),
            ("https://otel.example.com/tenant/7", "https://otel.example.com/tenant/7/v1/traces"),
        ] {
            assert_eq!(traces_endpoint(given).unwrap(), expected, "{given}");
        }
    }

    #[test]
    fn an_endpoint_that_is_no_http_url_is_a_usage_error() {
        for given in ["localhost:4318", "grpc://collector:4317", "not a url", "file:///tmp/spans"] {
            let error = traces_endpoint(given).unwrap_err();
            assert_eq!(error.outcome(), crate::error::Outcome::InvalidInput, "{given}");
            assert!(error.to_string().contains(given), "{error}");
        }
    }
}
