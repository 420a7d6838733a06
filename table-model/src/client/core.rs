//! What every client shares: the request builder, the `azure_core` pipeline, and the one function that sends
//! a built request through it.

use super::credential::{SharedKeyPolicy, TableCredential};
use super::error::Error;
use super::options::TableServiceClientOptions;
use super::outcome::{TryLog, TryPolicy};
use crate::auth::SharedKeyScheme;
use crate::connection::{Credential, Endpoint, ServiceKind};
use crate::error::{RequestError, ResponseError};
use crate::request::{MergeVerb, TableService};
use azure_core::error::ErrorKind as CoreErrorKind;
use azure_core::http::policies::auth::BearerTokenAuthorizationPolicy;
use azure_core::http::policies::Policy;
use azure_core::http::{Context, Method, Pipeline, PipelineSendOptions, Request, Url};
use azure_core::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// The request builder and the pipeline of one service client and all of its table clients.
#[derive(Debug)]
pub(crate) struct Core {
    /// Builds every request: method, URL, headers, body. Its credential is the SAS, when there is one;
    /// Shared Key and Entra authorization are per-try policies of the pipeline.
    pub(crate) requests: TableService,
    pub(crate) kind: ServiceKind,
    pipeline: Pipeline,
    deadline: Option<Duration>,
}

impl Core {
    pub(crate) fn new(
        endpoint: Endpoint,
        credential: TableCredential,
        options: TableServiceClientOptions,
    ) -> Result<Self, Error> {
        let kind = options.service_kind.unwrap_or_else(|| endpoint.kind());
        let account = endpoint.account().to_owned();
        // First of the per-try policies, so that its timeout covers signing, the token and the transport.
        let mut per_try: Vec<Arc<dyn Policy>> = vec![Arc::new(TryPolicy { try_timeout: options.try_timeout })];
        let request_credential = match credential {
            TableCredential::SharedKey(key) => {
                per_try.push(Arc::new(SharedKeyPolicy { account, key, scheme: SharedKeyScheme::Full }));
                Credential::Anonymous
            }
            TableCredential::SharedKeyLite(key) => {
                per_try.push(Arc::new(SharedKeyPolicy { account, key, scheme: SharedKeyScheme::Lite }));
                Credential::Anonymous
            }
            TableCredential::Entra(credential) => {
                per_try.push(Arc::new(BearerTokenAuthorizationPolicy::new(credential, [kind.entra_scope()])));
                Credential::Anonymous
            }
            TableCredential::Sas(sas) => Credential::Sas(sas),
            TableCredential::Anonymous => Credential::Anonymous,
        };
        // azure_core's `Method` has no MERGE: Storage and Azurite take PATCH, Cosmos DB needs the POST tunnel.
        let merge_verb = match kind {
            ServiceKind::CosmosDb => MergeVerb::PostTunnel,
            _ => MergeVerb::Patch,
        };
        let mut requests =
            TableService::new(endpoint, request_credential).with_metadata(options.metadata).with_merge_verb(merge_verb);
        if let Some(limit) = options.try_timeout {
            requests = requests.with_server_timeout(limit);
        }
        let pipeline = Pipeline::new(
            Some(env!("CARGO_PKG_NAME")),
            Some(env!("CARGO_PKG_VERSION")),
            options.client_options,
            Vec::new(),
            per_try,
            None,
        );
        Ok(Core { requests, kind, pipeline, deadline: options.deadline })
    }

    /// Sends a request built by [`TableService`] and reads the answer with a function of the response layer.
    pub(crate) async fn call<R>(
        &self,
        request: Result<http::Request<Vec<u8>>, RequestError>,
        ctx: &Context<'_>,
        read: impl FnOnce(&http::Response<Bytes>) -> Result<R, ResponseError>,
    ) -> Result<R, Error> {
        let response = self.send(request?, ctx).await?;
        Ok(read(&response)?)
    }

    /// As [`call`](Self::call), and whether some try ended with its outcome unknown: a write that was retried
    /// after that may see its own first try's effect (see [`outcome`](super::outcome)).
    pub(crate) async fn call_tracked<R>(
        &self,
        request: Result<http::Request<Vec<u8>>, RequestError>,
        ctx: &Context<'_>,
        read: impl FnOnce(&http::Response<Bytes>) -> Result<R, ResponseError>,
    ) -> (Result<R, Error>, bool) {
        let log = Arc::new(TryLog::default());
        let ctx = ctx.clone().with_value(log.clone());
        let result = match request {
            Ok(request) => match self.send(request, &ctx).await {
                Ok(response) => read(&response).map_err(Error::from),
                Err(e) => Err(e),
            },
            Err(e) => Err(e.into()),
        };
        let retried_after_unknown = log.outcome_was_unknown() && log.tries() > 1;
        (result, retried_after_unknown)
    }

    /// Sends a request built by [`TableService`] and returns the answer whatever its status: the response
    /// layer reads it.
    pub(crate) async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        ctx: &Context<'_>,
    ) -> Result<http::Response<Bytes>, Error> {
        let mut request = to_core_request(request)?;
        let options = PipelineSendOptions { skip_checks: true, ..Default::default() };
        let send = self.pipeline.send(ctx, &mut request, Some(options));
        let response = match self.deadline {
            None => send.await?,
            Some(limit) => tokio::time::timeout(limit, send).await.map_err(|_| {
                let message = format!("no answer within the deadline of {limit:?}; a write may have been applied");
                azure_core::Error::with_message(CoreErrorKind::Io, message)
            })??,
        };
        let (status, headers, body) = response.deconstruct();
        let mut reply = http::Response::new(Bytes::from(body));
        *reply.status_mut() = http::StatusCode::from_u16(u16::from(status))
            .map_err(|e| azure_core::Error::new(CoreErrorKind::DataConversion, e))?;
        let map = reply.headers_mut();
        map.reserve(16);
        for (name, value) in headers.iter() {
            // A header the `http` crate cannot hold is not one the protocol uses: leave it out.
            if let (Ok(name), Ok(value)) =
                (http::HeaderName::from_bytes(name.as_str().as_bytes()), http::HeaderValue::from_str(value.as_str()))
            {
                map.append(name, value);
            }
        }
        Ok(reply)
    }
}

/// The same request in `azure_core`'s types.
fn to_core_request(request: http::Request<Vec<u8>>) -> Result<Request, Error> {
    let (parts, body) = request.into_parts();
    let url =
        Url::parse(&parts.uri.to_string()).map_err(|e| azure_core::Error::new(CoreErrorKind::DataConversion, e))?;
    let method = match parts.method {
        http::Method::GET => Method::Get,
        http::Method::POST => Method::Post,
        http::Method::PUT => Method::Put,
        http::Method::DELETE => Method::Delete,
        http::Method::PATCH => Method::Patch,
        http::Method::HEAD => Method::Head,
        other => {
            // The client's request builder sends merges as PATCH or POST; no other verb is built.
            let message = format!("method {other} cannot be sent through azure_core");
            return Err(azure_core::Error::with_message(CoreErrorKind::Other, message).into());
        }
    };
    let mut core = Request::new(url, method);
    for (name, value) in &parts.headers {
        if let Ok(value) = value.to_str() {
            core.insert_header(name.as_str().to_owned(), value.to_owned());
        }
    }
    if !body.is_empty() {
        core.set_body(Bytes::from(body));
    }
    Ok(core)
}
