//! Reads from the secondary location: Azurite serves the account's secondary at `/<account>-secondary`, and a
//! proxy in front of it sees (and, with the primary down, refuses) each request by its path.

use super::endpoint;
use futures::TryStreamExt as _;
use std::time::Instant;
use table_model::client::azure_core;
use table_model::client::azure_core::http::{ClientOptions, ExponentialRetryOptions, RetryOptions};
use table_model::client::{
    ErrorKind, Location, LocationMode, QueryOptions, RequestOptions, TableServiceClient, TableServiceClientOptions,
};
use table_model::{AccountKey, Entity, PartitionKey, Query, RowKey, TableName, UpdateMode};
use table_model_test_utils::faults::{client, fresh_table, socket_of, DELAY, TRY_TIMEOUT};
use table_model_test_utils::proxy::{Fault, Proxy};

/// A client of the account through `proxy`, reading where `mode` says, with `retries` quick retries.
fn client_through(proxy: &Proxy, url: &str, mode: LocationMode, retries: u32) -> TableServiceClient {
    let account = url.rsplit('/').next().expect("an account");
    let retry = ExponentialRetryOptions {
        initial_delay: azure_core::time::Duration::milliseconds(20),
        max_retries: retries,
        max_total_elapsed: azure_core::time::Duration::seconds(60),
        max_delay: azure_core::time::Duration::milliseconds(200),
    };
    let options = TableServiceClientOptions {
        client_options: ClientOptions { retry: RetryOptions::exponential(retry), ..Default::default() },
        try_timeout: Some(TRY_TIMEOUT),
        location_mode: mode,
        ..Default::default()
    };
    let url = format!("http://{}/{account}", proxy.addr);
    TableServiceClient::new(&url, AccountKey::development(), Some(options)).expect("a valid endpoint")
}

fn keyed(pk: &str, rk: &str) -> Entity {
    let e = Entity::new(PartitionKey::new(pk).expect("valid"), RowKey::new(rk).expect("valid"));
    e.with("Note".parse().unwrap(), format!("{pk}/{rk} é")).unwrap()
}

/// The first path segment of each request line the proxy saw, with its method: `("GET", "devstoreaccount1")`.
fn locations(proxy: &Proxy) -> Vec<(String, String)> {
    proxy
        .lines()
        .iter()
        .map(|line| {
            let mut parts = line.split(' ');
            let method = parts.next().unwrap_or("").to_owned();
            let path = parts.next().unwrap_or("");
            (method, path.trim_start_matches('/').split(['/', '?']).next().unwrap_or("").to_owned())
        })
        .collect()
}

fn key(s: &str) -> (PartitionKey, RowKey) {
    (PartitionKey::new("p").unwrap(), RowKey::new(s).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_go_to_the_secondary_and_writes_never_do() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "Secondary").await;
    let account = url.rsplit('/').next().unwrap().to_owned();
    let proxy = Proxy::scripted(socket_of(&url), Vec::new(), 0, 0, DELAY).await;
    let service = client_through(&proxy, &url, LocationMode::SecondaryOnly, 2);
    let table = service.table_client(name.clone());

    // Writes, under a client that reads from the secondary and with a call that asks for it: the primary.
    table.insert(&keyed("p", "a"), None).await.unwrap();
    let to_secondary = RequestOptions::default().with_location_mode(LocationMode::SecondaryOnly);
    table.upsert(&keyed("p", "b"), UpdateMode::Replace, Some(to_secondary)).await.unwrap();
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.insert(&keyed("p", "c")).unwrap();
    table.submit_transaction(&batch, None).await.unwrap();
    let writes = locations(&proxy);
    assert_eq!(writes.len(), 3);
    assert!(writes.iter().all(|(_, at)| *at == account), "{writes:?}");

    // Reads: the secondary, which says so.
    let (pk, rk) = key("a");
    let (read, location) = table.get_located::<Entity>(&pk, &rk, None).await.unwrap();
    assert_eq!((read.row_key().as_str(), location), ("a", Location::Secondary));
    let mut pager = table.query::<Entity>(&Query::new().top(2), None).unwrap();
    assert_eq!(pager.location(), None, "no page read yet");
    let mut rows = Vec::new();
    while let Some(entity) = pager.try_next().await.unwrap() {
        rows.push(entity.row_key().to_string());
        assert_eq!(pager.location(), Some(Location::Secondary));
    }
    assert_eq!(rows, ["a", "b", "c"]);
    let mut tables = service.list_tables(&Query::new(), None).unwrap();
    let mut found = false;
    while let Some(t) = tables.try_next().await.unwrap() {
        found |= t == name;
    }
    assert!(found && tables.location() == Some(Location::Secondary));
    // A call's own mode wins over the client's.
    let to_primary = RequestOptions::default().with_location_mode(LocationMode::PrimaryOnly);
    let (_, location) = table.get_located::<Entity>(&pk, &rk, Some(to_primary)).await.unwrap();
    assert_eq!(location, Location::Primary);

    let seen = locations(&proxy);
    let secondary = format!("{account}-secondary");
    assert_eq!(seen[3..].iter().filter(|(_, at)| *at == secondary).count(), seen.len() - 4, "{seen:?}");
    assert!(seen.iter().all(|(method, at)| method == "GET" || *at == account), "a write went to {seen:?}");
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_primary_down_reads_fall_over_and_writes_fail_as_before() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "FallOver").await;
    direct.table_client(name.clone()).insert(&keyed("p", "a"), None).await.unwrap();
    let account = url.rsplit('/').next().unwrap().to_owned();

    for down in [Fault::ServerBusy, Fault::CloseBeforeForwarding, Fault::OperationTimedOut] {
        let proxy = Proxy::primary_down(socket_of(&url), down).await;
        let service = client_through(&proxy, &url, LocationMode::PrimaryThenSecondary, 1);
        let table = service.table_client(name.clone());
        let (pk, rk) = key("a");
        let (read, location) = table.get_located::<Entity>(&pk, &rk, None).await.unwrap();
        assert_eq!((read.row_key().as_str(), location), ("a", Location::Secondary), "{down:?}");
        let mut pager = table.query::<Entity>(&Query::new(), None).unwrap();
        assert_eq!(pager.try_next().await.unwrap().map(|e| e.row_key().to_string()).as_deref(), Some("a"));
        assert_eq!(pager.location(), Some(Location::Secondary));
        let listed: Vec<TableName> = service.list_tables(&Query::new(), None).unwrap().try_collect().await.unwrap();
        assert!(listed.contains(&name), "{down:?}");

        // The primary only: the read fails, and names no location (nothing else was tried).
        let primary_only = RequestOptions::default().with_location_mode(LocationMode::PrimaryOnly);
        let err = table.get::<Entity>(&pk, &rk, Some(primary_only)).await.unwrap_err();
        assert_eq!(err.location(), None, "{err}");

        // Writes fail as they did, and nothing reaches the secondary.
        let err = table.insert(&keyed("p", "w"), None).await.unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Transport(_) | ErrorKind::Service(_)), "{down:?}: {err}");
        assert_eq!(err.location(), None, "{err}");
        let err = table.upsert(&keyed("p", "a"), UpdateMode::Merge, None).await.unwrap_err();
        assert_eq!(err.primary_error().map(|_| ()), None, "{err}");
        let seen = locations(&proxy);
        assert!(seen.iter().all(|(method, at)| method == "GET" || *at == account), "{down:?}: {seen:?}");
        // `OperationTimedOut` forwards each try before answering 500: the primary is slow, not down, and the
        // insert may have landed there. The others reach nothing.
        if down != Fault::OperationTimedOut {
            let direct_table = direct.table_client(name.clone());
            let (_, w) = key("w");
            assert!(direct_table.try_get::<Entity>(&pk, &w, None).await.unwrap().is_none(), "{down:?}: written");
        }
    }

    // A refusal that a retry would not retry (404) is the answer: the secondary is not asked.
    let proxy = Proxy::scripted(socket_of(&url), Vec::new(), 0, 0, DELAY).await;
    let table = client_through(&proxy, &url, LocationMode::PrimaryThenSecondary, 1).table_client(name.clone());
    let (pk, missing) = key("missing");
    let err = table.get::<Entity>(&pk, &missing, None).await.unwrap_err();
    assert_eq!((err.status(), err.location()), (Some(404), Some(Location::Primary)), "{err}");
    assert!(locations(&proxy).iter().all(|(_, at)| *at == account));
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test]
async fn an_error_after_both_locations_names_both() {
    // Nothing listens on port 1: both locations refuse the connection.
    let options = TableServiceClientOptions { location_mode: LocationMode::PrimaryThenSecondary, ..Default::default() };
    let service =
        TableServiceClient::new("http://127.0.0.1:1/devstoreaccount1", AccountKey::development(), Some(options))
            .unwrap();
    let table = service.table_client(TableName::from_static("People"));
    let (pk, rk) = key("a");
    let err = table.get::<Entity>(&pk, &rk, None).await.unwrap_err();
    assert_eq!(err.location(), Some(Location::Secondary));
    let primary = err.primary_error().expect("the primary's error");
    assert_eq!(primary.location(), Some(Location::Primary));
    let message = err.to_string();
    assert!(message.contains("at the secondary location, http://127.0.0.1:1/devstoreaccount1-secondary"), "{message}");
    assert!(message.contains("after the primary failed: "), "{message}");
    assert!(message.contains("at the primary location, http://127.0.0.1:1/devstoreaccount1)"), "{message}");

    // An endpoint that does not name its account has no known secondary: nothing is sent.
    let custom = table_model::Endpoint::with_account("http://127.0.0.1:1/", "acme").unwrap();
    let service = TableServiceClient::with_endpoint(custom, AccountKey::development(), None).unwrap();
    let to_secondary = QueryOptions::default().with_location_mode(LocationMode::SecondaryOnly);
    let mut pager = service
        .table_client(TableName::from_static("People"))
        .query::<Entity>(&Query::new(), Some(to_secondary))
        .unwrap();
    let err = pager.try_next().await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::NoSecondary { .. }), "{err}");
}

/// How long a read takes to fall over to the secondary when the primary fails, against a read the primary
/// answers, with the default retry options and with the fault suite's quick ones (BENCHMARKS.md, "Reads from
/// the secondary"). Prints; asserts no timing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn fall_over_time() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "FallOverTime").await;
    direct.table_client(name.clone()).insert(&keyed("p", "a"), None).await.unwrap();
    let (pk, rk) = key("a");
    let up = Proxy::scripted(socket_of(&url), Vec::new(), 0, 0, DELAY).await;
    for (label, retries) in [("quick retries (3, 20 ms doubling)", Some(3)), ("azure_core's default retries", None)] {
        for down in [None, Some(Fault::CloseBeforeForwarding), Some(Fault::ServerBusy), Some(Fault::OperationTimedOut)]
        {
            let proxy = match down {
                Some(fault) => Proxy::primary_down(socket_of(&url), fault).await,
                None => Proxy::scripted(socket_of(&url), Vec::new(), 0, 0, DELAY).await,
            };
            let service = match retries {
                Some(n) => client_through(&proxy, &url, LocationMode::PrimaryThenSecondary, n),
                None => {
                    let account = url.rsplit('/').next().unwrap();
                    let options = TableServiceClientOptions {
                        location_mode: LocationMode::PrimaryThenSecondary,
                        ..Default::default()
                    };
                    let url = format!("http://{}/{account}", proxy.addr);
                    TableServiceClient::new(&url, AccountKey::development(), Some(options)).unwrap()
                }
            };
            let table = service.table_client(name.clone());
            let started = Instant::now();
            let (_, location) = table.get_located::<Entity>(&pk, &rk, None).await.unwrap();
            println!("{label}: primary {down:?}: {location} after {:?}", started.elapsed());
        }
    }
    drop(up);
    direct.delete_table(&name, None).await.unwrap();
}
