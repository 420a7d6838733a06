// A bulk write's report says which entities were not written: dropping it unread is a warning (here an error).
#![deny(unused_must_use)]
use table_model::client::{BulkOperation, TableClient};
use table_model::Entity;

async fn forget(table: &TableClient, entities: &[Entity]) {
    table.bulk_write(BulkOperation::Insert, entities, None).await;
}

fn main() {}
