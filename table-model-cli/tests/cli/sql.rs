//! `tablectl sql` end to end against Azurite (`scripts/azurite.sh run cargo test -p table-model-cli`): the built
//! binary, each output format compared with the rows computed from the entities the test wrote, a join, a
//! `GROUP BY`, and the errors' exit codes and messages.
#![cfg(feature = "sql")]

use crate::support::*;
use arrow_array::{Array, Int64Array, StringArray};
use std::collections::BTreeMap;
use table_model::client::BulkOperation;
use table_model::{Entity, TableName};

/// Customers (keys `c`, `c0`...`c4`, a `Name`) and their orders (PartitionKey the customer, a `Total`, a `Note`
/// on every third, text CSV must quote now and then).
fn customers() -> Vec<Entity> {
    (0..5)
        .map(|i| {
            let (p, r) = keys("c", &format!("c{i}"));
            Entity::new(p, r).with("Name".parse().unwrap(), format!("Customer {i}")).unwrap()
        })
        .collect()
}

fn orders() -> Vec<Entity> {
    (0..40_i64)
        .map(|i| {
            let (p, r) = keys(&format!("c{}", i % 5), &format!("o{i:03}"));
            let mut order = Entity::new(p, r).with("Total".parse().unwrap(), i * 7 % 100).unwrap();
            if i % 3 == 0 {
                order.insert("Note".parse().unwrap(), format!("note {i}, \"rush\"")).unwrap();
            }
            order
        })
        .collect()
}

fn total(order: &Entity) -> i64 {
    order.get::<i64>("Total").unwrap()
}

fn note(order: &Entity) -> Option<String> {
    order.get::<String>("Note").ok()
}

/// The orders with a Total of at least 50, in key order: what the format tests select.
fn big_orders() -> Vec<Entity> {
    let mut big: Vec<Entity> = orders().into_iter().filter(|o| total(o) >= 50).collect();
    big.sort_by(|a, b| (a.partition_key(), a.row_key()).cmp(&(b.partition_key(), b.row_key())));
    big
}

fn select_big(table: &TableName) -> String {
    format!(
        "SELECT \"PartitionKey\", \"RowKey\", \"Total\", \"Note\" FROM {table} WHERE \"Total\" >= 50 \
         ORDER BY \"PartitionKey\", \"RowKey\""
    )
}

async fn write(azurite: &Azurite, name: &TableName, entities: Vec<Entity>) {
    let table = azurite.service.create_table(name, None).await.unwrap();
    let report = table.bulk_write(BulkOperation::Insert, entities, None).await;
    assert!(report.is_complete(), "{:?}", report.failures);
}

fn ok(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[tokio::test]
async fn each_format_holds_the_rows_the_entities_give() {
    let azurite = azurite!();
    let dir = temp_dir("sql-formats");
    let name = unique_table("SqlOrd");
    write(&azurite, &name, orders()).await;
    let expected = big_orders();
    assert!(expected.len() > 5 && expected.len() < 40);
    let query = select_big(&name);

    // Piped: JSON lines, every column in each row (null for an absent Note). The unquoted name folds to
    // lowercase and still finds the table.
    assert!(name.as_str().chars().any(|c| c.is_ascii_uppercase()));
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query]);
    let got: Vec<serde_json::Value> = ok(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let want: Vec<serde_json::Value> = expected
        .iter()
        .map(|o| {
            serde_json::json!({"PartitionKey": o.partition_key().as_str(), "RowKey": o.row_key().as_str(),
                "Total": total(o), "Note": note(o)})
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(text(&out.stderr), "");
    // The name quoted as the table has it, and `--json`, give the same lines.
    let quoted = query.replace(&format!("FROM {name}"), &format!("FROM \"{name}\""));
    assert_eq!(ok(&tablectl(&azurite.connection_string, &dir, &["--json", "sql", &quoted])), text(&out.stdout));

    // CSV: a header, then RFC 4180 rows (the Note's comma and quotes quoted), an absent Note empty.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "--format", "csv"]);
    let mut want = String::from("PartitionKey,RowKey,Total,Note\n");
    for o in &expected {
        let note = note(o).map(|n| format!("\"{}\"", n.replace('"', "\"\""))).unwrap_or_default();
        want.push_str(&format!("{},{},{},{note}\n", o.partition_key(), o.row_key(), total(o)));
    }
    assert_eq!(ok(&out), want);

    // A terminal table (asked for, since stdout is a pipe here): a header and the rows, cells between `|`.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "--format", "table"]);
    let cells: Vec<Vec<String>> = ok(&out)
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect())
        .collect();
    let mut want = vec![vec!["PartitionKey".to_owned(), "RowKey".to_owned(), "Total".to_owned(), "Note".to_owned()]];
    want.extend(expected.iter().map(|o| {
        vec![o.partition_key().to_string(), o.row_key().to_string(), total(o).to_string(), note(o).unwrap_or_default()]
    }));
    assert_eq!(cells, want);

    // Parquet, to a file its name tells: typed columns, and a summary on stderr only.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "-o", "big.parquet"]);
    assert_eq!(ok(&out), "");
    assert_eq!(
        text(&out.stderr),
        format!(
            "tablectl: wrote {} rows ({} bytes) to big.parquet\n",
            expected.len(),
            std::fs::metadata(dir.join("big.parquet")).unwrap().len()
        )
    );
    let file = std::fs::File::open(dir.join("big.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let column = |i: usize| batch.column(i).clone();
        let (p, r, t, n) = (column(0), column(1), column(2), column(3));
        let p = p.as_any().downcast_ref::<StringArray>().unwrap();
        let r = r.as_any().downcast_ref::<StringArray>().unwrap();
        let t = t.as_any().downcast_ref::<Int64Array>().unwrap();
        let n = n.as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..batch.num_rows() {
            let note = (!n.is_null(i)).then(|| n.value(i).to_owned());
            rows.push((p.value(i).to_owned(), r.value(i).to_owned(), t.value(i), note));
        }
    }
    let want: Vec<_> =
        expected.iter().map(|o| (o.partition_key().to_string(), o.row_key().to_string(), total(o), note(o))).collect();
    assert_eq!(rows, want);
    // The file is not replaced without --force.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "-o", "big.parquet"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), "tablectl: `big.parquet` already exists; give --force to replace it\n");
    // With --force it is.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "-o", "big.parquet", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).starts_with(&format!("tablectl: wrote {} rows (", expected.len())));
    // Compression a Parquet file cannot take is refused before anything is asked or written.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "-o", "rows.parquet", "--compress", "gzip"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "tablectl: --compress is for jsonl and csv: a table is text, and a Parquet file compresses its columns \
         itself\n"
    );
    assert!(!dir.join("rows.parquet").exists());
}

#[tokio::test]
async fn a_join_and_a_group_by_give_what_the_entities_give() {
    let azurite = azurite!();
    let dir = temp_dir("sql-join");
    let (orders_name, customers_name) = (unique_table("SqlJo"), unique_table("SqlCu"));
    write(&azurite, &orders_name, orders()).await;
    write(&azurite, &customers_name, customers()).await;

    // Per customer's name: its orders and their sum, through a join on the customer's key.
    let names: BTreeMap<String, String> =
        customers().iter().map(|c| (c.row_key().to_string(), c.get::<String>("Name").unwrap())).collect();
    let mut want: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for o in orders() {
        let entry = want.entry(names[o.partition_key().as_str()].clone()).or_default();
        *entry = (entry.0 + 1, entry.1 + total(&o));
    }
    let want: Vec<serde_json::Value> =
        want.iter().map(|(name, (n, sum))| serde_json::json!({"Name": name, "n": n, "total": sum})).collect();
    let join = format!(
        "SELECT c.\"Name\", count(*) AS n, sum(o.\"Total\") AS total FROM {orders_name} o \
         JOIN \"{customers_name}\" c ON o.\"PartitionKey\" = c.\"RowKey\" GROUP BY c.\"Name\" ORDER BY c.\"Name\""
    );
    // Only these two tables (requests name them as given: Azurite tells case apart); two partitions per scan.
    let only = format!("{orders_name},{customers_name}");
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &join, "--table", &only, "--partitions", "2"]);
    let got: Vec<serde_json::Value> = ok(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got, want);

    // A GROUP BY over one table: the orders of each customer with a Note.
    let mut want: BTreeMap<String, i64> = BTreeMap::new();
    for o in orders().iter().filter(|o| note(o).is_some()) {
        *want.entry(o.partition_key().to_string()).or_default() += 1;
    }
    let group = format!(
        "SELECT \"PartitionKey\" AS customer, count(*) AS notes FROM {orders_name} WHERE \"Note\" IS NOT NULL \
         GROUP BY \"PartitionKey\" ORDER BY customer"
    );
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &group, "--format", "csv", "--sample", "5"]);
    let mut csv = String::from("customer,notes\n");
    for (customer, n) in &want {
        csv.push_str(&format!("{customer},{n}\n"));
    }
    // A sample of 5 entities (c0's first orders, o000 with a Note) types every column.
    assert_eq!(ok(&out), csv);
}

#[tokio::test]
async fn errors_have_their_exit_codes_and_nothing_on_stdout() {
    let azurite = azurite!();
    let dir = temp_dir("sql-errors");
    let name = unique_table("SqlErr");
    write(&azurite, &name, orders()).await;

    // A syntax error: status 2, its kind and DataFusion's detail, nothing on stdout.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &format!("SELEC * FROM {name}")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "tablectl: invalid SQL: expected: an SQL statement, found: SELEC at Line: 1, Column: 1\n"
    );

    // A table the service does not list: a planning error, status 2.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", "SELECT * FROM NoSuchTable"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "tablectl: cannot plan the statement: table 'datafusion.public.nosuchtable' not found\n"
    );

    // A column the table does not have: status 2 too.
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &format!("SELECT \"Nope\" FROM {name}")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    // DataFusion suggests the nearest column, then lists them all.
    let suggestion = format!(
        "tablectl: cannot plan the statement: no field named \"Nope\". Did you mean '{}.\"Note\"'?\n",
        name.as_str().to_lowercase()
    );
    assert!(stderr.starts_with(&suggestion), "{stderr}");
    assert!(stderr.contains("Valid fields are "), "{stderr}");
    assert!(!stderr.ends_with(".\n"), "{stderr}");

    // A table named with --table that the service does not have: the service's answer, status 4.
    let out =
        tablectl(&azurite.connection_string, &dir, &["sql", "SELECT * FROM nosuchtable", "--table", "NoSuchTable"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains("TableNotFound"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn insert_writes_through_the_bulk_writer_and_a_bad_row_is_invalid_input() {
    let azurite = azurite!();
    let dir = temp_dir("sql-insert");
    let (from, to) = (unique_table("SqlInF"), unique_table("SqlInT"));
    write(&azurite, &from, orders()).await;
    // The target holds one order, so that its inferred schema is the orders'.
    let seed: Vec<Entity> = orders().into_iter().take(1).collect();
    write(&azurite, &to, seed.clone()).await;

    // The big orders, each under a new RowKey: the count on stdout, the entities in the target.
    let insert = format!(
        "INSERT INTO {to} SELECT \"PartitionKey\", \"RowKey\" || '-copy', \"Timestamp\", \"Total\", \"Note\", \
         \"@overflow\" FROM {from} WHERE \"Total\" >= 50"
    );
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &insert, "--table", &format!("{from},{to}")]);
    let big = big_orders();
    assert_eq!(ok(&out), format!("{{\"count\":{}}}\n", big.len()));
    let table = azurite.service.table_client(&to);
    let mut want: Vec<(String, String, i64, Option<String>)> = seed
        .iter()
        .map(|o| (o.partition_key().to_string(), o.row_key().to_string(), total(o), note(o)))
        .chain(big.iter().map(|o| (o.partition_key().to_string(), format!("{}-copy", o.row_key()), total(o), note(o))))
        .collect();
    want.sort();
    let got: Vec<(String, String, i64, Option<String>)> = all(&table)
        .await
        .iter()
        .map(|o| (o.partition_key().to_string(), o.row_key().to_string(), total(o), note(o)))
        .collect();
    assert_eq!(got, want);

    // A row whose PartitionKey breaks a rule: wrong input (status 2), the row named, nothing written.
    let bad =
        format!("INSERT INTO {to} (\"PartitionKey\", \"RowKey\", \"Total\") VALUES ('ok', 'r1', 1), ('a/b', 'r2', 2)");
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &bad, "--table", to.as_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!(
            "tablectl: insert into `{to}`: row 1 (PartitionKey `a/b`, RowKey `r2`): invalid partition key \"a/b\": \
             character `/` at index 1 is not allowed; nothing was written\n"
        )
    );
    assert_eq!(all(&table).await.len(), want.len());
}

#[tokio::test]
async fn compressed_files_stdout_as_dash_explain_show_tables_and_statements_it_refuses() {
    let azurite = azurite!();
    let dir = temp_dir("sql-more");
    let name = unique_table("SqlMore");
    write(&azurite, &name, orders()).await;
    let query = select_big(&name);
    let jsonl = ok(&tablectl(&azurite.connection_string, &dir, &["sql", &query, "--format", "jsonl"]));
    let csv = ok(&tablectl(&azurite.connection_string, &dir, &["sql", &query, "--format", "csv"]));
    assert_eq!(jsonl.lines().count(), big_orders().len());

    // `.gz` and `.zst` compress what stdout gets; `-o -` is stdout.
    for (file, plain) in [("big.jsonl.gz", &jsonl), ("big.csv.zst", &csv)] {
        let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "-o", file]);
        assert_eq!(ok(&out), "");
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let summary = format!("tablectl: wrote {} rows ({} bytes) to {file}\n", big_orders().len(), bytes.len());
        assert_eq!(text(&out.stderr), summary);
        let decoded = if file.ends_with(".gz") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text).unwrap();
            text
        } else {
            String::from_utf8(zstd::decode_all(&bytes[..]).unwrap()).unwrap()
        };
        assert_eq!(&decoded, plain, "{file}");
    }
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &query, "--format", "csv", "-o", "-"]);
    assert_eq!(ok(&out), csv);
    // With --json, a file's summary is on stdout too.
    let out = tablectl(&azurite.connection_string, &dir, &["--json", "sql", &query, "-o", "big.csv"]);
    let bytes = std::fs::metadata(dir.join("big.csv")).unwrap().len();
    let summary = format!("{{\"bytes\":{bytes},\"path\":\"big.csv\",\"rows\":{}}}\n", big_orders().len());
    assert_eq!(ok(&out), summary);
    assert_eq!(std::fs::read_to_string(dir.join("big.csv")).unwrap(), csv);

    // EXPLAIN shows the scan with what it pushes: the key range of the partition, as `$filter`.
    let explain = format!("EXPLAIN SELECT count(*) FROM {name} WHERE \"PartitionKey\" = 'c1'");
    let plan = ok(&tablectl(&azurite.connection_string, &dir, &["sql", &explain, "--format", "csv"]));
    let scan = plan.lines().find(|l| l.contains("AzureScanExec")).unwrap_or_else(|| panic!("{plan}"));
    assert!(scan.contains(&format!("table={name}")) && scan.contains("$filter=PartitionKey eq 'c1'"), "{scan}");

    // SHOW TABLES lists the service's tables (without reading them) beside information_schema's views.
    let tables = ok(&tablectl(&azurite.connection_string, &dir, &["sql", "SHOW TABLES", "--format", "csv"]));
    let row = format!("datafusion,public,{name},BASE TABLE");
    assert!(tables.lines().any(|l| l == row), "{tables}");

    // SHOW COLUMNS finds the table as a SELECT does, unquoted (folded to lowercase) or quoted in another case,
    // and says what each column holds; a table it cannot find is wrong input.
    let lower = name.as_str().to_lowercase();
    for show in [format!("SHOW COLUMNS FROM {}", name.as_str()), format!("SHOW COLUMNS FROM \"{lower}\"")] {
        let columns = ok(&tablectl(&azurite.connection_string, &dir, &["sql", &show, "--format", "csv"]));
        let lines: Vec<&str> = columns.lines().collect();
        assert_eq!(lines[0], "table_catalog,table_schema,table_name,column_name,data_type,is_nullable,edm_type");
        let total = format!("datafusion,public,{name},Total,Int64,YES,Edm.Int64");
        assert!(lines.contains(&total.as_str()), "{show}: {columns}");
        assert!(lines.iter().any(|l| l.contains(",Timestamp,\"Timestamp(µs, \"\"UTC\"\")\",")), "{show}: {columns}");
        assert!(
            lines.iter().any(|l| l.ends_with("\"Edm.DateTime: microseconds, the 100 ns digit in @overflow\"")),
            "{columns}"
        );
        assert!(
            lines.iter().any(|l| l.contains(",@overflow,Utf8,YES,\"the properties no column keeps exactly")),
            "{columns}"
        );
    }
    let out = tablectl(&azurite.connection_string, &dir, &["sql", "SHOW COLUMNS FROM nosuch", "--format", "csv"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "tablectl: SHOW COLUMNS: there is no table `nosuch`\n");

    // Creating or dropping a table or a view is not what `sql` does: wrong input (status 2), nothing changed.
    let refused = [
        (format!("CREATE TABLE t2 AS SELECT * FROM {name}"), "CreateMemoryTable"),
        (format!("CREATE VIEW v AS SELECT * FROM {name}"), "CreateView"),
        (format!("DROP TABLE \"{name}\""), "DropTable"),
    ];
    for (sql, ddl) in refused {
        let out = tablectl(&azurite.connection_string, &dir, &["sql", &sql]);
        assert_eq!(out.status.code(), Some(2), "{sql}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            format!(
                "tablectl: not supported: {ddl}: tablectl sql reads and writes the service's tables, it does not \
                 create or drop tables, views or schemas\n"
            )
        );
    }
    assert_eq!(all(&azurite.service.table_client(&name)).await.len(), orders().len(), "the table is still there");
}

#[tokio::test]
async fn an_insert_that_fails_partway_says_what_was_written_and_is_a_failure() {
    let azurite = azurite!();
    let dir = temp_dir("sql-partial");
    let (from, to) = (unique_table("SqlPf"), unique_table("SqlPt"));
    write(&azurite, &from, orders()).await;
    // The target holds the orders of customer c1 already: INSERT refuses those keys and writes the rest.
    let existing: Vec<Entity> = orders().into_iter().filter(|o| o.partition_key().as_str() == "c1").collect();
    write(&azurite, &to, existing.clone()).await;
    let insert = format!("INSERT INTO {to} SELECT * FROM {from}");
    let out = tablectl(&azurite.connection_string, &dir, &["sql", &insert, "--table", &format!("{from},{to}")]);
    // A failure of the service's (status 4), not wrong input: some rows were written.
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{} of {} entities were not written", existing.len(), orders().len())),
        "{stderr}"
    );
    assert!(stderr.contains("EntityAlreadyExists"), "{stderr}");
    // Every order is in the target once: those of c1 as they were, the others written.
    let stored = all(&azurite.service.table_client(&to)).await;
    assert_eq!(stored.len(), orders().len());
}

/// A table deleted after the tables were listed is not there: `SHOW COLUMNS` (`information_schema.columns`
/// asks for every table) goes on without it rather than failing with the service's 404.
#[tokio::test]
async fn a_table_deleted_after_the_listing_is_not_there() {
    use datafusion::catalog::SchemaProvider as _;
    let azurite = azurite!();
    let (kept, gone) = (unique_table("Kept"), unique_table("Gone"));
    write(&azurite, &kept, customers()).await;
    write(&azurite, &gone, customers()).await;
    let tables = table_model_cli::catalog::ServiceTables::list(azurite.service.clone(), 10).await.unwrap();
    assert!(tables.table_exist(gone.as_str()));
    azurite.service.delete_table(&gone, None).await.unwrap();
    assert!(tables.table(gone.as_str()).await.unwrap().is_none());
    assert!(tables.table(kept.as_str()).await.unwrap().is_some());
}
