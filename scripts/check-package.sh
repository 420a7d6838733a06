#!/usr/bin/env bash
# Packages every publishable crate of the workspace (offline, as `cargo publish` would, without building them)
# and checks each package's file list: both license files in, no tests, test fixtures, benchmarks or their data,
# fuzz corpora or stale merge files, and no file over 1 MiB. Prints each package's size.
#
# Usage: scripts/check-package.sh   (from anywhere; exits non-zero when a package breaks a check)
#
# `cargo package --workspace` resolves the members against the packages it has just made, so it works before
# any of them is on crates.io; `cargo package -p <one crate>` alone does not (CHANGELOG.md, "How the crates are
# published"). `--allow-dirty`: the file lists are checked, not the state of the work tree.
set -euo pipefail
cd "$(dirname "$0")/.."

# The members that are never published (`publish = false`).
unpublished=(table-model-suite table-model-fuzz-targets table-model-test-utils table-model-derive-tests)
exclude=()
for member in "${unpublished[@]}"; do exclude+=(--exclude "$member"); done

target=$(cargo metadata --format-version 1 --no-deps --offline | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
rm -f "$target"/package/*.crate
cargo package --workspace "${exclude[@]}" --no-verify --offline --allow-dirty --quiet

# Paths no package may hold (relative to the package's root): tests and their fixtures, benchmarks and their
# data, fuzz targets and corpora, proptest's regression files, merge leftovers (cargo's own `Cargo.toml.orig`,
# the manifest as written, aside).
forbidden='^[^/]+/((tests|benches|fuzz|fixtures|testdata|test-data|corpus|corpora)/|.*\.proptest-regressions$|.*\.(orig|rej)$)'
max_bytes=$((1024 * 1024))
failed=0
printf '%-28s %12s %12s %6s\n' package ".crate bytes" unpacked files
for crate in "$target"/package/*.crate; do
    name=$(basename "$crate" .crate)
    listing=$(tar -tvzf "$crate")
    files=$(awk '{print $6}' <<<"$listing")
    unpacked=$(awk '{s += $3} END {print s}' <<<"$listing")
    printf '%-28s %12d %12d %6d\n' "$name" "$(stat -c %s "$crate")" "$unpacked" "$(wc -l <<<"$files")"
    for license in LICENSE-MIT LICENSE-APACHE; do
        if ! grep -qx "$name/$license" <<<"$files"; then
            echo "  $name: no $license" >&2
            failed=1
        fi
    done
    if bad=$(grep -E "$forbidden" <<<"$files" | grep -vx "$name/Cargo.toml.orig"); then
        sed "s/^/  $name: not for a package: /" <<<"$bad" >&2
        failed=1
    fi
    if big=$(awk -v max="$max_bytes" '$3 > max {print $6 " (" $3 " bytes)"}' <<<"$listing") && [ -n "$big" ]; then
        sed "s/^/  $name: over 1 MiB: /" <<<"$big" >&2
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "check-package: some packages hold what they should not, or miss what they must (above)" >&2
    exit 1
fi
echo "check-package: every package has its license files, no test, benchmark or fuzz data, nothing over 1 MiB"
