#!/usr/bin/env bash
# A local key-encryption key for Engram's encrypted log (docs/privacy.md), made once.
#
#   dev/kek.sh [PATH]    make PATH (default <repo>/.dev/kek, or ENGRAM_DEV_KEK_FILE) unless it
#                        exists: 32 random bytes, base64, mode 0600; print its path
#
# dev/services.sh runs it and names the file in .dev/services.env (ENGRAM_KEYS_KEK_FILE);
# compose.yaml mounts it as the secret engram_kek. An existing key is never replaced: it wraps
# every principal's data key, and a new one would read none of them. Back it up.
set -euo pipefail

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd -- "$SCRIPT_DIR/.." && pwd -P)"
KEK_FILE="${1:-${ENGRAM_DEV_KEK_FILE:-$REPO/.dev/kek}}"

if [[ ! -f "$KEK_FILE" ]]; then
  mkdir -p "$(dirname -- "$KEK_FILE")"
  # Written to a private temporary file and linked into place: no reader ever sees a
  # half-written or world-readable key, and a key another process made meanwhile is kept.
  tmp="$KEK_FILE.$$.tmp"
  trap 'rm -f "$tmp"' EXIT
  (umask 077 && head -c 32 /dev/urandom | base64 -w0 > "$tmp" && echo >> "$tmp")
  if ln "$tmp" "$KEK_FILE" 2>/dev/null; then
    echo "kek: made a key-encryption key in $KEK_FILE (mode 0600; back it up)" >&2
  fi
fi
echo "$KEK_FILE"
