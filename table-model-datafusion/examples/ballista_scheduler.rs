//! A Ballista scheduler that plans queries over Azure Tables: it decodes the client's logical plans (an
//! `AzureTable` travels as its account's endpoint, its name and its schema) and plans each scan's key ranges
//! with its own client of the account, from `AZURE_STORAGE_CONNECTION_STRING`.
//!
//! ```text
//! AZURE_STORAGE_CONNECTION_STRING='...' cargo run -p table-model-datafusion --example ballista_scheduler
//! ```
//!
//! It listens on `BALLISTA_SCHEDULER_PORT` (50050 by default) of 127.0.0.1; see `docs/ballista.md`.

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use table_model::client::TableServiceClient;
use table_model_datafusion::codec::AzureCodec;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let connection = std::env::var("AZURE_STORAGE_CONNECTION_STRING")
        .map_err(|_| "set AZURE_STORAGE_CONNECTION_STRING to the account the scheduler plans its scans in")?;
    let service = TableServiceClient::from_connection_string(&connection, None)?;
    // Ballista uses this codec in place of its own: it hands Ballista's nodes to Ballista's codecs.
    let codec = Arc::new(AzureCodec::new(service).with_fallback(
        Arc::new(BallistaLogicalExtensionCodec::default()),
        Arc::new(BallistaPhysicalExtensionCodec::default()),
    ));
    let port = match std::env::var("BALLISTA_SCHEDULER_PORT") {
        Ok(port) => port.parse().map_err(|e| format!("BALLISTA_SCHEDULER_PORT {port:?} is not a port: {e}"))?,
        Err(_) => 50050,
    };
    let config = SchedulerConfig {
        bind_port: port,
        override_logical_codec: Some(codec.clone()),
        override_physical_codec: Some(codec),
        ..SchedulerConfig::default()
    };
    let address: SocketAddr = format!("{}:{}", config.bind_host, config.bind_port).parse()?;
    let cluster = BallistaCluster::new_from_config(&config).await?;
    start_server(cluster, address, Arc::new(config)).await?;
    Ok(())
}
