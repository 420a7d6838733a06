//! What the operation-table benchmarks (`json`, `derive`) share: one criterion benchmark per named operation,
//! and a loop mode for counting instructions under `valgrind --tool=callgrind`, which a busy machine does not
//! disturb.

use criterion::Criterion;

/// Benchmarks each named operation with criterion, in the order given.
pub fn bench_operations(c: &mut Criterion, operations: &[&'static str], run: impl Fn(&str)) {
    for &op in operations {
        c.bench_function(op, |b| b.iter(|| run(op)));
    }
}

/// When the environment variable `var` is `<operation>:<count>`, runs that operation `count` times and returns
/// true; the caller then exits instead of running criterion. The difference between two instruction counts
/// divided by the difference of iterations is the cost of one operation.
pub fn loop_mode(var: &str, run: impl Fn(&str)) -> bool {
    let Ok(spec) = std::env::var(var) else { return false };
    let (op, count) = spec.rsplit_once(':').unwrap_or_else(|| panic!("{var}=<operation>:<count>"));
    for _ in 0..count.parse::<usize>().expect("a count") {
        run(op);
    }
    true
}
