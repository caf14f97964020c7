#!/usr/bin/env bash
# Whole-process timing of `workforce context` at depth 40 in a repository of
# FILES files (default 100,000), mean of RUNS runs, for each harness.
# Usage: testdata/bench/context.sh [FILES] [RUNS]
set -euo pipefail
files=${1:-100000}
runs=${2:-50}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/workforce"
repo="$tmp/repo"
mkdir -p "$repo/.git"
dir="$repo"
for i in $(seq -w 0 39); do
  dir="$dir/d$i"
  mkdir "$dir"
  if (( 10#$i % 5 == 0 )); then echo "level $i" >"$dir/AGENTS.md"; echo "level $i" >"$dir/CLAUDE.md"; fi
done
# Spread the files over the first level's siblings so that the walk passes
# them by.
mkdir -p "$repo/bulk"
(cd "$repo/bulk" && seq -f 'f%06g.txt' 1 "$files" | xargs touch)
export HOME="$tmp/home"
for h in codex claude opencode; do
  "$tmp/workforce" context "$dir" --harness "$h" >/dev/null
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do "$tmp/workforce" context "$dir" --harness "$h" >/dev/null; done
  end=$(date +%s%N)
  echo "harness=$h depth=40 files=$files runs=$runs mean=$(( (end - start) / runs / 1000 ))us"
done
