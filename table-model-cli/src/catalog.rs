//! The tables of a connection as DataFusion's default schema, for `tablectl sql`: [`ServiceTables`], a
//! [`SchemaProvider`] that knows the tables by name and builds a table's provider
//! ([`AzureTable::infer`]) only when a statement names it, so a query of one table never samples the others.
//!
//! **Names.** The service compares table names without regard to case (`docs/rules.md` §1.1), and SQL folds an
//! unquoted identifier to lowercase: `FROM Orders` asks for `orders`, `FROM "Orders"` for `Orders`. Both find the
//! table `Orders`: a name is looked up as written first, then without regard to (ASCII) case, as Azure Storage
//! compares table names (`docs/rules.md` §1.1), and requests name the table as the service lists it (Azurite
//! answers 404 to `ORDERS` for `Orders`). Cosmos DB tells `Orders` and `ORDERS` apart (§13); where two such
//! tables exist and neither is named as written, the statement is refused, asking for the quoted name.
//!
//! Layer: parts.

use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::common::{plan_err, DataFusionError, Result};
use datafusion::logical_expr::TableType;
use futures::TryStreamExt as _;
use std::sync::Arc;
use table_model::client::{Error as ClientError, TableServiceClient};
use table_model::{Query, TableName};
use table_model_datafusion::AzureTable;
use tokio::sync::OnceCell;

/// The tables of a connection, each inferred from a sample of its entities the first time a statement names it.
///
/// ```
/// use datafusion::catalog::SchemaProvider as _;
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// use table_model_cli::catalog::ServiceTables;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let names = vec![TableName::new("Orders")?, TableName::new("Orders")?, TableName::new("Customers")?];
/// let tables = ServiceTables::new(service, names, 1000);
/// assert_eq!(tables.table_names(), ["Orders", "Customers"]);
/// assert!(tables.table_exist("orders") && tables.table_exist("Orders") && !tables.table_exist("order"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct ServiceTables {
    service: TableServiceClient,
    sample: usize,
    tables: Vec<Entry>,
    /// Whether the names are the service's listing ([`list`](Self::list)), rather than names given: a listed
    /// table deleted since is not there, a table given that does not exist is the service's `404`.
    listed: bool,
}

impl ServiceTables {
    /// These tables of `service` (a name given twice counts once), each inferred from its first `sample` entities
    /// when first named.
    pub fn new(service: TableServiceClient, names: impl IntoIterator<Item = TableName>, sample: usize) -> Self {
        let mut tables: Vec<Entry> = Vec::new();
        for name in names {
            if !tables.iter().any(|(t, _)| t.as_str() == name.as_str()) {
                tables.push((name, OnceCell::new()));
            }
        }
        ServiceTables { service, sample, tables, listed: false }
    }

    /// Every table of `service`, as the service lists them.
    ///
    /// # Errors
    /// The failure of a request listing the tables.
    pub async fn list(service: TableServiceClient, sample: usize) -> Result<Self, ClientError> {
        let names: Vec<TableName> = service.list_tables(&Query::new(), None)?.try_collect().await?;
        Ok(ServiceTables { listed: true, ..ServiceTables::new(service, names, sample) })
    }

    /// The table a statement naming it `name` reads, as the service spells it: the one named `name` as written,
    /// else the one named so in another case (`SHOW COLUMNS FROM orders` uses it to find `Orders`).
    ///
    /// # Errors
    /// Several tables are named so in other cases and none as written (see the module's docs).
    pub fn resolve(&self, name: &str) -> Result<Option<&TableName>> {
        Ok(self.find(name)?.map(|(table, _)| table))
    }

    /// The table named `name` as written, else the one named so in another case; an error when several are.
    fn find(&self, name: &str) -> Result<Option<&Entry>> {
        if let Some(exact) = self.tables.iter().find(|(table, _)| table.as_str() == name) {
            return Ok(Some(exact));
        }
        let mut folded = self.tables.iter().filter(|(table, _)| table.as_str().eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (Some(first), Some(second)) => plan_err!(
                "table name `{name}` matches the tables `{}` and `{}`, which the service tells apart: write the \
                 name as the table has it, in double quotes",
                first.0,
                second.0
            ),
            (found, _) => Ok(found),
        }
    }
}

/// Whether a request of the inference was answered `404`: the table is not there (any more).
fn is_not_found(error: &DataFusionError) -> bool {
    match error {
        DataFusionError::External(inner) => inner.downcast_ref::<ClientError>().is_some_and(ClientError::is_not_found),
        _ => false,
    }
}

/// A table's name and its provider, built once.
type Entry = (TableName, OnceCell<Arc<AzureTable>>);

#[async_trait]
impl SchemaProvider for ServiceTables {
    /// The names as the service spells them.
    fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|(table, _)| table.as_str().to_owned()).collect()
    }

    /// The table of that name in any case, inferred from its sample (once: a self-join reads one sample). A
    /// table deleted since the tables were listed is not there (`information_schema.columns`, which `SHOW
    /// COLUMNS` reads, asks for every table); one given by name that does not exist is the service's `404`.
    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let Some((table, provider)) = self.find(name)? else { return Ok(None) };
        let inferred = provider
            .get_or_try_init(|| async {
                AzureTable::infer(self.service.table_client(table.clone()), self.sample).await.map(Arc::new)
            })
            .await;
        match inferred {
            Ok(provider) => Ok(Some(provider.clone() as Arc<dyn TableProvider>)),
            Err(e) if self.listed && is_not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A base table, known without reading its sample (`information_schema.tables` lists every table).
    async fn table_type(&self, name: &str) -> Result<Option<TableType>> {
        Ok(self.find(name)?.map(|_| TableType::Base))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.tables.iter().any(|(table, _)| table.as_str().eq_ignore_ascii_case(name))
    }

    /// `CREATE TABLE` (and `CREATE VIEW`): not supported, the tables are the service's.
    fn register_table(&self, name: String, _table: Arc<dyn TableProvider>) -> Result<Option<Arc<dyn TableProvider>>> {
        Err(DataFusionError::NotImplemented(format!(
            "`{name}`: tablectl sql reads and writes the service's tables but does not create them (`tablectl import` \
             creates one)"
        )))
    }

    /// `DROP TABLE`: not supported, the tables are the service's.
    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        Err(DataFusionError::NotImplemented(format!(
            "`{name}`: tablectl sql reads and writes the service's tables but does not drop them"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(names: &[&str]) -> ServiceTables {
        let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None).unwrap();
        ServiceTables::new(service, names.iter().map(|n| TableName::new(*n).unwrap()), 10)
    }

    #[tokio::test]
    async fn names_are_found_as_written_then_in_any_case() {
        let tables = tables(&["Orders", "Customers"]);
        for name in ["Orders", "orders", "ORDERS"] {
            assert_eq!(tables.table_type(name).await.unwrap(), Some(TableType::Base), "{name}");
        }
        assert_eq!(tables.table_type("order").await.unwrap(), None);
        assert!(tables.table("nosuch").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn two_tables_in_different_cases_are_told_apart_only_as_written() {
        // As Cosmos DB may list them.
        let tables = tables(&["Orders", "ORDERS"]);
        assert_eq!(tables.table_type("ORDERS").await.unwrap(), Some(TableType::Base));
        let err = tables.table("orders").await.err().unwrap();
        assert_eq!(
            err.strip_backtrace(),
            "Error during planning: table name `orders` matches the tables `Orders` and `ORDERS`, which the service \
             tells apart: write the name as the table has it, in double quotes"
        );
        assert!(tables.table_exist("orders"));
    }

    #[test]
    fn tables_are_neither_created_nor_dropped() {
        let tables = tables(&["Orders"]);
        let empty = Arc::new(datafusion::datasource::empty::EmptyTable::new(Arc::new(
            datafusion::arrow::datatypes::Schema::empty(),
        )));
        let err = tables.register_table("t2".into(), empty).err().unwrap();
        assert!(matches!(err, DataFusionError::NotImplemented(_)), "{err:?}");
        assert!(err
            .to_string()
            .contains("`t2`: tablectl sql reads and writes the service's tables but does not create them"));
        let err = tables.deregister_table("Orders").err().unwrap();
        assert!(err
            .to_string()
            .contains("`Orders`: tablectl sql reads and writes the service's tables but does not drop them"));
        assert!(tables.table_exist("Orders"));
    }
}
