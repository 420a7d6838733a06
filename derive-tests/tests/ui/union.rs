use table_model::TableEntity;

#[derive(TableEntity)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
