#!/usr/bin/env bash
# `bash .ci/run` from N fresh clones of HEAD in a row, with a CPU-bound process running beside
# them the whole time: how CI's resistance to a busy machine is checked.
#   scripts/ci_under_load.sh [RUNS] [WORKDIR]
# Each clone gets the shared/ folder beside it (as CI lays it out); one line per run says how
# it ended, and each run's output is in WORKDIR/runN/run.log.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
SHARED=$(cd "$REPO/.." && pwd)/shared
RUNS=${1:-3}
WORK=${2:-$(mktemp -d)}
COMMIT=$(git -C "$REPO" rev-parse HEAD)
python3 -c 'while True: pass' &
HOG=$!
trap 'kill $HOG 2>/dev/null' EXIT
echo "commit ${COMMIT:0:12}, $RUNS runs in $WORK, CPU hog pid $HOG"
for i in $(seq 1 "$RUNS"); do
  dir="$WORK/run$i"
  mkdir -p "$dir"
  ln -sfn "$SHARED" "$dir/shared"
  git clone -q "$REPO" "$dir/main" && git -C "$dir/main" checkout -q "$COMMIT"
  start=$SECONDS
  (cd "$dir/main" && CI=true bash .ci/run > "$dir/run.log" 2>&1)
  rc=$?
  echo "run $i: exit $rc in $((SECONDS - start)) s; $(grep -E '^[0-9]+ passed' "$dir/run.log" | tail -1)"
done
