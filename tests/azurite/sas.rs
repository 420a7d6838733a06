//! Shared access signatures made by the SDK's builders, used as a user given the shared URL would use them,
//! and stored access policies. Azurite checks permissions, times, the signature, the table and stored policies;
//! it does not check PartitionKey/RowKey ranges nor `sip` (`docs/rules.md` §9.3), which are tested by their
//! string to sign in the crate instead.

use crate::support::{azurite, Azurite};
use chrono::{DateTime, Duration, Utc};
use table_model::client::{Error, ErrorKind, TableClient, TableCredential};
use table_model::sas::{
    AccessPolicy, AccountSas, AccountSasPermissions, AccountSasResourceTypes, KeyBound, PolicyId, SignedIdentifier,
    TableSas, TableSasPermissions,
};
use table_model::{AccountKey, Endpoint, Entity, PartitionKey, RequestErrorKind, RowKey, TableName};

fn entity(rk: &str) -> Entity {
    Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), 1).unwrap()
}

/// Now, in whole seconds (what a SAS and a stored policy keep).
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap()
}

/// A SAS of `table` valid from an hour ago to an hour from now.
fn sas(table: &TableName, permissions: TableSasPermissions) -> TableSas {
    TableSas::new(table.clone())
        .permissions(permissions)
        .start(now() - Duration::hours(1))
        .expiry(now() + Duration::hours(1))
}

/// The shared URL of a SAS for this Azurite.
fn url_of(azurite: &Azurite, sas: &TableSas) -> String {
    sas.url(&Endpoint::parse(&azurite.url).unwrap(), &AccountKey::development()).unwrap()
}

/// The client of `table` a user given `url` makes: no credential but the SAS in the URL.
fn client_at(url: &str, table: &TableName) -> TableClient {
    Azurite::client_at(url, TableCredential::Anonymous).0.table_client(table.clone())
}

fn status(result: Result<impl std::fmt::Debug, Error>) -> u16 {
    let err = result.expect_err("the service refused it");
    err.service().unwrap_or_else(|| panic!("not a service error: {err}")).status()
}

async fn read(client: &TableClient, rk: &str) -> Result<Entity, Error> {
    client.get(&PartitionKey::new("p").unwrap(), &RowKey::new(rk).unwrap(), None).await
}

#[tokio::test]
async fn a_read_only_sas_reads_but_cannot_insert() {
    let azurite = azurite!();
    let table = azurite.table("SasRead").await;
    table.insert(&entity("stored"), None).await.unwrap();
    let shared = client_at(&url_of(&azurite, &sas(table.table(), TableSasPermissions::READ)), table.table());

    assert_eq!(read(&shared, "stored").await.unwrap().get::<i32>("N").unwrap(), 1);
    assert_eq!(status(shared.insert(&entity("new"), None).await), 403);
    assert!(table
        .try_get::<Entity>(&PartitionKey::new("p").unwrap(), &RowKey::new("new").unwrap(), None)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn an_add_only_sas_inserts_but_cannot_read() {
    let azurite = azurite!();
    let table = azurite.table("SasAdd").await;
    let shared = client_at(&url_of(&azurite, &sas(table.table(), TableSasPermissions::ADD)), table.table());

    shared.insert(&entity("added"), None).await.unwrap();
    assert_eq!(status(read(&shared, "added").await), 403);
    assert!(read(&table, "added").await.is_ok());
}

#[tokio::test]
async fn an_expired_or_not_yet_valid_sas_is_refused() {
    let azurite = azurite!();
    let table = azurite.table("SasTime").await;
    table.insert(&entity("stored"), None).await.unwrap();
    let window = |from: Duration, to: Duration| {
        let sas = TableSas::new(table.table().clone())
            .permissions(TableSasPermissions::READ)
            .start(now() + from)
            .expiry(now() + to);
        client_at(&url_of(&azurite, &sas), table.table())
    };

    assert!(read(&window(Duration::hours(-1), Duration::hours(1)), "stored").await.is_ok());
    assert_eq!(status(read(&window(Duration::hours(-2), Duration::hours(-1)), "stored").await), 403);
    assert_eq!(status(read(&window(Duration::hours(1), Duration::hours(2)), "stored").await), 403);
}

#[tokio::test]
async fn a_tampered_sas_is_refused() {
    let azurite = azurite!();
    let table = azurite.table("SasTamper").await;
    table.insert(&entity("stored"), None).await.unwrap();
    let url = url_of(&azurite, &sas(table.table(), TableSasPermissions::READ));
    assert!(read(&client_at(&url, table.table()), "stored").await.is_ok());

    // More permissions than were signed.
    let widened = url.replace("&sp=r&", "&sp=raud&");
    assert_ne!(widened, url);
    assert_eq!(status(read(&client_at(&widened, table.table()), "stored").await), 403);
    // Another signature.
    let (head, sig) = url.rsplit_once("&sig=").unwrap();
    let flipped = if sig.starts_with('A') { "B" } else { "A" };
    let forged = format!("{head}&sig={flipped}{}", &sig[1..]);
    assert_eq!(status(read(&client_at(&forged, table.table()), "stored").await), 403);
    // Another table than the one signed.
    let other = azurite.table("SasOther").await;
    let moved = url.replace(&format!("&tn={}&", table.table()), &format!("&tn={}&", other.table()));
    assert_eq!(status(read(&client_at(&moved, other.table()), "stored").await), 403);
}

#[tokio::test]
async fn key_bounds_no_key_holds_are_signed_as_the_service_reads_them() {
    let azurite = azurite!();
    let table = azurite.table("SasBounds").await;
    table.insert(&entity("stored"), None).await.unwrap();
    // `/`, `?`, `#` and `\` are bounds, not keys; the token carries `/` as it is and the others encoded. Azurite
    // checks the signature over the bounds it decodes (it does not enforce the range, and answers 500 to a `%`
    // in a bound: `docs/rules.md` §9.3), so a read proves they are signed as the service reads them.
    let bound = |text: &str| KeyBound::new(text).unwrap();
    let bounded = sas(table.table(), TableSasPermissions::READ)
        .start_partition_key(bound("a/b?c#d\\e"))
        .start_row_key(bound("//"))
        .end_partition_key(bound("q/?#"))
        .end_row_key(bound("z é+&="));
    let url = url_of(&azurite, &bounded);
    assert!(url.contains("&spk=a/b%3Fc%23d%5Ce&srk=//&epk=q/%3F%23&erk=z%20%C3%A9%2B%26%3D&"), "{url}");
    assert!(read(&client_at(&url, table.table()), "stored").await.is_ok());
    // The same token with one bound changed is refused: the bounds are signed.
    let moved = url.replace("&epk=q/%3F%23&", "&epk=q/%3F%24&");
    assert_ne!(moved, url);
    assert_eq!(status(read(&client_at(&moved, table.table()), "stored").await), 403);
}

#[tokio::test]
async fn permissions_signed_in_the_order_given() {
    let azurite = azurite!();
    let table = azurite.table("SasOrder").await;
    table.insert(&entity("stored"), None).await.unwrap();
    // `ar` rather than the service's `ra`, as some tools sign it.
    let given = sas(table.table(), TableSasPermissions::in_order("ar").unwrap());
    let url = url_of(&azurite, &given);
    assert!(url.contains("&sp=ar&"), "{url}");
    let shared = client_at(&url, table.table());
    assert!(read(&shared, "stored").await.is_ok());
    shared.insert(&entity("added"), None).await.unwrap();
    let (p, added) = (PartitionKey::new("p").unwrap(), RowKey::new("added").unwrap());
    assert_eq!(status(shared.delete_by_keys(&p, &added, None).await), 403);
}

#[tokio::test]
async fn a_sas_naming_a_stored_policy_works_until_the_policy_is_removed() {
    let azurite = azurite!();
    let table = azurite.table("SasPolicy").await;
    table.insert(&entity("stored"), None).await.unwrap();
    let id = PolicyId::new("readers").unwrap();
    let policy = full(TableSasPermissions::READ);
    table.set_access_policy(&[SignedIdentifier::new(id.clone(), policy)], None).await.unwrap();

    // The SAS holds nothing but the policy's name: permissions and expiry come from the table.
    let url = url_of(&azurite, &TableSas::new(table.table().clone()).policy(id));
    assert!(!url.contains("&sp=") && !url.contains("se="));
    let shared = client_at(&url, table.table());
    assert!(read(&shared, "stored").await.is_ok());
    assert_eq!(status(shared.insert(&entity("new"), None).await), 403);

    table.set_access_policy(&[], None).await.unwrap();
    assert_eq!(status(read(&shared, "stored").await), 403);
}

/// A policy valid from an hour ago to an hour from now. Azurite refuses (`400`, no code) a policy without all
/// three of start, expiry and permissions, which the service takes (`docs/rules.md` §9.3).
fn full(permissions: TableSasPermissions) -> AccessPolicy {
    AccessPolicy::new(permissions).with_start(now() - Duration::hours(1)).with_expiry(now() + Duration::hours(1))
}

#[tokio::test]
async fn access_policies_round_trip() {
    let azurite = azurite!();
    let table = azurite.table("SasAcl").await;
    assert!(table.get_access_policy(None).await.unwrap().is_empty());

    let policies = [
        SignedIdentifier::new(
            PolicyId::new("all rights & more").unwrap(),
            AccessPolicy::new(TableSasPermissions::all())
                .with_start(now() - Duration::days(1))
                .with_expiry(now() + Duration::days(30)),
        ),
        SignedIdentifier::new(PolicyId::new("readers").unwrap(), full(TableSasPermissions::READ)),
        SignedIdentifier::new(
            PolicyId::new("writers").unwrap(),
            full(TableSasPermissions::ADD | TableSasPermissions::UPDATE),
        ),
    ];
    table.set_access_policy(&policies, None).await.unwrap();
    assert_eq!(table.get_access_policy(None).await.unwrap(), policies);

    // A sixth policy is refused before anything is sent; the five stored stay.
    let six: Vec<SignedIdentifier> = (0..6)
        .map(|i| SignedIdentifier::new(PolicyId::new(format!("p{i}")).unwrap(), full(TableSasPermissions::READ)))
        .collect();
    let err = table.set_access_policy(&six, None).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Request(e) if matches!(e.kind(), RequestErrorKind::AccessPolicy(_))),
        "{err}"
    );
    table.set_access_policy(&six[..5], None).await.unwrap();
    assert_eq!(table.get_access_policy(None).await.unwrap(), &six[..5]);
}

#[tokio::test]
async fn an_account_sas_works_within_its_permissions() {
    let azurite = azurite!();
    let endpoint = Endpoint::parse(&azurite.url).unwrap();
    let key = AccountKey::development();
    let expiry = now() + Duration::hours(1);

    // Every permission (`rwdlacup`, as the Python SDK signs them all) and the resource types in the Python
    // SDK's order, `soc`.
    let all = AccountSas::new(AccountSasResourceTypes::in_order("soc").unwrap(), AccountSasPermissions::all(), expiry);
    let all = all.url(&endpoint, &key).unwrap();
    assert!(all.contains("&sp=rwdlacup&") && all.contains("&srt=soc&"), "{all}");
    let (service, _) = Azurite::client_at(&all, TableCredential::Anonymous);
    let name = crate::support::unique_name("SasAccount");
    let table = azurite.guard(service.create_table(&name, None).await.unwrap());
    table.insert(&entity("stored"), None).await.unwrap();
    assert!(read(&table, "stored").await.is_ok());

    // Read and list only: reading works, creating a table does not.
    let read_only = AccountSas::new(
        AccountSasResourceTypes::all(),
        AccountSasPermissions::READ | AccountSasPermissions::LIST,
        expiry,
    );
    let (reader, _) = Azurite::client_at(&read_only.url(&endpoint, &key).unwrap(), TableCredential::Anonymous);
    assert!(read(&reader.table_client(name.clone()), "stored").await.is_ok());
    let other = crate::support::unique_name("SasAccountNo");
    assert_eq!(status(reader.create_table(&other, None).await), 403);

    // The same, signed as `lr`.
    let given = AccountSas::new(AccountSasResourceTypes::all(), AccountSasPermissions::in_order("lr").unwrap(), expiry);
    let given = given.url(&endpoint, &key).unwrap();
    assert!(given.contains("&sp=lr&"), "{given}");
    let (reader, _) = Azurite::client_at(&given, TableCredential::Anonymous);
    assert!(read(&reader.table_client(name.clone()), "stored").await.is_ok());
    assert_eq!(status(reader.create_table(&other, None).await), 403);
}
