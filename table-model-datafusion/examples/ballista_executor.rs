//! A Ballista executor that reads Azure Tables: it decodes the scans of the tasks it is given (the account's
//! endpoint, the table, the query, its key ranges; never a credential) and reads them with its own client of
//! the account, from `AZURE_STORAGE_CONNECTION_STRING`.
//!
//! ```text
//! AZURE_STORAGE_CONNECTION_STRING='...' BALLISTA_EXECUTOR_PORT=50051 \
//!     cargo run -p table-model-datafusion --example ballista_executor
//! ```
//!
//! It registers with the scheduler at `BALLISTA_SCHEDULER_HOST`:`BALLISTA_SCHEDULER_PORT` (localhost:50050 by
//! default) and serves its shuffle data on `BALLISTA_EXECUTOR_PORT` (50051) and its gRPC on the next port; see
//! `docs/ballista.md`.

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use std::error::Error;
use std::sync::Arc;
use table_model::client::TableServiceClient;
use table_model_datafusion::codec::AzureCodec;

fn port_var(var: &str, default: u16) -> Result<u16, String> {
    match std::env::var(var) {
        Ok(port) => port.parse().map_err(|e| format!("{var} {port:?} is not a port: {e}")),
        Err(_) => Ok(default),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let connection = std::env::var("AZURE_STORAGE_CONNECTION_STRING")
        .map_err(|_| "set AZURE_STORAGE_CONNECTION_STRING to the account the executor reads")?;
    let service = TableServiceClient::from_connection_string(&connection, None)?;
    // Ballista uses this codec in place of its own: it hands Ballista's nodes to Ballista's codecs.
    let codec = Arc::new(AzureCodec::new(service).with_fallback(
        Arc::new(BallistaLogicalExtensionCodec::default()),
        Arc::new(BallistaPhysicalExtensionCodec::default()),
    ));
    let port = port_var("BALLISTA_EXECUTOR_PORT", 50051)?;
    let config = ExecutorProcessConfig {
        scheduler_host: std::env::var("BALLISTA_SCHEDULER_HOST").unwrap_or_else(|_| "localhost".to_owned()),
        scheduler_port: port_var("BALLISTA_SCHEDULER_PORT", 50050)?,
        port,
        grpc_port: port.checked_add(1).ok_or("BALLISTA_EXECUTOR_PORT leaves no port for gRPC above it")?,
        override_logical_codec: Some(codec.clone()),
        override_physical_codec: Some(codec),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config)).await?;
    Ok(())
}
