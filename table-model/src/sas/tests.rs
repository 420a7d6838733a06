use super::*;
use crate::connection::{AccountKey, Endpoint};
use crate::key::{PartitionKey, RowKey};
use crate::name::TableName;
use percent_encoding::percent_decode_str;
use proptest::prelude::*;

fn time(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn table(name: &str) -> TableName {
    TableName::new(name).unwrap()
}

/// The token's parameters, decoded, in order.
fn params(token: &SasToken) -> Vec<(String, String)> {
    token
        .as_str()
        .split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap();
            (k.to_owned(), percent_decode_str(v).decode_utf8().unwrap().into_owned())
        })
        .collect()
}

fn param(token: &SasToken, name: &str) -> Option<String> {
    params(token).into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

// The published vectors of the JavaScript SDK: Azure/azure-sdk-for-js
// `sdk/tables/data-tables/test/internal/fakeTestSecrets.ts` (`expectedSas1` to `expectedSas7`), made by
// `test/internal/node/generateSas.spec.ts` with `AzureNamedKeyCredential("keyName", "keySecret")` and the clock
// at 2021-12-12T00:00:00Z (a default expiry of one hour, default permissions `r` for a table and `rl` for the
// account, resource types `sco`). Node decodes the key "keySecret" as base64 leniently, dropping the last
// character: the key bytes are those of "keySecre". The token's parameter order differs from ours; the
// signature, over the same string to sign, must not.
mod js_sdk {
    use super::*;

    fn key() -> AccountKey {
        AccountKey::from_base64("keySecre").unwrap()
    }

    const HOUR: &str = "2021-12-12T01:00:00Z";
    const YEAR: &str = "2022-12-12T00:00:00Z";

    fn table_sig(sas: TableSas) -> String {
        param(&sas.sign("keyName", &key()).unwrap(), "sig").unwrap()
    }

    fn account_sig(permissions: AccountSasPermissions, expiry: &str) -> String {
        let sas = AccountSas::new(AccountSasResourceTypes::all(), permissions, time(expiry));
        param(&sas.sign("keyName", &key()).unwrap(), "sig").unwrap()
    }

    #[test]
    fn table_sas() {
        let sas = || TableSas::new(table("testTable"));
        let read = sas().permissions(TableSasPermissions::READ).expiry(time(HOUR));
        assert_eq!(
            read.string_to_sign("keyName").unwrap(),
            "r\n\n2021-12-12T01:00:00Z\n/table/keyName/testtable\n\n\n\n2019-02-02\n\n\n\n"
        );
        // expectedSas1
        assert_eq!(table_sig(read), "lZxPmk+pMuu2MRXxeTZoBV6m3eobZKuIkYcHLDdDt2Q=");
        // expectedSas2
        let add_delete = sas().permissions(TableSasPermissions::ADD | TableSasPermissions::DELETE).expiry(time(HOUR));
        assert_eq!(table_sig(add_delete), "bf2oeXb/VL9hzbd5ZWngdNJoR+kyDp0vPZz/DGJt1d4=");
        // expectedSas3
        let year = sas().permissions(TableSasPermissions::READ).expiry(time(YEAR));
        assert_eq!(table_sig(year), "Jm1wKNTA0/HH8u9S8dSjqdZKtFKYr7whXnxDy3RKsxU=");
        // expectedSas4: a stored policy holds the permissions and the expiry.
        let policy = sas().policy(PolicyId::new("MyAccessPolicy").unwrap());
        let token = policy.sign("keyName", &key()).unwrap();
        assert_eq!(param(&token, "sp"), None);
        assert_eq!(param(&token, "si").as_deref(), Some("MyAccessPolicy"));
        assert_eq!(table_sig(policy), "bXpQx/OSDR8oGiqi1QJekrwS5MBf+di6x/Clf9QVKgg=");
    }

    #[test]
    fn account_sas() {
        let rl = AccountSasPermissions::READ | AccountSasPermissions::LIST;
        let sas = AccountSas::new(AccountSasResourceTypes::all(), rl, time(HOUR));
        assert_eq!(
            sas.string_to_sign("keyName").unwrap(),
            "keyName\nrl\nt\nsco\n\n2021-12-12T01:00:00Z\n\n\n2019-02-02\n"
        );
        // expectedSas5, expectedSas6 (`sp=da`: the canonical order puts d before a), expectedSas7
        assert_eq!(account_sig(rl, HOUR), "Yuhy3+Spfj+FWmSoxa1GAxtX6IOKvX6qGnHIKn/LHD0=");
        let da = AccountSasPermissions::ADD | AccountSasPermissions::DELETE;
        assert_eq!(da.to_string(), "da");
        assert_eq!(account_sig(da, HOUR), "TmE8AOQFacynVIVR5ljBYqY3Y3K6olfdDMLl09iRvvs=");
        assert_eq!(account_sig(rl, YEAR), "y42pmN9E/gA2O3nGn25lx++qQmhvh0WqFi4+kOPitwA=");
    }
}

// Tokens made here with the Python SDK, azure-data-tables 12.7.0 from PyPI, with the development account key:
//
//   from datetime import datetime, timezone
//   from azure.core.credentials import AzureNamedKeyCredential
//   from azure.data.tables import (generate_table_sas, generate_account_sas, TableSasPermissions,
//       AccountSasPermissions, ResourceTypes)
//   cred = AzureNamedKeyCredential("devstoreaccount1", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
//   exp = datetime(2026, 11, 23, 0, 0, 0, tzinfo=timezone.utc)
//   generate_table_sas(cred, "AuditLog", permission=TableSasPermissions(read=True, add=True, update=True, delete=True),
//       start=datetime(2026, 11, 22, 0, 0, 0, 750000, tzinfo=timezone.utc),
//       expiry=datetime(2026, 11, 23, 12, 30, 45, 999999, tzinfo=timezone.utc),
//       ip_address_or_range="168.1.5.60-168.1.5.70", protocol="https", policy_id="audit-readers",
//       start_pk="tenant 1", start_rk="a&b=c", end_pk="tenant 9", end_rk="z+é")            # FULL
//   generate_table_sas(cred, "AuditLog", permission=TableSasPermissions(read=True), expiry=exp)   # READ
//   generate_table_sas(cred, "AuditLog", policy_id="audit-readers")                         # POLICY
//   generate_account_sas(cred, resource_types="sco", permission=AccountSasPermissions(read=True, write=True,
//       delete=True, list=True, add=True, create=True, update=True),
//       start=datetime(2026, 11, 22, 0, 0, 0, 500000, tzinfo=timezone.utc),
//       expiry=exp, ip_address_or_range="10.0.0.1", protocol="https,http")                 # ACCOUNT
//   generate_table_sas(cred, "AuditLog", permission=TableSasPermissions(read=True), expiry=exp,
//       start_pk="logs/2026?q#1", start_rk="a\\b/c", end_pk="logs/2027", end_rk="~%+ é?")   # BOUNDS
//   generate_account_sas(cred, resource_types=ResourceTypes(service=True, container=True, object=True),
//       permission=AccountSasPermissions(read=True, write=True, delete=True, list=True, add=True, create=True,
//       update=True, process=True), expiry=exp)                                             # PROCESS
//   generate_table_sas(cred, "AuditLog", permission="dr", expiry=exp)                      # AS_GIVEN
//   generate_account_sas(cred, resource_types=ResourceTypes(object=True), permission="lr", expiry=exp)  # ACCOUNT_AS_GIVEN
//
// The SDK's `quote` percent-encodes every value but for ASCII letters, digits, `-._~` and `/`; the tokens made
// here are the SDK's byte for byte.
mod python_sdk {
    use super::*;
    use crate::connection::DEVELOPMENT_ACCOUNT;

    const FULL: &str = "st=2026-11-22T00%3A00%3A00Z&se=2026-11-23T12%3A30%3A45Z&sp=raud&sip=168.1.5.60-168.1.5.70\
        &spr=https&sv=2019-02-02&si=audit-readers&tn=AuditLog&spk=tenant%201&srk=a%26b%3Dc&epk=tenant%209\
        &erk=z%2B%C3%A9&sig=sLZwq9kBbgtn6Y/0uGAlvvFt%2BEznq5IV8DQmZ/ww0VM%3D";
    const READ: &str =
        "se=2026-11-23T00%3A00%3A00Z&sp=r&sv=2019-02-02&tn=AuditLog&sig=krFfGJyqWSE8htOD23BwXeDbTgSY0npqRfiq%2BYlWNV4%3D";
    const POLICY: &str =
        "sv=2019-02-02&si=audit-readers&tn=AuditLog&sig=l1Zc/4/ZBae6/m8sOa4sbnJ7Poh0252uu9tXBVDMDAA%3D";
    const ACCOUNT: &str = "st=2026-11-22T00%3A00%3A00Z&se=2026-11-23T00%3A00%3A00Z&sp=rwdlacu&sip=10.0.0.1\
        &spr=https%2Chttp&sv=2019-02-02&ss=t&srt=sco&sig=w1RSIqTomkIrMeDzYX7uGP7l9We11jEh1XiLkGP7I5Y%3D";
    const BOUNDS: &str = "se=2026-11-23T00%3A00%3A00Z&sp=r&sv=2019-02-02&tn=AuditLog&spk=logs/2026%3Fq%231\
        &srk=a%5Cb/c&epk=logs/2027&erk=~%25%2B%20%C3%A9%3F&sig=6%2BAGCW7bi/tA%2BJmRoyspsauR3dDnFHHtHmAHfZGlIRE%3D";
    const PROCESS: &str = "se=2026-11-23T00%3A00%3A00Z&sp=rwdlacup&sv=2019-02-02&ss=t&srt=soc\
        &sig=xVrFHzvjrdJFOJoFeiFbUZ0xYq0f5IeI7TU7ZZapzNQ%3D";
    const AS_GIVEN: &str =
        "se=2026-11-23T00%3A00%3A00Z&sp=dr&sv=2019-02-02&tn=AuditLog&sig=rxivAVLAjD1WGP5nJCIwOCZIchJSQOFQ058UsjuuBXg%3D";
    const ACCOUNT_AS_GIVEN: &str = "se=2026-11-23T00%3A00%3A00Z&sp=lr&sv=2019-02-02&ss=t&srt=o\
        &sig=nyR/he3Qnv/dJowy%2Bssd5Oh/HquCsm/Uyw4tYu0U6p0%3D";

    const EXPIRY: &str = "2026-11-23T00:00:00Z";

    fn sign(sas: &TableSas) -> String {
        sas.sign(DEVELOPMENT_ACCOUNT, &AccountKey::development()).unwrap().as_str().to_owned()
    }

    fn sign_account(sas: &AccountSas) -> String {
        sas.sign(DEVELOPMENT_ACCOUNT, &AccountKey::development()).unwrap().as_str().to_owned()
    }

    fn full() -> TableSas {
        TableSas::new(table("AuditLog"))
            .permissions(TableSasPermissions::all())
            .start(time("2026-11-22T00:00:00.75Z"))
            .expiry(time("2026-11-23T12:30:45.999999Z"))
            .ip(SasIpRange::range(Ipv4Addr::new(168, 1, 5, 60), Ipv4Addr::new(168, 1, 5, 70)).unwrap())
            .protocol(SasProtocol::Https)
            .policy(PolicyId::new("audit-readers").unwrap())
            .start_partition_key(PartitionKey::new("tenant 1").unwrap())
            .start_row_key(RowKey::new("a&b=c").unwrap())
            .end_partition_key(PartitionKey::new("tenant 9").unwrap())
            .end_row_key(RowKey::new("z+é").unwrap())
    }

    #[test]
    fn every_field_and_key_ranges() {
        // Key bounds are signed decoded, the table name lowercased, fractions of a second dropped, and no
        // line feed ends the string.
        assert_eq!(
            full().string_to_sign(DEVELOPMENT_ACCOUNT).unwrap(),
            "raud\n2026-11-22T00:00:00Z\n2026-11-23T12:30:45Z\n/table/devstoreaccount1/auditlog\naudit-readers\n\
             168.1.5.60-168.1.5.70\nhttps\n2019-02-02\ntenant 1\na&b=c\ntenant 9\nz+é"
        );
        // In the token they are percent-encoded, a space as `%20` (never `+`), and the table name is as given;
        // the `/` of the signature stays as it is.
        let token = sign(&full());
        assert_eq!(token, FULL);
        assert!(token.contains("&spk=tenant%201&") && !token.contains('+'));
    }

    #[test]
    fn bounds_that_no_key_holds() {
        // `/`, `?`, `#` and `\` are bounds, not keys: signed as they are, and in the token `?`, `#` and `\`
        // percent-encoded, `/` left as it is, as the SDK's `quote` does.
        let bound = |text: &str| KeyBound::new(text).unwrap();
        let sas = TableSas::new(table("AuditLog"))
            .permissions(TableSasPermissions::READ)
            .expiry(time(EXPIRY))
            .start_partition_key(bound("logs/2026?q#1"))
            .start_row_key(bound("a\\b/c"))
            .end_partition_key(bound("logs/2027"))
            .end_row_key(bound("~%+ é?"));
        assert!(sas
            .string_to_sign(DEVELOPMENT_ACCOUNT)
            .unwrap()
            .ends_with("\n2019-02-02\nlogs/2026?q#1\na\\b/c\nlogs/2027\n~%+ é?"));
        assert_eq!(sign(&sas), BOUNDS);
        assert_eq!(
            param(&sas.sign("acct", &AccountKey::development()).unwrap(), "spk").as_deref(),
            Some("logs/2026?q#1")
        );
    }

    #[test]
    fn fewest_fields() {
        let read = TableSas::new(table("AuditLog")).permissions(TableSasPermissions::READ).expiry(time(EXPIRY));
        assert_eq!(sign(&read), READ);
        let policy = TableSas::new(table("AuditLog")).policy(PolicyId::new("audit-readers").unwrap());
        assert_eq!(sign(&policy), POLICY);
    }

    #[test]
    fn account() {
        let sas = AccountSas::new(
            AccountSasResourceTypes::all(),
            AccountSasPermissions::parse("rwdlacu").unwrap(),
            time(EXPIRY),
        )
        .start(time("2026-11-22T00:00:00.5Z"))
        .ip(SasIpRange::single(Ipv4Addr::new(10, 0, 0, 1)))
        .protocol(SasProtocol::HttpsAndHttp);
        assert_eq!(
            sas.string_to_sign(DEVELOPMENT_ACCOUNT).unwrap(),
            "devstoreaccount1\nrwdlacu\nt\nsco\n2026-11-22T00:00:00Z\n2026-11-23T00:00:00Z\n10.0.0.1\nhttps,http\n\
             2019-02-02\n"
        );
        assert_eq!(sign_account(&sas), ACCOUNT);
    }

    #[test]
    fn every_account_permission() {
        // The SDK's `AccountSasPermissions` with every flag writes `rwdlacup`, and its `ResourceTypes` with every
        // flag writes `soc`, which `in_order` signs as given.
        let types = AccountSasResourceTypes::in_order("soc").unwrap();
        let sas = AccountSas::new(types, AccountSasPermissions::all(), time(EXPIRY));
        assert_eq!(
            sas.string_to_sign(DEVELOPMENT_ACCOUNT).unwrap(),
            "devstoreaccount1\nrwdlacup\nt\nsoc\n\n2026-11-23T00:00:00Z\n\n\n2019-02-02\n"
        );
        assert_eq!(sign_account(&sas), PROCESS);
    }

    #[test]
    fn permissions_as_given() {
        let dr = TableSasPermissions::in_order("dr").unwrap();
        let sas = TableSas::new(table("AuditLog")).permissions(dr).expiry(time(EXPIRY));
        assert_eq!(sign(&sas), AS_GIVEN);
        let lr = AccountSasPermissions::in_order("lr").unwrap();
        let sas = AccountSas::new(AccountSasResourceTypes::OBJECT, lr, time(EXPIRY));
        assert_eq!(sign_account(&sas), ACCOUNT_AS_GIVEN);
    }

    #[test]
    fn urls_the_client_takes() {
        let endpoint = Endpoint::parse("http://127.0.0.1:10002/devstoreaccount1").unwrap();
        let url = full().url(&endpoint, &AccountKey::development()).unwrap();
        assert_eq!(url, format!("http://127.0.0.1:10002/devstoreaccount1?{FULL}"));
        assert!(url.parse::<http::Uri>().is_ok());
    }
}

#[test]
fn letters_in_canonical_order() {
    assert_eq!(TableSasPermissions::empty().to_string(), "");
    assert_eq!((TableSasPermissions::DELETE | TableSasPermissions::ADD).to_string(), "ad");
    assert_eq!(TableSasPermissions::parse("duar"), Ok(TableSasPermissions::all()));
    assert_eq!(TableSasPermissions::parse(""), Ok(TableSasPermissions::empty()));
    assert_eq!(AccountSasPermissions::all().to_string(), "rwdlacup");
    assert_eq!(AccountSasPermissions::parse("puca"), Ok(AccountSasPermissions::parse("acup").unwrap()));
    assert_eq!((AccountSasResourceTypes::OBJECT | AccountSasResourceTypes::CONTAINER).to_string(), "co");
    assert!(TableSasPermissions::all().contains(TableSasPermissions::UPDATE));
    assert!(!TableSasPermissions::READ.contains(TableSasPermissions::UPDATE));
    assert_eq!(format!("{:?}", TableSasPermissions::READ), "TableSasPermissions(\"r\")");
}

#[test]
fn letters_that_are_not_a_sets_are_typed_errors() {
    let e = TableSasPermissions::parse("rr").unwrap_err();
    assert_eq!(e.kind(), &SasErrorKind::RepeatedLetter { field: "sp", letter: 'r', index: 1 });
    assert_eq!(
        e.to_string(),
        "invalid shared access signature: `sp` (permissions) has `r` again at index 1; give each letter once"
    );
    let e = TableSasPermissions::parse("raw").unwrap_err();
    assert_eq!(e.kind(), &SasErrorKind::UnknownLetter { field: "sp", letter: 'w', index: 2, allowed: "raud" });
    assert_eq!(
        AccountSasPermissions::parse("ré").unwrap_err().to_string(),
        "invalid shared access signature: `sp` (permissions) has `é` at index 1, which is not one of `rwdlacup`"
    );
    // The letters are case-sensitive; a space is shown by its code point.
    assert_eq!(
        AccountSasResourceTypes::parse("S").unwrap_err().to_string(),
        "invalid shared access signature: `srt` (resource types) has `S` at index 0, which is not one of `sco`"
    );
    assert_eq!(
        "r d".parse::<TableSasPermissions>().unwrap_err().to_string(),
        "invalid shared access signature: `sp` (permissions) has U+0020 at index 1, which is not one of `raud`"
    );
    // Letters the service defines for the Blob service only, in versions after 2019-02-02.
    for letter in ["x", "y", "t", "f", "i"] {
        assert!(matches!(
            AccountSasPermissions::parse(letter).unwrap_err().kind(),
            SasErrorKind::UnknownLetter { index: 0, .. }
        ));
    }
    assert!(matches!(
        AccountSasPermissions::in_order("lrl").unwrap_err().kind(),
        SasErrorKind::RepeatedLetter { letter: 'l', index: 2, .. }
    ));
}

#[test]
fn letters_in_the_order_given() {
    let dr = TableSasPermissions::in_order("dr").unwrap();
    let rd = TableSasPermissions::READ | TableSasPermissions::DELETE;
    assert_eq!((dr.to_string(), format!("{dr:?}")), ("dr".to_owned(), "TableSasPermissions(\"dr\")".to_owned()));
    // Equal exactly when written alike; the same permissions either way.
    assert_ne!(dr, rd);
    assert_eq!(TableSasPermissions::in_order("rd").unwrap(), rd);
    assert!(dr.contains(rd) && rd.contains(dr) && !dr.is_empty());
    // `|` writes the service's order.
    assert_eq!(dr | TableSasPermissions::empty(), rd);
    let mut combined = AccountSasPermissions::in_order("pcr").unwrap();
    combined |= AccountSasPermissions::WRITE;
    assert_eq!(combined.to_string(), "rwcp");
    // Every letter of the largest set, backwards.
    assert_eq!(AccountSasPermissions::in_order("pucaldwr").unwrap().to_string(), "pucaldwr");
    assert_eq!(AccountSasResourceTypes::in_order("soc").unwrap().to_string(), "soc");
    assert_eq!(AccountSasResourceTypes::in_order("").unwrap(), AccountSasResourceTypes::empty());
}

#[test]
fn ip_ranges_read_from_text() {
    let ip = |text: &str| text.parse::<SasIpRange>();
    assert_eq!(ip("10.0.0.1").unwrap(), SasIpRange::single(Ipv4Addr::new(10, 0, 0, 1)));
    let range = ip("168.1.5.60-168.1.5.70").unwrap();
    assert_eq!(range.to_string(), "168.1.5.60-168.1.5.70");
    assert_eq!(ip(&range.to_string()).unwrap(), range);
    assert_eq!(ip("10.0.0.1-10.0.0.1").unwrap().to_string(), "10.0.0.1");
    assert_eq!(
        ip("10.0.0.9-10.0.0.1").unwrap_err().kind(),
        &SasErrorKind::InvalidIpRange { start: Ipv4Addr::new(10, 0, 0, 9), end: Ipv4Addr::new(10, 0, 0, 1) }
    );
    for bad in
        ["", "10.0.0", "10.0.0.256", "010.0.0.1", " 10.0.0.1", "10.0.0.1-", "-10.0.0.1", "1.2.3.4-5.6.7.8-9", "::1"]
    {
        assert_eq!(ip(bad).unwrap_err().kind(), &SasErrorKind::IpRangeSyntax { value: bad.to_owned() }, "{bad:?}");
    }
    assert_eq!(
        ip("10.0.0.1 - 10.0.0.2").unwrap_err().to_string(),
        "invalid shared access signature: `sip` (IP range) must be an IPv4 address or two joined by `-`, found \
         \"10.0.0.1 - 10.0.0.2\""
    );
}

#[test]
fn account_names_are_checked() {
    let key = AccountKey::development();
    let table_sas =
        TableSas::new(table("t1x")).permissions(TableSasPermissions::READ).expiry(time("2026-11-23T00:00:00Z"));
    let account_sas =
        AccountSas::new(AccountSasResourceTypes::OBJECT, AccountSasPermissions::READ, time("2026-11-23T00:00:00Z"));
    // Storage, the emulator, Cosmos DB (hyphens), and an uppercase name as an endpoint may give it.
    for good in ["acme", "devstoreaccount1", "my-cosmos-account-01", "Acct"] {
        assert!(table_sas.sign(good, &key).is_ok(), "{good}");
        assert!(account_sas.sign(good, &key).is_ok(), "{good}");
    }
    for bad in ["", "acme\n", "acme\nrwdlacu", "a/b", "a b", "acme.table", "a:b", "é"] {
        let e = table_sas.sign(bad, &key).unwrap_err();
        assert_eq!(e.kind(), &SasErrorKind::InvalidAccountName { account: bad.to_owned() });
        assert_eq!(account_sas.string_to_sign(bad).unwrap_err(), e);
    }
    assert_eq!(
        table_sas.sign("acme\n", &key).unwrap_err().to_string(),
        "invalid shared access signature: account name \"acme\\n\" must be ASCII letters, digits and `-`"
    );
}

#[test]
fn key_bounds() {
    let key = AccountKey::development();
    // Every key is a bound; so is what no key can hold but a control character.
    assert_eq!(KeyBound::from(PartitionKey::new("p").unwrap()), KeyBound::new("p").unwrap());
    assert_eq!(KeyBound::from(&RowKey::new("r").unwrap()).as_str(), "r");
    let long = "x".repeat(2000);
    for text in ["a/b", "a\\b", "a#b", "a?b", "%2F", "", long.as_str()] {
        assert_eq!(text.parse::<KeyBound>().unwrap().as_str(), text);
    }
    for (text, ch, index) in [("a\nb", '\n', 1), ("\t", '\t', 0), ("é\u{7f}", '\u{7f}', 2), ("x\u{9f}", '\u{9f}', 1)] {
        assert_eq!(KeyBound::new(text).unwrap_err().kind(), &SasErrorKind::KeyBoundCharacter { ch, index });
    }
    // Empty ranges are still refused, in the service's key order.
    let base =
        || TableSas::new(table("t1x")).permissions(TableSasPermissions::READ).expiry(time("2026-11-23T00:00:00Z"));
    let b = |text: &str| KeyBound::new(text).unwrap();
    let e = base().start_partition_key(b("a/b")).end_partition_key(b("a#b")).sign("a", &key).unwrap_err();
    assert_eq!(e.kind(), &SasErrorKind::EmptyKeyRange { start: "`spk` \"a/b\"".into(), end: "`epk` \"a#b\"".into() });
    assert!(base().start_partition_key(b("a#b")).end_partition_key(b("a/b")).sign("a", &key).is_ok());
    let same = || base().start_partition_key(b("p?")).end_partition_key(b("p?"));
    assert!(matches!(
        same().start_row_key(b("b")).end_row_key(b("a\\")).sign("a", &key).unwrap_err().kind(),
        SasErrorKind::EmptyKeyRange { .. }
    ));
    assert!(same().start_row_key(b("a\\")).end_row_key(b("b")).sign("a", &key).is_ok());
}

#[test]
fn invalid_combinations_are_typed_errors() {
    let key = AccountKey::development();
    let base =
        || TableSas::new(table("t1x")).permissions(TableSasPermissions::READ).expiry(time("2026-11-23T00:00:00Z"));
    let err = |sas: TableSas| sas.sign("a", &key).unwrap_err();

    let e = err(base().start(time("2026-11-23T00:00:00.9Z")));
    assert_eq!(
        e.to_string(),
        "invalid shared access signature: `se` (expiry) 2026-11-23T00:00:00Z must be after `st` (start) \
         2026-11-23T00:00:00Z"
    );
    assert!(matches!(err(base().start(time("2026-11-24T00:00:00Z"))).kind(), SasErrorKind::ExpiryNotAfterStart { .. }));
    assert!(base().start(time("2026-11-22T23:59:59Z")).sign("a", &key).is_ok());

    let e = err(base().start_row_key(RowKey::new("r").unwrap()));
    assert_eq!(e.kind(), &SasErrorKind::RowKeyWithoutPartitionKey { row: "srk", partition: "spk" });
    assert_eq!(
        e.to_string(),
        "invalid shared access signature: `srk` (a RowKey bound) needs `spk` (the PartitionKey bound of its pair); \
         a RowKey bound applies within a PartitionKey"
    );
    let e = err(base().start_partition_key(PartitionKey::new("p").unwrap()).end_row_key(RowKey::new("r").unwrap()));
    assert_eq!(e.kind(), &SasErrorKind::RowKeyWithoutPartitionKey { row: "erk", partition: "epk" });
    // A PartitionKey bound alone, on either side, is a range.
    assert!(base().end_partition_key(PartitionKey::new("p").unwrap()).sign("a", &key).is_ok());

    // A range that reaches no entity, in the service's key order (by UTF-16 code unit).
    let pk = |k: &str| PartitionKey::new(k).unwrap();
    let rk = |k: &str| RowKey::new(k).unwrap();
    let e = err(base().start_partition_key(pk("b")).end_partition_key(pk("a")));
    assert_eq!(e.kind(), &SasErrorKind::EmptyKeyRange { start: "`spk` \"b\"".into(), end: "`epk` \"a\"".into() });
    assert_eq!(
        e.to_string(),
        "invalid shared access signature: the key range starts at `spk` \"b\" after it ends at `epk` \"a\", so it \
         reaches no entity; keys are ordered by PartitionKey, then RowKey, by UTF-16 code unit"
    );
    let same = || base().start_partition_key(pk("p")).end_partition_key(pk("p"));
    let e = err(same().start_row_key(rk("9")).end_row_key(rk("10")));
    assert_eq!(
        e.kind(),
        &SasErrorKind::EmptyKeyRange {
            start: "`spk` \"p\" / `srk` \"9\"".into(),
            end: "`epk` \"p\" / `erk` \"10\"".into()
        }
    );
    // U+FF61 comes after U+1F600 by UTF-16 code unit (a surrogate pair), before it by UTF-8 byte.
    assert!(matches!(
        err(base().start_partition_key(pk("\u{FF61}")).end_partition_key(pk("\u{1F600}"))).kind(),
        SasErrorKind::EmptyKeyRange { .. }
    ));
    assert!(base().start_partition_key(pk("\u{1F600}")).end_partition_key(pk("\u{FF61}")).sign("a", &key).is_ok());
    // One entity; an open RowKey side; a start RowKey in an earlier PartitionKey.
    assert!(same().start_row_key(rk("r")).end_row_key(rk("r")).sign("a", &key).is_ok());
    assert!(same().start_row_key(rk("z")).sign("a", &key).is_ok());
    assert!(same().end_row_key(rk("")).sign("a", &key).is_ok());
    let across = base().start_partition_key(pk("a")).start_row_key(rk("z")).end_partition_key(pk("b"));
    assert!(across.end_row_key(rk("a")).sign("a", &key).is_ok());

    let no_permission = TableSas::new(table("t1x")).expiry(time("2026-11-23T00:00:00Z"));
    assert_eq!(err(no_permission).kind(), &SasErrorKind::NoPermission);
    let no_expiry = TableSas::new(table("t1x")).permissions(TableSasPermissions::READ);
    assert_eq!(
        err(no_expiry.clone()).to_string(),
        "invalid shared access signature: `se` (expiry) is missing; give one, or name a stored access policy that \
         holds it"
    );
    assert!(no_expiry.policy(PolicyId::new("p").unwrap()).sign("a", &key).is_ok());

    let far = DateTime::from_timestamp(253_402_300_800, 0).unwrap(); // 10000-01-01
    assert_eq!(
        err(base().expiry(far)).to_string(),
        "invalid shared access time: `se` must be in the years 1 to 9999, found 10000"
    );
    let before = DateTime::from_timestamp(-62_135_596_801, 0).unwrap(); // 0000-12-31T23:59:59Z
    assert_eq!(err(base().start(before)).kind(), &SasErrorKind::TimeOutOfRange { field: "st", year: 0 });

    let expiry = time("2026-11-23T00:00:00Z");
    let account = |t, p| AccountSas::new(t, p, expiry).sign("a", &key).unwrap_err();
    let e = account(AccountSasResourceTypes::empty(), AccountSasPermissions::READ);
    assert_eq!(
        e.to_string(),
        "invalid shared access signature: `srt` (resource types) is empty; give at least one of service, container \
         and object"
    );
    let e = account(AccountSasResourceTypes::OBJECT, AccountSasPermissions::empty());
    assert_eq!(e.kind(), &SasErrorKind::NoAccountPermission);
    assert_eq!(
        e.to_string(),
        "invalid shared access signature: `sp` (permissions) of an account SAS is empty; give at least one permission"
    );
    let late = AccountSas::new(AccountSasResourceTypes::OBJECT, AccountSasPermissions::READ, expiry).start(expiry);
    assert!(matches!(late.sign("a", &key).unwrap_err().kind(), SasErrorKind::ExpiryNotAfterStart { .. }));
}

#[test]
fn the_table_name_is_signed_lowercase_and_sent_as_given() {
    let sas =
        TableSas::new(table("MixedCASE9")).permissions(TableSasPermissions::READ).expiry(time("2026-11-23T00:00:00Z"));
    assert!(sas.string_to_sign("Acct").unwrap().contains("\n/table/Acct/mixedcase9\n"));
    let token = sas.sign("Acct", &AccountKey::development()).unwrap();
    assert_eq!(param(&token, "tn").as_deref(), Some("MixedCASE9"));
}

fn any_time() -> impl Strategy<Value = Option<DateTime<Utc>>> {
    // From before year 1 to after year 9999, and beyond what `DateTime` holds (`None`).
    proptest::option::of((-70_000_000_000i64..300_000_000_000, 0u32..1_000_000_000))
        .prop_map(|t| t.and_then(|(s, n)| DateTime::from_timestamp(s, n)))
}

proptest! {
    /// Whatever the input, a SAS is a token that is a valid URI query carrying exactly what was given, or a
    /// typed error whose rule the input breaks; nothing panics.
    #[test]
    fn any_input_is_a_valid_token_or_a_typed_error(
        name in "[A-Za-z0-9]{0,70}",
        keys in proptest::array::uniform4(proptest::option::of(any::<String>())),
        as_given in any::<bool>(),
        id in proptest::option::of(".{0,70}"),
        bits in any::<u8>(),
        (start, expiry) in (any_time(), any_time()),
        ip in proptest::option::of((any::<u32>(), any::<u32>())),
        https in any::<bool>(),
    ) {
        let Ok(table) = TableName::new(&name) else { return Ok(()) };
        let mut permissions = TableSasPermissions { bits: bits & 0b1111, order: 0 };
        if as_given {
            // The same letters, written backwards.
            permissions = TableSasPermissions::in_order(&permissions.to_string().chars().rev().collect::<String>())
                .expect("letters of the set, once each");
        }
        let mut sas = TableSas::new(table)
            .permissions(permissions)
            .protocol(if https { SasProtocol::Https } else { SasProtocol::HttpsAndHttp });
        if let Some(start) = start { sas = sas.start(start); }
        if let Some(expiry) = expiry { sas = sas.expiry(expiry); }
        if let Some((a, b)) = ip {
            match SasIpRange::range(Ipv4Addr::from(a), Ipv4Addr::from(b)) {
                Ok(range) => sas = sas.ip(range),
                Err(e) => {
                    let invalid_range = matches!(e.kind(), SasErrorKind::InvalidIpRange { .. });
                    prop_assert!(a > b && invalid_range, "{}", e);
                }
            }
        }
        let policy = id.as_deref().and_then(|id| PolicyId::new(id).ok());
        if let Some(p) = &policy { sas = sas.policy(p.clone()); }
        // Any text is a bound but one with a control character.
        let [spk, srk, epk, erk] = keys.map(|k| {
            let k = k?;
            match KeyBound::new(k.as_str()) {
                Ok(bound) => Some(bound),
                Err(e) => {
                    assert!(matches!(e.kind(), SasErrorKind::KeyBoundCharacter { ch, .. } if ch.is_control()), "{e}");
                    assert!(k.chars().any(char::is_control));
                    None
                }
            }
        });
        if let Some(k) = &spk { sas = sas.start_partition_key(k.clone()); }
        if let Some(k) = &srk { sas = sas.start_row_key(k.clone()); }
        if let Some(k) = &epk { sas = sas.end_partition_key(k.clone()); }
        if let Some(k) = &erk { sas = sas.end_row_key(k.clone()); }
        // The range reaches nothing: the start PartitionKey after the end one, or equal ones and both RowKeys
        // given in the wrong order (compared here by UTF-16 code units, independently of `service_order`).
        let after = |a: &str, b: &str| a.encode_utf16().cmp(b.encode_utf16()) == std::cmp::Ordering::Greater;
        let empty_range = match (&spk, &epk) {
            (Some(s), Some(e)) => {
                after(s.as_str(), e.as_str())
                    || (s.as_str() == e.as_str()
                        && srk.as_ref().zip(erk.as_ref()).is_some_and(|(a, b)| after(a.as_str(), b.as_str())))
            }
            _ => false,
        };

        match sas.sign("acct", &AccountKey::development()) {
            Ok(token) => {
                prop_assert!(!empty_range, "an empty key range was signed");
                let url = format!("https://acct.table.core.windows.net/?{}", token.as_str());
                prop_assert!(url.parse::<http::Uri>().is_ok(), "{url}");
                prop_assert_eq!(param(&token, "tn"), Some(name.clone()));
                prop_assert_eq!(param(&token, "sp"), Some(permissions.to_string()).filter(|p| !p.is_empty()));
                // Each bound comes back decoded, and is signed as it is.
                let to_sign = sas.string_to_sign("acct").unwrap();
                let signed: Vec<&str> = to_sign.split('\n').collect();
                for (name, bound, line) in [("spk", &spk, 8), ("srk", &srk, 9), ("epk", &epk, 10), ("erk", &erk, 11)] {
                    let text = bound.as_ref().map_or("", KeyBound::as_str);
                    prop_assert_eq!(param(&token, name), Some(text.to_owned()).filter(|k| !k.is_empty()));
                    prop_assert_eq!(signed[line], text);
                }
                // No value holds a raw `=`, `#`, `?`, `+` or space (nor `&`, which splits them).
                for (_, value) in token.as_str().split('&').filter_map(|pair| pair.split_once('=')) {
                    prop_assert!(!value.contains(['=', '#', '?', '+', ' ']), "{value}");
                }
                prop_assert_eq!(param(&token, "si"), policy.map(|p| p.as_str().to_owned()));
                prop_assert!(param(&token, "sig").is_some());
            }
            Err(e) => {
                let message = e.to_string();
                prop_assert!(message.starts_with("invalid shared access "), "{message}");
                let out_of_range = |t: Option<DateTime<Utc>>| t.is_some_and(|t| !(1..=9999).contains(&t.year()));
                let holds = match e.kind() {
                    SasErrorKind::NoPermission => permissions.is_empty() && policy.is_none(),
                    SasErrorKind::NoExpiry => expiry.is_none() && policy.is_none(),
                    SasErrorKind::RowKeyWithoutPartitionKey { row: "srk", .. } => srk.is_some() && spk.is_none(),
                    SasErrorKind::RowKeyWithoutPartitionKey { .. } => erk.is_some() && epk.is_none(),
                    SasErrorKind::EmptyKeyRange { .. } => empty_range,
                    SasErrorKind::TimeOutOfRange { .. } => out_of_range(start) || out_of_range(expiry),
                    SasErrorKind::ExpiryNotAfterStart { .. } => {
                        start.zip(expiry).is_some_and(|(s, e)| s.timestamp() >= e.timestamp())
                    }
                    _ => false,
                };
                prop_assert!(holds, "{message}");
            }
        }
    }
}

proptest! {
    /// The same for an account SAS.
    #[test]
    fn any_account_input_is_a_valid_token_or_a_typed_error(
        bits in any::<u8>(),
        types in any::<u8>(),
        (start, expiry) in (any_time(), any_time()),
        ip in proptest::option::of(any::<u32>()),
    ) {
        let Some(expiry) = expiry else { return Ok(()) };
        let permissions = AccountSasPermissions { bits, order: 0 };
        let resource_types = AccountSasResourceTypes { bits: types & 0b111, order: 0 };
        let mut sas = AccountSas::new(resource_types, permissions, expiry);
        if let Some(start) = start { sas = sas.start(start); }
        if let Some(ip) = ip { sas = sas.ip(SasIpRange::single(Ipv4Addr::from(ip))); }
        match sas.sign("acct", &AccountKey::development()) {
            Ok(token) => {
                let url = format!("https://acct.table.core.windows.net/?{}", token.as_str());
                prop_assert!(url.parse::<http::Uri>().is_ok(), "{url}");
                prop_assert_eq!(param(&token, "sp"), Some(permissions.to_string()));
                prop_assert_eq!(param(&token, "srt"), Some(resource_types.to_string()));
                prop_assert_eq!(param(&token, "ss"), Some("t".to_owned()));
            }
            Err(e) => {
                let out_of_range = |t: Option<DateTime<Utc>>| t.is_some_and(|t| !(1..=9999).contains(&t.year()));
                let holds = match e.kind() {
                    SasErrorKind::NoAccountPermission => permissions.is_empty(),
                    SasErrorKind::NoResourceType => resource_types.is_empty(),
                    SasErrorKind::TimeOutOfRange { .. } => out_of_range(start) || out_of_range(Some(expiry)),
                    SasErrorKind::ExpiryNotAfterStart { .. } => start.is_some_and(|s| s.timestamp() >= expiry.timestamp()),
                    _ => false,
                };
                prop_assert!(holds, "{}", e);
            }
        }
    }
}
