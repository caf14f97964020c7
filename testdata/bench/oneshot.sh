#!/usr/bin/env bash
# What workforce adds around a harness's one-shot run, on a FILES-file,
# SIZE_MB MB tree. The harness is the compiled stand-in (internal/standin)
# linked as claude: it edits 10 files and prints the output recorded from
# the real claude -p (harness/testdata/oneshot/claude-write.json), so that
# only workforce's own work is measured. Each round times, in turn:
#
#   direct   the stand-in run in the repository itself: claude -p TASK
#            --output-format json
#   oneshot  workforce run editor TASK --json: copy, materialize, run,
#            sync-back, the result written (and the results pruned)
#   cp       cp -a of the repository (then rm -rf, timed apart)
#   cold     workforce run editor, interactive (no task; stdin not a
#            terminal), today's reference
#
# and prints each round, then the median of each over the rounds, the time
# workforce adds (oneshot - direct, cold - direct) and its ratio to cp -a
# and to cp -a + rm -rf. The tree is made under $TMPDIR (default /tmp): set
# TMPDIR=/dev/shm to measure on tmpfs.
# Usage: testdata/bench/oneshot.sh [FILES] [SIZE_MB] [ROUNDS]
set -euo pipefail
files=${1:-20000}
size_mb=${2:-150}
rounds=${3:-5}
cd "$(dirname "$0")/../.."
src=$PWD
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/workforce"
mkdir -p "$tmp/bin"
go build -o "$tmp/bin/claude" ./internal/standin
repo="$tmp/repo"
mkdir -p "$repo/.git"
echo 'ref: refs/heads/main' >"$repo/.git/HEAD"
per=$(( size_mb * 1024 * 1024 / files ))
head -c "$per" /dev/urandom >"$tmp/blob"
for d in $(seq 0 99); do
  mkdir -p "$repo/d$d"
  for f in $(seq 0 $(( files / 100 - 1 ))); do cp "$tmp/blob" "$repo/d$d/f$f.dat"; done
done
export AGENT_WORKFORCE_HOME="$tmp/home"
mkdir -p "$AGENT_WORKFORCE_HOME/personas"
cat >"$AGENT_WORKFORCE_HOME/personas/editor.json" <<'JSON'
{"id": "editor", "intent": "test", "description": "Edits.",
 "claudeMdContent": "Persona text.\n",
 "tiers": {"best": {"harness": "claude", "model": "m"}}}
JSON
for i in 0 1 2 3 4 5 6 7 8 9; do echo "append d$i/f0.dat edit"; done >"$tmp/do"
# The stand-in records nothing ($LOG unset) and runs no workforce context.
export PATH="$tmp/bin:$PATH" STANDIN_CONTEXT=none STANDIN_DO="$tmp/do" \
  STANDIN_OUTPUT="$src/harness/testdata/oneshot/claude-write.json"
unset LOG
task="write the file"
echo "tree: $(find "$repo" -type f | wc -l) files, $(du -sm "$repo" | cut -f1) MB; load: $(cut -d' ' -f1-3 /proc/loadavg)"
# Once before the rounds: the harness's version is probed and cached, as
# after a first run on any machine.
(cd "$repo" && "$tmp/workforce" run editor "$task" --json >/dev/null)

ms() { echo $(( ($2 - $1) / 1000000 )); }
declare -A all
for r in $(seq "$rounds"); do
  sync
  s=$(date +%s%N)
  (cd "$repo" && claude -p "$task" --output-format json >/dev/null </dev/null)
  e=$(date +%s%N); direct=$(ms "$s" "$e")
  sync
  s=$(date +%s%N)
  (cd "$repo" && "$tmp/workforce" run editor "$task" --json >"$tmp/result.json" </dev/null)
  e=$(date +%s%N); oneshot=$(ms "$s" "$e")
  grep -q '"status": "succeeded"' "$tmp/result.json"
  sync
  s=$(date +%s%N)
  cp -a "$repo" "$tmp/copy"
  e=$(date +%s%N); cp=$(ms "$s" "$e")
  rm -rf "$tmp/copy"
  e2=$(date +%s%N); rm=$(ms "$e" "$e2")
  sync
  s=$(date +%s%N)
  (cd "$repo" && "$tmp/workforce" run editor >/dev/null </dev/null)
  e=$(date +%s%N); cold=$(ms "$s" "$e")
  echo "round $r: direct $direct ms, oneshot $oneshot ms, cp -a $cp ms (rm -rf $rm ms), cold run $cold ms"
  all[direct]+="$direct "; all[oneshot]+="$oneshot "; all[cp]+="$cp "; all[rm]+="$rm "; all[cold]+="$cold "
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
d=$(median "${all[direct]}"); o=$(median "${all[oneshot]}"); c=$(median "${all[cp]}")
m=$(median "${all[rm]}"); k=$(median "${all[cold]}")
echo "median of $rounds: direct $d ms, oneshot $o ms, cp -a $c ms, rm -rf $m ms, cold run $k ms"
awk -v d="$d" -v o="$o" -v c="$c" -v m="$m" -v k="$k" 'BEGIN {
  printf "added by the one-shot run: %d ms = %.2fx cp -a, %.2fx cp -a + rm -rf\n", o - d, (o - d) / c, (o - d) / (c + m)
  printf "added by the cold run:     %d ms = %.2fx cp -a, %.2fx cp -a + rm -rf\n", k - d, (k - d) / c, (k - d) / (c + m)
}'
echo "results kept: $(find "$AGENT_WORKFORCE_HOME/results" -mindepth 1 -maxdepth 1 | wc -l)"
