#!/usr/bin/env bash
# The browser the inspector's browser tests drive (tests/browser/): Debian's chromium and its
# chromedriver, installed from Debian packages when missing — never a browser download.
#
#   dev/browser.sh ensure   install chromium and chromium-driver with apt-get if either is missing
#   dev/browser.sh paths    print the two binaries the tests use (chromium, then chromedriver)
#
# Env: ENGRAM_CHROMIUM (/usr/bin/chromium), ENGRAM_CHROMEDRIVER (/usr/bin/chromedriver).
# As a user other than root it cannot install: it says what to run and exits 1.
set -euo pipefail

CHROMIUM="${ENGRAM_CHROMIUM:-/usr/bin/chromium}"
CHROMEDRIVER="${ENGRAM_CHROMEDRIVER:-/usr/bin/chromedriver}"

log() { echo "browser: $*" >&2; }

present() { [[ -x "$CHROMIUM" && -x "$CHROMEDRIVER" ]]; }

ensure() {
  if present; then return 0; fi
  if [[ $EUID -ne 0 ]]; then
    log "no $CHROMIUM or $CHROMEDRIVER; install them: sudo apt-get install -y chromium chromium-driver"
    exit 1
  fi
  log "installing chromium and chromium-driver from Debian packages (apt-get install)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends chromium chromium-driver >&2
  present || { log "the install did not provide $CHROMIUM and $CHROMEDRIVER"; exit 1; }
}

case "${1:-ensure}" in
  ensure) ensure ;;
  paths) echo "$CHROMIUM"; echo "$CHROMEDRIVER" ;;
  *) echo "usage: $0 ensure|paths" >&2; exit 2 ;;
esac
