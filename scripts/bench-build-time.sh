#!/usr/bin/env bash
# Build-time cost of #[derive(TableEntity)] against serde's Serialize + Deserialize derives (issue 3).
#
# Generates two crates with the same 100 structs of 12 fields: one derives TableEntity (through the
# table-model facade, as users do), the other derives serde::Serialize and serde::Deserialize. Dependencies
# are built once; then each crate's own source is touched and rebuilt REPS times, alternating the two, and
# the median wall-clock times are compared. Debug profile (`cargo build`), the edit-compile loop users feel.
#
# Usage: scripts/bench-build-time.sh [REPS]   (default 5). Prints the medians and the ratio.
set -euo pipefail

REPS="${1:-5}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/table-model-build-time.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export CARGO_TARGET_DIR="$WORK/target"

# One struct: two keys and ten properties of the types both derives support.
structs() {
    local attrs="$1" keys="$2"
    for i in $(seq 1 100); do
        printf '%s\npub struct Entity%d {\n' "$attrs" "$i"
        printf '    %spub partition: String,\n' "$keys"
        printf '    %spub row: String,\n' "${keys/partition_key/row_key}"
        printf '    pub name: String,\n    pub total: f64,\n    pub quantity: i32,\n    pub count: i64,\n'
        printf '    pub paid: bool,\n    pub note: Option<String>,\n    pub ratio: f32,\n    pub small: u8,\n'
        printf '    pub medium: i16,\n    pub big: u32,\n}\n\n'
    done
}

make_crate() {
    local name="$1" deps="$2" attrs="$3" keys="$4"
    mkdir -p "$WORK/$name/src"
    cat > "$WORK/$name/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$deps

[workspace]
TOML
    structs "$attrs" "$keys" > "$WORK/$name/src/lib.rs"
}

make_crate derived_table "table-model = { path = \"$ROOT/table-model\" }" \
    '#[derive(table_model::TableEntity)]' '#[table(partition_key)] '
make_crate derived_serde 'serde = { version = "1", features = ["derive"] }' \
    '#[derive(serde::Serialize, serde::Deserialize)]' ''

# Build each crate once so that only its own compilation is timed afterwards.
for c in derived_table derived_serde; do
    cp "$ROOT/Cargo.lock" "$WORK/$c/Cargo.lock"
    (cd "$WORK/$c" && cargo build --offline --quiet)
done

time_build() {
    local c="$1" start end
    touch "$WORK/$c/src/lib.rs"
    start=$(date +%s.%N)
    (cd "$WORK/$c" && cargo build --offline --quiet)
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }' 
}

declare -a table serde
for _ in $(seq 1 "$REPS"); do
    table+=("$(time_build derived_table)")
    serde+=("$(time_build derived_serde)")
done

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mt=$(median "${table[@]}")
ms=$(median "${serde[@]}")
echo "runs (s), TableEntity:           ${table[*]}"
echo "runs (s), Serialize+Deserialize: ${serde[*]}"
awk -v t="$mt" -v s="$ms" 'BEGIN { printf "median TableEntity %.2f s, serde %.2f s, ratio %.2f\n", t, s, t / s }' 
