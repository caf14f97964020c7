#!/usr/bin/env bash
# Whole-process timing of `workforce list --json` over N personas in three
# layers (project, user, a configured directory), averaged over RUNS runs.
# Usage: testdata/bench/list.sh [N] [RUNS]
set -euo pipefail
n=${1:-1000}
runs=${2:-50}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/workforce"
go run ./internal/benchtree/mkpersonas "$tmp/tree" "$n" >/dev/null
home="$tmp/home"
mkdir -p "$home" "$tmp/repo/.git" "$tmp/repo/.agentworkforce/workforce"
mv "$tmp/tree/user" "$home/personas"
mv "$tmp/tree/project" "$tmp/repo/.agentworkforce/workforce/personas"
printf '{"personaDirs": ["%s", "%s"]}\n' "$home/personas" "$tmp/tree/base" >"$home/config.json"
cd "$tmp/repo"
export AGENT_WORKFORCE_HOME="$home"
count=$("$tmp/workforce" list --json | grep -c '"id": "persona-[0-9]')
[ "$count" -eq "$n" ] || { echo "listed $count personas, want $n" >&2; exit 1; }
"$tmp/workforce" list --json >/dev/null # warm the page cache
start=$(date +%s%N)
for _ in $(seq "$runs"); do "$tmp/workforce" list --json >/dev/null; done
end=$(date +%s%N)
# The floor: cat of the same persona and sidecar files, as many runs.
files=("$home"/personas/* "$tmp"/tree/base/* "$tmp"/repo/.agentworkforce/workforce/personas/*)
cstart=$(date +%s%N)
for _ in $(seq "$runs"); do cat "${files[@]}" >/dev/null; done
cend=$(date +%s%N)
echo "personas=$n files=${#files[@]} runs=$runs list_mean=$(( (end - start) / runs / 1000 ))us cat_mean=$(( (cend - cstart) / runs / 1000 ))us"
# Without the shell loop's own cost, when perf is installed.
if command -v perf >/dev/null; then
  perf stat -r "$runs" "$tmp/workforce" list --json 2>&1 >/dev/null | grep -E 'time elapsed|page-faults'
fi
