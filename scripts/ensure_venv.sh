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

if [[ -x "$VENV/bin/python" && -f "$STAMP" && ! pyproject.toml -nt "$STAMP" ]]; then
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

echo "ensure_venv: installing the project and its dev extras (pyproject.toml changed or first run)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]'
touch "$STAMP"
