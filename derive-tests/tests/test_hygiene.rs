//! The generated code must use fully qualified paths: these items shadow the prelude names it could
//! otherwise pick up by accident (serde's `test_gen.rs` does the same).
#![allow(dead_code, non_camel_case_types, clippy::upper_case_acronyms)]

// `#[table(crate = "...")]`: a crate that re-exports table_model under another name.
extern crate table_model as tm;

mod shadowed {
    struct Result;
    struct Option;
    struct Some;
    struct None;
    struct Ok;
    struct Err;
    struct String;
    struct Vec;
    struct Box;
    struct Default;
    struct From;
    struct Into;
    struct core;
    struct std;
    struct table_model;
    struct __private;
    struct Entity;
    struct PropertyName;
    fn panic() {}
    fn unreachable() {}

    #[derive(::table_model::TableEnum, Debug, PartialEq)]
    pub enum Kind {
        A,
        B,
    }

    #[derive(::table_model::TableProperties, Debug, PartialEq)]
    pub struct Inner {
        pub x: i32,
    }

    #[derive(::table_model::TableEntity, Debug, PartialEq)]
    pub struct Shadowed {
        #[table(partition_key)]
        pub pk: ::std::string::String,
        #[table(row_key)]
        pub rk: u32,
        pub name: ::std::option::Option<::std::string::String>,
        pub kind: Kind,
        #[table(flatten)]
        pub inner: Inner,
        #[table(json)]
        pub list: ::std::vec::Vec<i32>,
        #[table(default)]
        pub d: i64,
        #[table(edm = "Int64")]
        pub wide: i32,
        #[table(skip)]
        pub s: bool,
    }

    #[derive(::table_model::TableEntity, Debug, PartialEq)]
    pub struct ShadowedUnique {
        #[table(partition_key, unique)]
        pub pk: ::table_model::DateTime,
        #[table(row_key, reverse_chronological, unique)]
        pub rk: ::table_model::DateTime,
        pub name: ::std::option::Option<::std::string::String>,
    }

    #[derive(::table_model::TableEntity, Debug, PartialEq)]
    pub struct ShadowedTieBreaker {
        #[table(partition_key)]
        pub pk: ::std::string::String,
        #[table(row_key, unique)]
        pub rk: ::table_model::DateTime,
        #[table(tie_breaker)]
        pub seq: u32,
    }
}

#[test]
fn shadowed_names_do_not_leak_into_generated_code() {
    use ::table_model::TableEntity;
    let v = shadowed::Shadowed {
        pk: "p".into(),
        rk: 1,
        name: None,
        kind: shadowed::Kind::B,
        inner: shadowed::Inner { x: 3 },
        list: vec![1],
        d: 2,
        wide: 4,
        s: false,
    };
    let e = v.to_entity().unwrap();
    assert_eq!(shadowed::Shadowed::from_entity(e).unwrap(), v);
}

#[test]
fn shadowed_names_do_not_leak_into_unique_keys() {
    use ::table_model::TableEntity;
    let at = ::table_model::DateTime::UNIX_EPOCH;
    let v = shadowed::ShadowedUnique { pk: at, rk: at, name: ::std::option::Option::Some("n".into()) };
    assert_eq!(shadowed::ShadowedUnique::from_entity(v.to_entity().unwrap()).unwrap(), v);
    assert_eq!(shadowed::ShadowedUnique::from_json(v.to_json().unwrap().as_bytes()).unwrap(), v);
    let v = shadowed::ShadowedTieBreaker { pk: "p".into(), rk: at, seq: 3 };
    assert_eq!(shadowed::ShadowedTieBreaker::from_entity(v.to_entity().unwrap()).unwrap(), v);
    assert_eq!(shadowed::ShadowedTieBreaker::from_json(v.to_json().unwrap().as_bytes()).unwrap(), v);
}

mod renamed {
    #[derive(tm::TableEntity, Debug, PartialEq)]
    #[table(crate = "tm", partition_key = "p")]
    pub struct Renamed {
        #[table(row_key)]
        pub id: u32,
        pub value: Option<String>,
    }

    #[derive(tm::TableEnum, Debug, PartialEq)]
    #[table(crate = "tm")]
    pub enum Kind {
        One,
    }

    #[derive(tm::TableProperties, Debug, PartialEq)]
    #[table(crate = "tm")]
    pub struct Part {
        pub kind: Kind,
    }
}

#[test]
fn the_crate_path_can_be_renamed() {
    use tm::TableEntity;
    let r = renamed::Renamed { id: 1, value: Some("v".into()) };
    let e = r.to_entity().unwrap();
    assert_eq!(e.row_key(), "0000000001");
    assert_eq!(renamed::Renamed::from_entity(e).unwrap(), r);
    assert_eq!(renamed::Renamed::from_json(r.to_json().unwrap().as_bytes()).unwrap(), r);
    let _ = renamed::Part { kind: renamed::Kind::One };
}
