#!/usr/bin/env bash
# gofmt and go vet over the Go client (clients/go); lists the files gofmt would change.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../clients/go"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
unformatted="$("$(dirname "$GO")/gofmt" -l .)"
if [ -n "$unformatted" ]; then
  echo "not gofmt-ed (run gofmt -w):" $unformatted
  exit 1
fi
GOTOOLCHAIN=local GOFLAGS=-mod=readonly "$GO" vet ./...
