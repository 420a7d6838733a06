// The compile-fail cases of the derive: each `tests/ui/*.rs` must fail to build with exactly the errors in the
// `.stderr` beside it. The cases are built against table-model without its client (this crate's
// dev-dependency), so trybuild's own build stays small; the client's compile-fail cases are `compile_fail` doc
// tests beside the items they test (`client::bulk`).
// Every case fails at `cargo check` (the derive evaluates its `const` checks where the struct is defined), and
// there is no case that must build and run: trybuild then checks them all in one `cargo check`, with no code
// generated. What builds is tested as ordinary tests (`test_derive.rs`, `test_hygiene.rs`).
// Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p table-model-derive-tests --test compiletest` and
// review the diff. The messages depend on the toolchain: they are checked on the pinned stable one.
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
