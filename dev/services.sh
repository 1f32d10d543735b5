#!/usr/bin/env bash
# All local services for Engram development/tests (no Docker).
#
#   dev/services.sh up       start PostgreSQL and Kafka, then write <repo>/.dev/services.env
#   dev/services.sh down     stop both (each is attempted even if the other fails)
#   dev/services.sh status   exit 0 only if both are ready, 3 otherwise
#
# <repo>/.dev/services.env is a dotenv file read by the Python settings and tests:
#   ENGRAM_KAFKA_BOOTSTRAP=127.0.0.1:19092
#   ENGRAM_DATABASE_URL=postgresql://engram:engram@127.0.0.1:15432/engram
#   ENGRAM_KEYS_KEK_FILE=<repo>/.dev/kek
#
# The log is encrypted by default (docs/privacy.md): `up` makes a local key-encryption key once
# with dev/kek.sh, <repo>/.dev/kek (mode 0600; ENGRAM_DEV_KEK_FILE to put it elsewhere), and never
# replaces it: it wraps every principal's data key in the local database.
set -euo pipefail

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd -- "$SCRIPT_DIR/.." && pwd -P)"

KAFKA_PORT="${ENGRAM_DEV_KAFKA_PORT:-19092}"
PG_PORT="${ENGRAM_DEV_PG_PORT:-15432}"
ENV_FILE="$REPO/.dev/services.env"

write_env() {
  mkdir -p "$REPO/.dev"
  printf '%s\n' \
    "ENGRAM_KAFKA_BOOTSTRAP=127.0.0.1:$KAFKA_PORT" \
    "ENGRAM_DATABASE_URL=postgresql://engram:engram@127.0.0.1:$PG_PORT/engram" \
    "ENGRAM_KEYS_KEK_FILE=$KEK_FILE" \
    > "$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  echo "services: wrote $ENV_FILE" >&2
}

case "${1:-}" in
  up)
    bash "$SCRIPT_DIR/postgres.sh" up
    bash "$SCRIPT_DIR/kafka.sh" up
    KEK_FILE="$(bash "$SCRIPT_DIR/kek.sh")"
    write_env
    ;;
  down)
    rc=0
    bash "$SCRIPT_DIR/kafka.sh" down || rc=$?
    bash "$SCRIPT_DIR/postgres.sh" down || rc=$?
    exit "$rc"
    ;;
  status)
    rc=0
    bash "$SCRIPT_DIR/postgres.sh" status || rc=3
    bash "$SCRIPT_DIR/kafka.sh" status || rc=3
    exit "$rc"
    ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
