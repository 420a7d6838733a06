# Sourced by the benchmarks that compare with the Python SDK (scripts/bench-vs-python.sh,
# scripts/bench-tablectl.sh): the one place that says which azure-data-tables they measure, where it lives, and
# how they find the emulator's process.
#
#   source scripts/bench-common.sh
#   bench_python_venv NAME     sets BENCH_VENV (the git-ignored .bench/venv), creating it if needed
#   bench_server_pid           prints the pid of the Azurite that `scripts/azurite.sh run` started for the caller

BENCH_PY_SDK_VERSION="12.7.0"

# The clients run as a user runs them, without backtraces: with RUST_BACKTRACE set, azure_core's
# `Headers::get_optional_str` captures a backtrace (an error it drops) for each header a request lacks, on every
# request (about 2% of an import's client CPU under perf).
unset RUST_BACKTRACE RUST_LIB_BACKTRACE

# Creates (or keeps) $BENCH_VENV with azure-data-tables==$BENCH_PY_SDK_VERSION; $1 names the caller in messages.
bench_python_venv() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    BENCH_VENV="$root/.bench/venv"
    mkdir -p "$root/.bench"
    local installed
    installed="$("$BENCH_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("azure-data-tables"))' \
        2>/dev/null || true)"
    if [[ "$installed" != "$BENCH_PY_SDK_VERSION" ]]; then
        echo "${1:-bench}: creating $BENCH_VENV with azure-data-tables==$BENCH_PY_SDK_VERSION" >&2
        python3 -m venv "$BENCH_VENV"
        "$BENCH_VENV/bin/pip" install --quiet --disable-pip-version-check "azure-data-tables==$BENCH_PY_SDK_VERSION"
    fi
}

# The pid of the emulator of the `scripts/azurite.sh run` whose command is the calling script: that run keeps it
# in .azurite/run-<its own pid>/table.pid, and the calling script is its child.
bench_server_pid() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    cat "$root/.azurite/run-$PPID/table.pid"
}
