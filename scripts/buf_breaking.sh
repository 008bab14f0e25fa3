#!/usr/bin/env bash
# Check the contract for breaking changes against the previous commit.
#
# Usage: scripts/buf_breaking.sh [REF]   (default: HEAD~1, the first parent of HEAD)
# `subdir=proto` makes buf read the old tree as the proto module whether or not that commit
# already had a buf.yaml; without it, a commit lacking buf.yaml is read from the repository root
# and every file looks deleted. Skips (exit 0) when REF does not exist or has no proto/ tree,
# as on the first commit or in a shallow clone.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

REF="${1:-${BUF_AGAINST_REF:-HEAD~1}}"
BUF=(npx --no -- buf)

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "buf breaking: skipped (not a git work tree)"
  exit 0
fi
if ! git rev-parse --verify --quiet "$REF^{commit}" >/dev/null; then
  echo "buf breaking: skipped ($REF does not exist: first commit or shallow clone)"
  exit 0
fi
if ! git cat-file -e "$REF:proto" 2>/dev/null; then
  echo "buf breaking: skipped ($REF has no proto/ tree)"
  exit 0
fi

GIT_DIR_PATH="$(git rev-parse --git-dir)"
if [[ -d "$GIT_DIR_PATH" && "$(cd "$GIT_DIR_PATH" && pwd)" == "$(pwd)/.git" ]]; then
  AGAINST=".git#ref=$REF,subdir=proto"
else
  # Linked worktrees and submodules have no .git directory for buf to read: export the old tree.
  TMP="$(mktemp -d)"
  trap 'rm -rf "$TMP"' EXIT
  git archive "$REF" proto | tar -x -C "$TMP"
  AGAINST="$TMP/proto"
fi

echo "buf breaking: against $REF ($(git rev-parse --short "$REF"))"
"${BUF[@]}" breaking --against "$AGAINST"
