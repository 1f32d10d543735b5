#!/usr/bin/env bash
# The demo: start a worker, ingest the example conversation, wait until it has formed, print the
# beliefs with their evidence, ask one question through recall, stop the worker, and print a token
# for ana with the address of the memory inspector (and make its secret, .dev/ui-secret, once).
# Expects `make migrate` to have run.
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
# The log is encrypted by default (.dev/kek, named in .dev/services.env): what was just appended
# is sealed. A log from an older demo that holds words in clear is named here, with the way out.
"$BIN/engram" log check || true
echo
"$BIN/engram" beliefs list --principal ana
"$BIN/engram" refusals list --principal ana
echo
# One question in plain words, as an agent asks it: beliefs first, then ana's own words that
# answer (the message index is the worker's own consumer: --wait lets it catch up first).
QUESTION="Who is visiting me, and where might she like to go?"
echo "recall: $QUESTION"
"$BIN/engram" recall "$QUESTION" --principal ana --project garden-app --wait 60

# The memory inspector (docs/usage.md, "Memory inspector"): the same memory as ana sees it in a browser.
# Its secret is 48 random bytes, made once and kept (owner-only) in .dev/ui-secret; one kept from
# before that the API would refuse (fewer than 256 bits by its estimate) is made again.
SECRET_FILE="$REPO/.dev/ui-secret"
if [[ ! -s "$SECRET_FILE" ]] || ! "$BIN/python" -c 'import sys
from engram.web.ui.session import check_secret
check_secret(open(sys.argv[1]).read().strip())' "$SECRET_FILE" 2>/dev/null; then
  (umask 077 && "$BIN/python" -c 'import secrets; print(secrets.token_urlsafe(48))' >"$SECRET_FILE")
fi
TOKEN="$("$BIN/engram" tokens create --tenant default --principal ana --expires-in 7d 2>/dev/null)"
echo
echo "See and correct what Engram remembers about ana in a browser: start the API and a worker"
echo "  ENGRAM_API_UI_SECRET=\"\$(cat $SECRET_FILE)\" $BIN/engram api & $BIN/engram worker &"
echo "then open http://127.0.0.1:${ENGRAM_API_PORT:-8080}/ui and paste ana's token:"
echo "  $TOKEN"
