#!/usr/bin/env bash
# The demo: start a worker, ingest the example conversation, wait until it has formed, print the
# beliefs with their evidence, stop the worker. Expects `make migrate` to have run.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$REPO/.venv/bin"
LOG="$REPO/.dev/demo-worker.log"
cd "$REPO"

"$BIN/engram" topics
"$BIN/engram" worker --loglevel info >"$LOG" 2>&1 &
WORKER=$!
trap 'kill -TERM $WORKER 2>/dev/null || true; wait $WORKER 2>/dev/null || true' EXIT

if ! "$BIN/engram" ingest examples/conversation.jsonl --wait --timeout 120; then
  echo "formation did not finish; the worker log follows:" >&2
  tail -n 40 "$LOG" >&2
  exit 1
fi
echo
"$BIN/engram" beliefs list --principal ana
"$BIN/engram" refusals list --principal ana
