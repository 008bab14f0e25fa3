#!/usr/bin/env bash
# Regenerate the Go stubs of the contract for the Go client (clients/go/scriptoriumv1).
#
# Usage: scripts/gen_go_stubs.sh [OUT_DIR]   (default: clients/go)
# The stubs land in OUT_DIR/scriptoriumv1/; PROTO_ROOT (default: proto/) is the contract's tree. protoc is the one the Python stubs use (grpcio-tools
# in .venv); the two Go plugins are built at the pinned versions below into clients/go/.bin, so
# the output depends only on the contract and these pins. A test regenerates into a temporary
# directory and compares bytes with the committed stubs.
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.36.12       # the google.golang.org/protobuf version in clients/go/go.mod
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/clients/go}"
PROTO_ROOT="${PROTO_ROOT:-$ROOT/proto}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
BIN="$ROOT/clients/go/.bin"
MODULE=scriptorium/clients/go
MAP="Mscriptorium/v1/retrieval.proto=$MODULE/scriptoriumv1;scriptoriumv1"

# Build a plugin at its pinned version once (a version-named copy, so a new pin rebuilds).
plugin() {
  local name="$1" pkg="$2" version="$3" exe="$BIN/$1-$3"
  if [ ! -x "$exe" ]; then
    mkdir -p "$BIN"
    GOBIN="$BIN" GOFLAGS=-mod=mod GOTOOLCHAIN=local "$GO" install "$pkg@$version"
    mv "$BIN/$name" "$exe"
  fi
  echo "$exe"
}

GEN_GO="$(plugin protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION")"
GEN_GRPC="$(plugin protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc \
  "$PROTOC_GEN_GO_GRPC_VERSION")"

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$PROTO_ROOT"
"$PYTHON" -m grpc_tools.protoc \
  -I. \
  --plugin=protoc-gen-go="$GEN_GO" \
  --plugin=protoc-gen-go-grpc="$GEN_GRPC" \
  --go_out="$OUT" --go_opt=module="$MODULE" --go_opt="$MAP" \
  --go-grpc_out="$OUT" --go-grpc_opt=module="$MODULE" --go-grpc_opt="$MAP" \
  scriptorium/v1/retrieval.proto
