#!/usr/bin/env bash
# Whole-process start-up, measured in one run on the same machine: a Go
# hello-world, `workforce --version` (the floor: package initialisation
# and one line printed), `workforce context` at depth 40 and `workforce list --json`
# over 1,000 personas in three layers, for the working tree's workforce and,
# given a git revision, for that revision's (read with git archive; the
# repository is not touched). Each is timed by `perf stat -r RUNS` (wall
# time, CPU time and page faults; a shell loop's wall time without perf),
# in ROUNDS rounds that alternate the binaries.
# Usage: testdata/bench/startup.sh [RUNS] [ROUNDS] [REVISION]
set -euo pipefail
runs=${1:-200}
rounds=${2:-3}
rev=${3:-}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/after"
bins=(after)
if [ -n "$rev" ]; then
  mkdir "$tmp/src"
  git archive "$rev" | tar -x -C "$tmp/src"
  make -s -C "$tmp/src" build OUT="$tmp/before"
  bins=(before after)
fi
mkdir "$tmp/hello"
cat >"$tmp/hello/main.go" <<'GO'
package main

import "fmt"

func main() { fmt.Println("hello, world") }
GO
printf 'module hello\n\ngo 1.26\n' >"$tmp/hello/go.mod"
(cd "$tmp/hello" && CGO_ENABLED=0 go build -trimpath -o "$tmp/hello-world" .)

# The context tree: depth 40, instruction files every fifth level.
dir="$tmp/repo"
mkdir -p "$dir/.git"
for i in $(seq -w 0 39); do
  dir="$dir/d$i"
  mkdir "$dir"
  if (( 10#$i % 5 == 0 )); then echo "level $i" >"$dir/AGENTS.md"; fi
done
# The list tree, as testdata/bench/list.sh makes it.
go run ./internal/benchtree/mkpersonas "$tmp/tree" 1000 >/dev/null
home="$tmp/home"
mkdir -p "$home" "$tmp/lrepo/.git" "$tmp/lrepo/.agentworkforce/workforce"
mv "$tmp/tree/user" "$home/personas"
mv "$tmp/tree/project" "$tmp/lrepo/.agentworkforce/workforce/personas"
printf '{"personaDirs": ["%s", "%s"]}\n' "$home/personas" "$tmp/tree/base" >"$home/config.json"
export AGENT_WORKFORCE_HOME="$home" HOME="$home"

# measure command...: "wall=Wms cpu=Cms faults=F", means over RUNS runs.
# perf's task-clock (CPU time) and page faults vary less than wall time
# when other work shares the machine.
measure() {
  if command -v perf >/dev/null; then
    perf stat -e task-clock,page-faults -r "$runs" "$@" 2>&1 >/dev/null | awk '
      /task-clock/ {cpu = $1} /page-faults/ {pf = $1} /time elapsed/ {wall = $1 * 1000}
      END {printf "wall=%.2fms cpu=%.2fms faults=%s", wall, cpu, pf}'
  else
    local start end
    start=$(date +%s%N)
    for _ in $(seq "$runs"); do "$@" >/dev/null; done
    end=$(date +%s%N)
    awk -v ns=$((end - start)) -v n="$runs" 'BEGIN {printf "wall=%.2fms", ns / n / 1e6}'
  fi
}
for round in $(seq "$rounds"); do
  echo "round $round, $runs runs each, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "  hello-world: $(measure "$tmp/hello-world")"
  for b in "${bins[@]}"; do
    # --version initialises every package and prints one line: the floor
    # any command of this binary starts from.
    echo "  $b --version: $(measure "$tmp/$b" --version)"
    echo "  $b context depth 40: $(cd "$tmp" && measure "$tmp/$b" context "$dir" --harness codex)"
    echo "  $b list --json 1,000: $(cd "$tmp/lrepo" && measure "$tmp/$b" list --json)"
  done
done
