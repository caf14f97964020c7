#!/usr/bin/env bash
# The start-up floor of a Go binary linking what workforce links, measured
# in one run: a hello-world; the same hello-world importing every workforce
# package (their initialisation runs, none of their code is reachable, so
# the linker leaves it out); and workforce --version (every package
# initialised and all the code linked). Each is timed by `perf stat -r RUNS`
# (wall time, CPU time, page faults).
# Usage: testdata/bench/floor.sh [RUNS] [ROUNDS]
set -euo pipefail
runs=${1:-100}
rounds=${2:-2}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
src=$(mktemp -d ./_floor.XXXXXX) # inside the module, to import its packages; _ keeps it out of ./...
trap 'rm -rf "$tmp" "$src"' EXIT
make -s build OUT="$tmp/workforce"
mkdir "$src/hello" "$src/imports"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello, world") }\n' >"$src/hello/main.go"
{
  printf 'package main\n\nimport (\n\t"fmt"\n\n'
  for p in $(go list -f '{{if ne .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v -e /internal/ -e /e2e); do
    printf '\t_ "%s"\n' "$p"
  done
  printf '\t_ "github.com/urfave/cli/v2"\n)\n\nfunc main() { fmt.Println("hello, world") }\n'
} >"$src/imports/main.go"
for b in hello imports; do
  CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs -o "$tmp/$b" "./$src/$b"
done
for round in $(seq "$rounds"); do
  echo "round $round, $runs runs each, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for cmd in "$tmp/hello" "$tmp/imports" "$tmp/workforce --version"; do
    perf stat -e task-clock,page-faults -r "$runs" $cmd 2>&1 >/dev/null | awk -v b="$(basename "$cmd")" '
      /task-clock/ {cpu = $1} /page-faults/ {pf = $1} /time elapsed/ {wall = $1 * 1000}
      END {printf "  %-20s wall=%.2fms cpu=%.2fms faults=%s\n", b, wall, cpu, pf}'
  done
  ls -l "$tmp/hello" "$tmp/imports" "$tmp/workforce" | awk '{printf "  %s: %.1f MB\n", $NF, $5 / 1e6}' | sed "s|$tmp/||"
done
