//! What the client's calls meet, on stderr, through the spans the client emits (`table_model::client::trace`,
//! a [`SpanHook`]): always, a try that got no answer and is tried again (a service that accepts and never
//! answers would otherwise be a silent minute per try); with `-v`/`--verbose`, every retry, every throttled try
//! and every transaction whose reply was lost and was settled by reading it back, each with the service's request
//! id (what Microsoft support asks for).
//!
//! Layer: parts.

use std::sync::Arc;
use std::time::Duration;
use table_model::client::azure_core::tracing::TracerProvider;
use table_model::client::trace::{self, EndedSpan, SpanHook};

/// The tracer provider of a run: the notices, and with `verbose` the rest, each span also recorded by `export`
/// if given (`--otlp-endpoint`: the collector's, see `telemetry`). `try_timeout` is the client's: a try abandoned
/// after it is one that got no answer (one abandoned sooner was dropped by its caller, which had what it needed or
/// stopped).
pub fn tracer(
    verbose: bool,
    try_timeout: Duration,
    export: Option<Arc<dyn TracerProvider>>,
) -> Arc<dyn TracerProvider> {
    let say = move |span: &EndedSpan<'_>| {
        if let Some(line) = line(span, verbose, try_timeout) {
            eprintln!("tablectl: {line}");
        }
    };
    match export {
        Some(export) => SpanHook::around(export, say),
        None => SpanHook::new(say),
    }
}

/// What a span says on stderr, if anything.
fn line(span: &EndedSpan<'_>, verbose: bool, try_timeout: Duration) -> Option<String> {
    let call = span.parent().unwrap_or("a call");
    let id = span.str(trace::AZ_SERVICE_REQUEST_ID).map(|id| format!(" (request id {id})")).unwrap_or_default();
    if !span.is_request() {
        if verbose && span.str(trace::OUTCOME) == Some("settled") {
            let partition = span.str(trace::PARTITION_KEY).unwrap_or("?");
            let operations = span.int(trace::OPERATIONS).unwrap_or(0);
            return Some(format!(
                "{call}: the reply to the transaction of PartitionKey `{partition}` ({operations} operations) was \
                 lost; its entities were read back and it is settled"
            ));
        }
        return None;
    }
    let tries = span.int(trace::HTTP_RESEND_COUNT).map_or(1, |n| n + 1);
    match span.int(trace::HTTP_STATUS) {
        // The span starts a moment after the try's clock: a quarter of a second's margin.
        None if span.str(trace::ERROR_TYPE) == Some(trace::ABANDONED)
            && span.elapsed() + Duration::from_millis(250) < try_timeout =>
        {
            None
        }
        None if span.failed() => Some(format!(
            "{call}: try {tries} ({}) got no answer after {:.1} s; another follows unless the retries are spent",
            span.name(),
            span.elapsed().as_secs_f64()
        )),
        Some(status @ (429 | 503)) if verbose => {
            Some(format!("{call}: try {tries} throttled ({status}){id}; retried after the service's back-off"))
        }
        Some(status @ (408 | 500 | 502 | 504)) if verbose => {
            Some(format!("{call}: try {tries} answered {status}{id}; retried"))
        }
        Some(_) if verbose && tries > 1 => Some(format!("{call}: try {tries} answered{id}")),
        _ => None,
    }
}
