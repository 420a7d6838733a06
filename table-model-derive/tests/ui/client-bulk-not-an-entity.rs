// A bulk write takes entities, by value or by reference, and says so of anything else.
use table_model::client::{BulkOperation, TableClient};

async fn numbers(table: &TableClient) {
    let _ = table.bulk_write(BulkOperation::Insert, vec![1, 2, 3], None).await;
}

fn main() {}
