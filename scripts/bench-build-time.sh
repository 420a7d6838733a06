#!/usr/bin/env bash
# Build-time cost of #[derive(TableEntity)] against serde's Serialize + Deserialize derives (issues 3 and 8).
#
# Two workloads, each as two crates that differ only in the derive attributes (one derives TableEntity through
# the table-model facade, as users do; the other serde::Serialize and serde::Deserialize):
#   - `many`: 100 structs of 12 fields (two String keys, ten properties), built in the debug profile (`cargo
#     build`), the edit-compile loop users feel, with incremental compilation on (cargo's default) and off
#     (CARGO_INCREMENTAL=0);
#   - `wide`: ONE struct of two String keys and WIDE properties (default 252, the most an entity may have)
#     cycling through every property type both derives support, built with `cargo build --release`. Each side
#     compiles its JSON codec for the struct: the TableEntity crate calls `to_json` and `from_json` (generated
#     `#[inline]`, so compiled where called), the serde crate `serde_json::to_vec` and `serde_json::from_slice`
#     (the baseline of the target). serde is also measured bare (`serdebare`: nothing to compile but the
#     impls' type checking).
# Dependencies are built once; then each crate's own source is touched and rebuilt REPS times, the sides
# alternating, and the median wall-clock and CPU (user + sys) times are compared.
#
# Usage: scripts/bench-build-time.sh [REPS] [WIDE]   (defaults 3 and 252). Prints the runs, medians and ratios.
# WORKLOADS="many wide" (default) selects workloads; MODES="incremental non-incremental" the debug modes.
# BENCH_TARGET_DIR reuses a target directory (its dependencies) instead of a new temporary one.
set -euo pipefail

REPS="${1:-3}"
WIDE="${2:-252}"
WORKLOADS="${WORKLOADS:-many wide}"
MODES="${MODES:-incremental non-incremental}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/table-model-build-time.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export CARGO_TARGET_DIR="${BENCH_TARGET_DIR:-$WORK/target}"

# `many`: one struct of two keys and ten properties of the types both derives support, 100 times.
many_structs() {
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

# `wide`: one struct of two keys and $WIDE properties named p000, p001, ... (sequential names, the worst case
# for a name lookup that compares prefixes), the property types in turn.
WIDE_TYPES=(bool i8 i16 i32 u8 u16 i64 u32 f32 f64 String 'Vec<u8>' uuid::Uuid 'chrono::DateTime<chrono::Utc>'
    table_model::DateTime 'Option<i32>' 'Option<String>' 'Option<f64>')
wide_struct() {
    local attrs="$1" keys="$2"
    printf '%s\npub struct Wide {\n' "$attrs"
    printf '    %spub partition: String,\n' "$keys"
    printf '    %spub row: String,\n' "${keys/partition_key/row_key}"
    for i in $(seq 0 $((WIDE - 1))); do
        printf '    pub p%03d: %s,\n' "$i" "${WIDE_TYPES[i % ${#WIDE_TYPES[@]}]}"
    done
    printf '}\n'
}

make_crate() {
    local name="$1" deps="$2" source="$3"
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
    printf '%s\n' "$source" > "$WORK/$name/src/lib.rs"
    cp "$ROOT/Cargo.lock" "$WORK/$name/Cargo.lock"
}

TABLE_DEP="table-model = { path = \"$ROOT/table-model\" }"
SERDE_DEP='serde = { version = "1", features = ["derive"] }'
# The wide struct's types (Uuid, chrono, table_model::DateTime) need every side to depend on the same crates;
# table-model without its HTTP layers, which the derive does not use, to keep the release dependencies few.
WIDE_DEPS="table-model = { path = \"$ROOT/table-model\", default-features = false, features = [\"derive\", \"serde\"] }
$SERDE_DEP
serde_json = \"1\"
uuid = { version = \"1\", features = [\"serde\"] }
chrono = { version = \"0.4\", default-features = false, features = [\"std\", \"serde\"] }"
SERDE_JSON_FNS='
pub fn to_json(value: &Wide) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(value)
}

pub fn from_json(json: &[u8]) -> Result<Wide, serde_json::Error> {
    serde_json::from_slice(json)
}'
make_crate many_table "$TABLE_DEP" "$(many_structs '#[derive(table_model::TableEntity)]' '#[table(partition_key)] ')"
make_crate many_serde "$SERDE_DEP" "$(many_structs '#[derive(serde::Serialize, serde::Deserialize)]' '')"
# The generated `to_json` and `from_json` are `#[inline]` (compiled where they are called, as serde's generic
# impls are), so the TableEntity crate calls them as the serde crate calls serde_json: both compile their codecs.
TABLE_JSON_FNS='
pub fn to_json(value: &Wide) -> Result<table_model::json::EntityBody, table_model::EncodeError> {
    table_model::TableEntity::to_json(value)
}

pub fn from_json(json: &[u8]) -> Result<Wide, table_model::DecodeError> {
    <Wide as table_model::TableEntity>::from_json(json)
}'
make_crate wide_table "$WIDE_DEPS" "$(wide_struct '#[derive(table_model::TableEntity)]' '#[table(partition_key)] ')
$TABLE_JSON_FNS"
make_crate wide_serde "$WIDE_DEPS" "$(wide_struct '#[derive(serde::Serialize, serde::Deserialize)]' '')
$SERDE_JSON_FNS"
make_crate wide_serdebare "$WIDE_DEPS" "$(wide_struct '#[derive(serde::Serialize, serde::Deserialize)]' '')"

# One build of crate $1 with cargo arguments $2 and CARGO_INCREMENTAL=$3 ("" for cargo's default); prints
# "wall cpu" in seconds, cpu being the user + sys time of the compiler processes.
build() {
    local c="$1" args="$2" incr="$3"
    (
        cd "$WORK/$c"
        if [ -n "$incr" ]; then export CARGO_INCREMENTAL="$incr"; fi
        # shellcheck disable=SC2086
        /usr/bin/time -f '%e %U %S' -o "$WORK/time" cargo build --offline --quiet $args
    )
    awk '{ printf "%.2f %.2f", $1, $2 + $3 }' "$WORK/time"
}

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Times REPS rebuilds of ${2}_table and of each ${2}_<side> for the sides in $5, alternating, after one untimed
# build of each (which builds the dependencies), and prints the runs, the medians and the ratios to TableEntity.
compare() {
    local label="$1" workload="$2" args="$3" incr="$4" sides="table $5" side w c
    for side in $sides; do build "${workload}_$side" "$args" "$incr" > /dev/null; done
    declare -A wall cpu
    for _ in $(seq 1 "$REPS"); do
        for side in $sides; do
            touch "$WORK/${workload}_$side/src/lib.rs"
            read -r w c <<< "$(build "${workload}_$side" "$args" "$incr")"
            wall[$side]+="$w "
            cpu[$side]+="$c "
        done
    done
    echo "== $label"
    local tw tc
    # shellcheck disable=SC2086
    tw=$(median ${wall[table]}); tc=$(median ${cpu[table]})
    for side in $sides; do
        # shellcheck disable=SC2086
        w=$(median ${wall[$side]}); c=$(median ${cpu[$side]})
        printf '   %-10s wall (s): %-24s cpu (s): %-24s median wall %7.2f s, cpu %7.2f s' \
            "$side" "${wall[$side]}" "${cpu[$side]}" "$w" "$c"
        if [ "$side" != table ]; then
            awk -v tw="$tw" -v tc="$tc" -v w="$w" -v c="$c" \
                'BEGIN { printf "; TableEntity / this: wall %.2f, cpu %.2f", tw / w, tc / c }'
        fi
        echo
    done
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for workload in $WORKLOADS; do
    case "$workload" in
        many)
            for mode in $MODES; do
                case "$mode" in
                    incremental) compare "100 structs of 12 fields, debug, incremental" many "" "" serde ;;
                    non-incremental) compare "100 structs of 12 fields, debug, CARGO_INCREMENTAL=0" many "" 0 serde ;;
                    *) echo "unknown mode $mode" >&2; exit 2 ;;
                esac
            done
            ;;
        wide) compare "one struct of $WIDE properties, release" wide "--release" "" "serde serdebare" ;;
        *) echo "unknown workload $workload" >&2; exit 2 ;;
    esac
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
