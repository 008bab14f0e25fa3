#!/usr/bin/env bash
# Regenerate the Python gRPC stubs from the contract.
#
# Usage: scripts/gen_stubs.sh [OUT_DIR]   (default: daemon)
# The stubs land in OUT_DIR/scriptorium/v1/; the generated *_pb2_grpc.py imports
# scriptorium.v1.*_pb2 absolutely, so OUT_DIR must be a package root. A test regenerates into a
# temporary directory with the same grpc_tools and compares bytes with the committed stubs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/daemon}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

cd "$ROOT"
"$PYTHON" -m grpc_tools.protoc \
  -Iproto \
  --python_out="$OUT" \
  --pyi_out="$OUT" \
  --grpc_python_out="$OUT" \
  proto/scriptorium/v1/retrieval.proto
