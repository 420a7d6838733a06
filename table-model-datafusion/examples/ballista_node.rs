//! A Ballista scheduler or executor for plans over Azure Tables, each with its own client of the account (from
//! `AZURE_STORAGE_CONNECTION_STRING`) in its `AzureCodec`; one program for both, so the pair builds once.
//!
//! - `scheduler`: decodes the client's logical plans (an `AzureTable` travels as its account's endpoint, its name
//!   and its schema) and plans each scan's key ranges. It listens on `BALLISTA_SCHEDULER_PORT` (50050 by
//!   default) of 127.0.0.1.
//! - `executor`: decodes the scans of the tasks it is given (the endpoint, the table, the query, its key ranges;
//!   never a credential) and reads them. It registers with the scheduler at
//!   `BALLISTA_SCHEDULER_HOST`:`BALLISTA_SCHEDULER_PORT` (localhost:50050 by default) and serves its shuffle data
//!   on `BALLISTA_EXECUTOR_PORT` (50051) and its gRPC on the next port.
//!
//! ```text
//! AZURE_STORAGE_CONNECTION_STRING='...' cargo run -p table-model-datafusion --features ballista-node \
//!     --example ballista_node -- scheduler
//! AZURE_STORAGE_CONNECTION_STRING='...' BALLISTA_EXECUTOR_PORT=50051 \
//!     cargo run -p table-model-datafusion --features ballista-node --example ballista_node -- executor
//! ```
//!
//! See `docs/ballista.md`.

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use std::error::Error;
use std::net::SocketAddr;
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
    let role = std::env::args().nth(1).unwrap_or_default();
    if role != "scheduler" && role != "executor" {
        return Err(format!("give the role of this node, `scheduler` or `executor`, not {role:?}").into());
    }
    let connection = std::env::var("AZURE_STORAGE_CONNECTION_STRING")
        .map_err(|_| format!("set AZURE_STORAGE_CONNECTION_STRING to the account the {role} reads"))?;
    let service = TableServiceClient::from_connection_string(&connection, None)?;
    // Ballista uses this codec in place of its own: it hands Ballista's nodes to Ballista's codecs.
    let codec = Arc::new(AzureCodec::new(service).with_fallback(
        Arc::new(BallistaLogicalExtensionCodec::default()),
        Arc::new(BallistaPhysicalExtensionCodec::default()),
    ));
    let scheduler_port = port_var("BALLISTA_SCHEDULER_PORT", 50050)?;
    if role == "scheduler" {
        let config = SchedulerConfig {
            bind_port: scheduler_port,
            override_logical_codec: Some(codec.clone()),
            override_physical_codec: Some(codec),
            ..SchedulerConfig::default()
        };
        let address: SocketAddr = format!("{}:{}", config.bind_host, config.bind_port).parse()?;
        let cluster = BallistaCluster::new_from_config(&config).await?;
        start_server(cluster, address, Arc::new(config)).await?;
    } else {
        let port = port_var("BALLISTA_EXECUTOR_PORT", 50051)?;
        let config = ExecutorProcessConfig {
            scheduler_host: std::env::var("BALLISTA_SCHEDULER_HOST").unwrap_or_else(|_| "localhost".to_owned()),
            scheduler_port,
            port,
            grpc_port: port.checked_add(1).ok_or("BALLISTA_EXECUTOR_PORT leaves no port for gRPC above it")?,
            override_logical_codec: Some(codec.clone()),
            override_physical_codec: Some(codec),
            ..ExecutorProcessConfig::default()
        };
        start_executor_process(Arc::new(config)).await?;
    }
    Ok(())
}
