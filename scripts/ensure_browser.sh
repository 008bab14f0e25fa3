#!/usr/bin/env bash
# Debian's Chromium for the console's browser tests (tests/browser/test_console_browser.py), when it
# is missing; playwright-core comes from the root package.json (`make node`).
set -euo pipefail

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [[ -x "$CHROMIUM" ]]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "ensure_browser: $CHROMIUM is missing and there is no apt-get to install it" >&2
  exit 1
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  SUDO="sudo"
fi
echo "ensure_browser: installing Debian's chromium"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
