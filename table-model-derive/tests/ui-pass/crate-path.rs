// `#[table(crate = "...")]`: a crate that re-exports table_model under another name.
extern crate table_model as tm;

#[derive(tm::TableEntity)]
#[table(crate = "tm", partition_key = "p")]
struct Renamed {
    #[table(row_key)]
    id: u32,
    value: Option<String>,
}

#[derive(tm::TableEnum)]
#[table(crate = "tm")]
enum Kind {
    One,
}

fn main() {
    use tm::TableEntity;
    let r = Renamed { id: 1, value: None };
    let e = r.to_entity().unwrap();
    assert_eq!(e.row_key(), "0000000001");
    assert!(Renamed::from_json(r.to_json().unwrap().as_bytes()).is_ok());
    let _ = Kind::One;
}
