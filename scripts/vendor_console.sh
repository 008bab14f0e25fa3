#!/usr/bin/env bash
# Copies the console's Markdown renderer (marked) and sanitiser (DOMPurify), at the versions
# package.json pins, from node_modules into the console folder, where the daemon serves them:
# the page loads nothing from anywhere else. Run after `make node` when the pins change;
# tests/unit/test_console_vendor.py checks the copies against node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=daemon/scriptorium/http/console
# The source-map comment goes: the maps are not shipped, and a browser would ask for them.
strip() { sed '/^\/\/# sourceMappingURL=/d' "$1" > "$2"; }
strip node_modules/marked/lib/marked.umd.js "$dest/marked.umd.js"
strip node_modules/dompurify/dist/purify.min.js "$dest/purify.min.js"
cp node_modules/marked/LICENSE "$dest/marked.LICENSE.md"
cp node_modules/dompurify/LICENSE "$dest/dompurify.LICENSE"
echo "vendored marked $(node -p 'require("./node_modules/marked/package.json").version')," \
  "dompurify $(node -p 'require("./node_modules/dompurify/package.json").version')"
