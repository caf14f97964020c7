#!/bin/sh
# The local pool's efficiency: N stand-in tasks of SECONDS each (the
# stand-in harness sleeping), JOBS at a time, wall time against the ideal
# N*SECONDS/JOBS, with the mean wall time of a task's run (its child's
# own overhead is what exceeds SECONDS) and the machine's load average
# before and after. Usage: testdata/bench/batch.sh [N] [JOBS] [SECONDS]
set -eu
n=${1:-20} jobs=${2:-4} secs=${3:-1}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bin/workforce" "$root"
go build -o "$tmp/bin/claude" "$root/internal/standin"
export PATH="$tmp/bin:$PATH" HOME="$tmp/home" AGENT_WORKFORCE_HOME="$tmp/home/wf" WORKFORCE_SANDBOX=off
export STANDIN_CONTEXT=none STANDIN_DO="$tmp/do" STANDIN_OUTPUT="$root/harness/testdata/oneshot/claude-write.json"
mkdir -p "$AGENT_WORKFORCE_HOME/personas" "$tmp/proj"
cat > "$AGENT_WORKFORCE_HOME/personas/editor.json" <<'JSON'
{"id": "editor", "intent": "bench", "description": "Edits.", "agentsMdContent": "x\n", "claudeMdContent": "x\n",
 "tiers": {"best": {"harness": "claude", "model": "m"}}}
JSON
printf 'sleep %s\n' "$secs" > "$tmp/do"
echo 'package main' > "$tmp/proj/main.go"
i=1
while [ "$i" -le "$n" ]; do
	printf '{"id": "t%d", "persona": "editor", "task": "wait", "dir": "proj"}\n' "$i"
	i=$((i + 1))
done > "$tmp/tasks.jsonl"
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
start=$(date +%s.%N)
workforce batch "$tmp/tasks.jsonl" --jobs "$jobs" > "$tmp/out"
end=$(date +%s.%N)
load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
tail -1 "$tmp/out"
task=$(workforce batch status "$tmp/tasks.jsonl" --json | sed 's/.*"durationMs":\([0-9]*\),"exitCode".*/\1/' |
	awk '{ s += $1 } END { printf "%.3f", s / NR / 1000 }')
awk -v s="$start" -v e="$end" -v n="$n" -v j="$jobs" -v d="$secs" -v t="$task" -v l0="$load0" -v l1="$load1" 'BEGIN {
	ideal = n * d / j; wall = e - s
	printf "%d tasks of %ss, --jobs %d: wall %.2f s, ideal %.2f s, ratio %.2fx; a task %.3f s; load %s -> %s\n",
		n, d, j, wall, ideal, wall / ideal, t, l0, l1 }'
