#!/usr/bin/env bash
# The cold run lifecycle by the size of the tree, copy against overlay, in
# one run: for trees of 2,000, 20,000 and 200,000 small files (1 to 4 KiB,
# made by mktree), alternating, cp -a + rm -rf of the tree; a cold
# `workforce run --tree copy`; a cold `workforce run --tree overlay`
# without the overlay's listing cache (the project's first run: the cache
# removed before it), and one with the cache the first left. The
# harness is a shell stand-in named codex that edits 10 files; the run is
# confined (the default), as the overlay needs. Each overlay run is checked
# to be one: the plan says "tree: overlay" and the run warns of no copy;
# the script fails otherwise. Reports the median wall time of ROUNDS
# rounds and its ratio to cp -a + rm -rf.
#
# Then, unless BATCH is 0, a batch of 20 one-shot tasks (--jobs default)
# on the largest tree, each editing 10 files of its own, with
# WORKFORCE_TREE=copy and then overlay: the wall time of each.
#
# The trees and workforce's home are made under $TMPDIR (default /tmp):
# point it at a tmpfs to measure on tmpfs (TMPDIR=/dev/shm works).
# Usage: testdata/bench/tree.sh [ROUNDS] [SIZES] [BATCH]
#   e.g. testdata/bench/tree.sh 3 "2000 20000 200000" 1
set -euo pipefail
rounds=${1:-3}
sizes=${2:-2000 20000 200000}
batch=${3:-1}
cd "$(dirname "$0")/../.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/workforce"
go build -o "$tmp/mktree" ./testdata/bench/mktree
mkdir -p "$tmp/bin"
# The stand-in answers --version as codex does, so that its version is
# probed once and cached, as a real harness's is. Interactive, it appends
# to d0/e0..e9/f0.dat; as `codex exec ... PROMPT` (a batch's one-shot
# run), the prompt's last line "edit N" makes it append to
# dN/e0..e9/f0.dat instead, and print a one-shot run's JSON lines (held in
# the script: the harness sees a /tmp of its own).
{
  cat <<'SH'
#!/bin/sh
if [ "$1" = --version ]; then echo "codex-cli 0.169.0"; exit 0; fi
d=0
if [ "$1" = exec ]; then for a; do last=$a; done; d=$(printf '%s\n' "$last" | tail -1 | sed 's/^edit //'); fi
for i in 0 1 2 3 4 5 6 7 8 9; do echo "edit" >> "d$d/e$i/f0.dat"; done
[ "$1" = exec ] || exit 0
cat <<'JSON'
SH
  cat harness/testdata/oneshot/codex-write.jsonl
  echo JSON
} >"$tmp/bin/codex"
chmod +x "$tmp/bin/codex"
export PATH="$tmp/bin:$PATH" AGENT_WORKFORCE_HOME="$tmp/home" WORKFORCE_ROOT_WARNING=off
unset WORKFORCE_TREE WORKFORCE_SANDBOX
wf() { "$tmp/workforce" run test-writer@best-value "$@"; }

# The times are bash's clock in microseconds (${EPOCHREALTIME/./}): no
# process is started to read it.
# ms prints the milliseconds from $1 to $2 (microseconds).
ms() { echo $(( ($2 - $1) / 1000 )); }

# median prints the median of its arguments.
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# cpa copies the tree $1 with cp -a and removes the copy with rm -rf,
# and prints the milliseconds both took.
cpa() {
  local s e
  s=${EPOCHREALTIME/./}
  cp -a "$1" "$tmp/copy" && rm -rf "$tmp/copy"
  e=${EPOCHREALTIME/./}
  ms "$s" "$e"
}

# runmode runs a cold run in repo $1 with --tree $2, checking that it
# synced the 10 edits back and, for the overlay, that it took it, and
# prints the milliseconds the run took: workforce's process alone, the
# checks after it not counted.
runmode() {
  local s e
  cd "$1"
  s=${EPOCHREALTIME/./}
  wf --tree "$2" >"$tmp/out" 2>"$tmp/err" || { e=$?; cat "$tmp/err" >&2; exit "$e"; }
  e=${EPOCHREALTIME/./}
  if grep -q 'copied instead' "$tmp/err"; then
    echo "FAIL: --tree $2 fell back to the copy:" >&2; cat "$tmp/err" >&2; exit 1
  fi
  if [ "$(grep -c '^updated: ' "$tmp/out")" != 10 ]; then
    echo "FAIL: --tree $2 did not sync 10 files back:" >&2; cat "$tmp/out" "$tmp/err" >&2; exit 1
  fi
  ms "$s" "$e"
}

# checkplan fails unless a run in repo $1 with --tree overlay plans the
# overlay, confined by the workforce-launcher make build put beside
# workforce. grep reads the whole plan: with -q it would exit at the line,
# and workforce's next write fail (pipefail).
checkplan() {
  (cd "$1" && wf --tree overlay --dry-run 2>&1 | grep -x 'tree: overlay' >/dev/null) ||
    { echo "FAIL: the overlay is not planned in $1:" >&2; (cd "$1" && wf --tree overlay --dry-run 2>&1 | head -20) >&2; exit 1; }
  (cd "$1" && wf --tree overlay --dry-run 2>&1 | grep -x "  launcher: $tmp/workforce-launcher" >/dev/null) ||
    { echo "FAIL: the run is not confined by $tmp/workforce-launcher:" >&2; (cd "$1" && wf --tree overlay --dry-run 2>&1 | grep launcher) >&2; exit 1; }
}

echo "TMPDIR: ${TMPDIR:-/tmp} ($(stat -f -c %T "$tmp")); load: $(uptime)"
for n in $sizes; do
  repo="$tmp/repo$n"
  mkdir -p "$repo/.git"
  "$tmp/mktree" "$repo" "$n"
  checkplan "$repo"
  echo "tree: $(find "$repo" -type f | wc -l) files, $(find "$repo" -type d | wc -l) directories, $(du -sm "$repo" | cut -f1) MB"
  # A project's directories are not all changed in the seconds before a
  # run: past the listing cache's racy margin (2 s), which never caches a
  # directory changed later than that before the listing.
  sleep 2
  sync
  cp_t=() copy_t=() cold_t=() ov_t=()
  for r in $(seq "$rounds"); do
    # Each measurement starts with the page cache's dirty data written
    # out, so that none pays for another's writes.
    sync; t=$(cpa "$repo"); cp_t+=("$t")
    sync; t=$(runmode "$repo" copy); copy_t+=("$t")
    rm -rf "$tmp/home/cache/overlay-listings"
    sync; t=$(runmode "$repo" overlay); cold_t+=("$t")
    sync; t=$(runmode "$repo" overlay); ov_t+=("$t")
    echo "  round $r: cp -a + rm -rf ${cp_t[-1]} ms, --tree copy ${copy_t[-1]} ms, --tree overlay ${cold_t[-1]} ms without the listing cache, ${ov_t[-1]} ms with it"
  done
  c=$(median "${cp_t[@]}") y=$(median "${copy_t[@]}") k=$(median "${cold_t[@]}") o=$(median "${ov_t[@]}")
  awk -v n="$n" -v c="$c" -v y="$y" -v k="$k" -v o="$o" 'BEGIN {
    printf "%d files, median: cp -a + rm -rf %d ms; --tree copy %d ms (%.3fx); --tree overlay %d ms (%.3fx) without the listing cache, %d ms (%.3fx) with it\n",
      n, c, y, y / c, k, k / c, o, o / c }'
  echo "  load: $(uptime)"
  last=$n
done

[ "$batch" = 0 ] && exit 0
# The batch: 20 one-shot tasks in the largest tree, task i editing
# d<i>/e0..e9/f0.dat (distinct files: no conflicts between tasks).
repo="$tmp/repo$last"
for i in $(seq 0 19); do
  mkdir -p "$repo/d$i/e0" "$repo/d$i/e9"
  for j in $(seq 0 9); do mkdir -p "$repo/d$i/e$j"; [ -e "$repo/d$i/e$j/f0.dat" ] || echo x >"$repo/d$i/e$j/f0.dat"; done
done
(cd "$repo" && WORKFORCE_TREE=overlay wf --dry-run 2>&1 | grep -x 'tree: overlay' >/dev/null) ||
  { echo "FAIL: WORKFORCE_TREE=overlay does not plan the overlay" >&2; exit 1; }
for mode in copy overlay; do
  for i in $(seq 0 19); do
    printf '{"id": "%s%d", "persona": "test-writer@best-value", "task": "edit %d", "dir": "%s"}\n' "$mode" "$i" "$i" "$repo"
  done >"$tmp/$mode.jsonl"
  sync
  s=$(date +%s%N)
  WORKFORCE_TREE=$mode "$tmp/workforce" batch "$tmp/$mode.jsonl" >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/out" "$tmp/err" >&2; exit 1; }
  e=$(date +%s%N)
  # A task's run that fell back to the copy says so in its result's
  # warnings.
  if grep -rqs 'copied instead' "$tmp/err" "$tmp/home/results"; then
    echo "FAIL: a task of the batch fell back to the copy" >&2; exit 1
  fi
  echo "batch of 20 tasks, $last files, WORKFORCE_TREE=$mode: $(( (e - s) / 1000000 )) ms; $(tail -1 "$tmp/out")"
  echo "  load: $(uptime)"
done
