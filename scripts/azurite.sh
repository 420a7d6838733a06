#!/usr/bin/env bash
# Runs the Azurite emulator's Table service on loopback for the integration tests and examples.
#
#   scripts/azurite.sh install        install the pinned Azurite (scripts/azurite/package-lock.json) into .azurite/
#   scripts/azurite.sh start          install if needed, start azurite-table on 127.0.0.1 on a free port with
#                                     in-memory persistence, wait until it answers, print the `export` lines
#   scripts/azurite.sh env            print the `export` lines of the running one
#   scripts/azurite.sh stop           stop it by its process id
#   scripts/azurite.sh run CMD ARGS   start an emulator of its own, run CMD with it in its environment, stop it
#                                     (even on failure); exits with CMD's status. It never touches the emulator of
#                                     `start` nor that of another `run`: each runs beside the others.
#
# Typical use:   eval "$(scripts/azurite.sh start)" && cargo test --workspace; scripts/azurite.sh stop
#         or:    scripts/azurite.sh run cargo test --workspace
#
# The environment gets the emulator as TABLE_MODEL_AZURITE_ENDPOINT (its URL, for this repository's tests) and as
# AZURE_STORAGE_CONNECTION_STRING (a connection string, the variable Azure's tools and SDK samples read, which
# the README's code reads too).
#
# Everything lives in the git-ignored .azurite/ folder at the workspace root: node_modules, and for each emulator
# its pid file, environment file and log (`start`'s in .azurite/, each `run`'s in .azurite/run-<pid>/, removed
# when it stops). Only the Table service is started, only on 127.0.0.1, with telemetry off.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/.azurite"
PIN="$ROOT/scripts/azurite"
BIN="$DIR/node_modules/.bin/azurite-table"
ENV_VAR="TABLE_MODEL_AZURITE_ENDPOINT"
CONNECTION_VAR="AZURE_STORAGE_CONNECTION_STRING"
# The emulator's well-known development account and key (public, documented by Microsoft; not a secret).
ACCOUNT="devstoreaccount1"
ACCOUNT_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

# The files of one emulator: `start`'s in .azurite/, a `run`'s in a folder of its own (`use_state`).
use_state() {
    STATE="$1"
    PID_FILE="$STATE/table.pid"
    ENV_FILE="$STATE/table.env"
    LOG_FILE="$STATE/table.log"
}
use_state "$DIR"

say() { echo "azurite.sh: $*" >&2; }

install() {
    mkdir -p "$DIR"
    local want
    want="$(node -p "require('$PIN/package.json').dependencies.azurite")"
    if [[ -x "$BIN" ]] && [[ "$(node -p "require('$DIR/node_modules/azurite/package.json').version" 2>/dev/null)" == "$want" ]]; then
        return 0
    fi
    say "installing azurite $want into $DIR"
    cp "$PIN/package.json" "$PIN/package-lock.json" "$DIR/"
    # `npm ci` installs exactly what the lock file pins (every transitive package by integrity hash).
    npm ci --prefix "$DIR" --no-audit --no-fund --loglevel=error >&2
}

# The pid of the emulator this script started, if it still runs (a stale pid file whose pid now belongs to
# another process does not count: only our azurite-table is ever stopped).
running_pid() {
    [[ -f "$PID_FILE" ]] || return 1
    local pid
    pid="$(cat "$PID_FILE")"
    if kill -0 "$pid" 2>/dev/null && ps -p "$pid" -o args= | grep -q "azurite-table"; then
        echo "$pid"
    else
        return 1
    fi
}

free_port() {
    node -e "const s = require('net').createServer(); s.listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });"
}

# Succeeds once the server answers HTTP at all (any status: an unsigned request gets 403).
answers() {
    node -e "
const req = require('http').get({ host: '127.0.0.1', port: $1, path: '/$ACCOUNT/Tables', timeout: 1000 }, (res) => { res.resume(); process.exit(0); });
req.on('error', () => process.exit(1));
req.on('timeout', () => { req.destroy(); process.exit(1); });"
}

start() {
    if pid="$(running_pid)"; then
        say "already running (pid $pid)"
        cat "$ENV_FILE"
        return 0
    fi
    install
    local port
    port="$(free_port)"
    mkdir -p "$STATE/workspace"
    # setsid: the emulator gets its own session, so it outlives this script and is stopped only by `stop`.
    # It runs in the state folder's workspace/ (in-memory persistence forbids --location; anything it writes
    # lands there).
    (cd "$STATE/workspace" && exec setsid "$BIN" --tableHost 127.0.0.1 --tablePort "$port" --inMemoryPersistence \
        --disableTelemetry >"$LOG_FILE" 2>&1 </dev/null) &
    local pid=$!
    echo "$pid" >"$PID_FILE"
    local tries=0
    until answers "$port"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            say "azurite-table exited; its log follows"
            cat "$LOG_FILE" >&2
            rm -f "$PID_FILE"
            return 1
        fi
        tries=$((tries + 1))
        if ((tries > 120)); then
            say "azurite-table did not answer within 60 s; stopping it"
            stop
            return 1
        fi
        sleep 0.5
    done
    local url="http://127.0.0.1:$port/$ACCOUNT"
    {
        echo "export $ENV_VAR=$url"
        echo "export $CONNECTION_VAR='DefaultEndpointsProtocol=http;AccountName=$ACCOUNT;AccountKey=$ACCOUNT_KEY;TableEndpoint=$url;'"
    } >"$ENV_FILE"
    say "azurite-table $(node -p "require('$DIR/node_modules/azurite/package.json').version") listening on 127.0.0.1:$port (pid $pid)"
    cat "$ENV_FILE"
}

stop() {
    local pid
    if pid="$(running_pid)"; then
        kill "$pid"
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill -9 "$pid"
        fi
        say "stopped (pid $pid)"
    fi
    rm -f "$PID_FILE" "$ENV_FILE"
}

env_line() {
    if running_pid >/dev/null; then
        cat "$ENV_FILE"
    else
        say "not running; use: scripts/azurite.sh start"
        return 1
    fi
}

# An emulator of its own, in .azurite/run-<pid>/: stopping it on exit stops nothing another command started
# (`start`'s emulator, or another `run`'s, which may still be in use).
run() {
    [[ $# -gt 0 ]] || { say "usage: scripts/azurite.sh run CMD [ARGS...]"; return 2; }
    use_state "$DIR/run-$$"
    trap 'stop; rm -rf "$STATE"' EXIT
    local lines
    lines="$(start)"
    eval "$lines"
    local status=0
    "$@" || status=$?
    return "$status"
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    env) env_line ;;
    run) shift; run "$@" ;;
    *)
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
        exit 2
        ;;
esac
