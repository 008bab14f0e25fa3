#!/usr/bin/env bash
# Build the Go example against Debian's Go packages in GOPATH mode (no module proxy needed):
#   apt-get install -y golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc \
#     golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
#   clients/go/build.sh [OUT]        # OUT defaults to ./scriptorium-example
# The stubs are generated from proto/ into a throwaway GOPATH, so nothing generated is kept.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(realpath -m "${1:-scriptorium-example}")
pkg=scriptorium-example
map="Mscriptorium/v1/retrieval.proto=$pkg/scriptoriumv1"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/$pkg"
protoc -I "$repo/proto" -I /usr/include \
  --go_out="$work/src" --go_opt="$map" \
  --go-grpc_out="$work/src" --go-grpc_opt="$map" \
  scriptorium/v1/retrieval.proto
cp "$here/main.go" "$work/src/$pkg/"
cd "$work/src/$pkg"
GO111MODULE=off GOPATH="$work:/usr/share/gocode" go build -o "$out" .
echo "built $out"
