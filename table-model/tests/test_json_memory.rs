//! Peak memory of decoding a query page into derived structs, measured by a counting global allocator.
//!
//! The bound: while `response::query_as` decodes a page, the memory in use never exceeds twice the body's
//! size plus what the decoded structs hold afterwards (their `Vec` included). The body is already in memory
//! (the client holds it in a buffer of at most twice its size); decoding adds the structs and a small scratch
//! buffer, never a second copy of the page (no intermediate `Entity`s).
//!
//! This file is its own test binary so that the allocator sees only this work, and its one test runs alone.
//! Each allocation is counted as the chunk glibc's malloc gives it (header and rounding included), and a
//! reallocation as the new block allocated before the old one is freed, the worst case of any allocator. `JSON_MEMORY_PAGE_MB=50 cargo test --release -p table-model --test test_json_memory -- --nocapture`
//! prints the numbers for a larger page.
#![cfg(all(feature = "derive", feature = "http"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use table_model::response::{self, QueryPage};
use table_model::TableEntity;

struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The memory an allocation of `size` bytes takes from glibc's malloc: the size and an 8-byte header, in
/// 16-byte steps, at least 32 bytes. Counting this (and not the size asked for) makes many small allocations
/// cost what they cost in a process's memory.
fn chunk(size: usize) -> usize {
    ((size + 8 + 15) & !15).max(32)
}

fn grow(bytes: usize) {
    let bytes = chunk(bytes);
    let now = IN_USE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrink(bytes: usize) {
    let bytes = chunk(bytes);
    IN_USE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` unchanged; the counters are atomics, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grow(new_size);
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        shrink(if p.is_null() { new_size } else { layout.size() });
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A small entity, as a counter row: two keys and eight small numbers.
#[derive(TableEntity, Debug, PartialEq)]
struct Row {
    #[table(partition_key)]
    pk: String,
    #[table(row_key)]
    rk: String,
    a: i32,
    b: i32,
    c: i32,
    d: i32,
    e: i32,
    f: i32,
    g: i32,
    h: i32,
}

/// A page of `n` rows as the service writes them at nometadata (the smallest JSON per value, so the hardest
/// case for the bound: the values are large next to their JSON).
fn page(n: usize) -> Vec<u8> {
    let mut body = br#"{"value":["#.to_vec();
    for i in 0..n {
        if i > 0 {
            body.push(b',');
        }
        let v = i % 10;
        body.extend_from_slice(
            format!(r#"{{"PartitionKey":"p","RowKey":"{i:08}","a":{v},"b":{v},"c":{v},"d":{v},"e":{v},"f":{v},"g":{v},"h":{v}}}"#)
                .as_bytes(),
        );
    }
    body.extend_from_slice(b"]}");
    body
}

/// The heap memory a decoded page holds, counted as the allocator does: its `Vec` and each row's strings.
fn held(page: &QueryPage<Row>) -> usize {
    let string = |s: &String| if s.capacity() == 0 { 0 } else { chunk(s.capacity()) };
    let strings: usize = page.entities.iter().map(|r| string(&r.pk) + string(&r.rk)).sum();
    chunk(page.entities.capacity() * std::mem::size_of::<Row>()) + strings
}

#[test]
fn a_query_page_decodes_within_twice_its_body_plus_its_values() {
    let megabytes = std::env::var("JSON_MEMORY_PAGE_MB").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(2);
    // 86 bytes a row.
    let rows = megabytes * 1024 * 1024 / 86;
    let body = page(rows);
    let reply = http::Response::builder().status(200).body(body).unwrap();
    let body_len = reply.body().len();

    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let page = response::query_as::<Row, _>(&reply).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let values = held(&page);

    assert_eq!(page.entities.len(), rows);
    assert_eq!(page.entities[rows - 1].rk, format!("{:08}", rows - 1));
    println!(
        "body {body_len} bytes, {rows} rows: decoding peaked at {peak} bytes above the body; the rows hold {values} \
         ({:.2}x the body above the body, {:.2}x with the values taken out)",
        peak as f64 / body_len as f64,
        (peak - values.min(peak)) as f64 / body_len as f64,
    );
    // The body is in memory already; the bound is twice its size plus the values, so the decoding may add at
    // most one body's size on top of the values.
    assert!(peak <= body_len + values, "peak {peak} above the body, body {body_len}, values {values}");
}
