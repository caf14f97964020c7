#!/usr/bin/env bash
# The prompt `workforce pick` sends over N personas in three layers
# (project, user, a configured directory), and its whole-process time with
# the stand-in harness as claude answering at once, averaged over RUNS
# runs: the size of what the model would read, and workforce's own cost
# around the call (catalog, session, confinement off).
# Usage: testdata/bench/pick.sh [N] [RUNS]
set -euo pipefail
n=${1:-1000}
runs=${2:-20}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/workforce"
go build -o "$tmp/bin/claude" ./internal/standin
go run ./internal/benchtree/mkpersonas "$tmp/tree" "$n" >/dev/null
home="$tmp/home"
mkdir -p "$home" "$tmp/repo/.git" "$tmp/repo/.agentworkforce/workforce" "$tmp/log"
mv "$tmp/tree/user" "$home/personas"
mv "$tmp/tree/project" "$tmp/repo/.agentworkforce/workforce/personas"
printf '{"personaDirs": ["%s", "%s"]}\n' "$home/personas" "$tmp/tree/base" >"$home/config.json"
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"{\"persona\": \"persona-00001\", \"confidence\": \"high\", \"reason\": \"r\"}","session_id":"5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11","num_turns":1,"usage":{"input_tokens":1,"output_tokens":1}}' >"$tmp/answer.json"
cd "$tmp/repo"
export AGENT_WORKFORCE_HOME="$home" PATH="$tmp/bin:$PATH" STANDIN_OUTPUT="$tmp/answer.json" STANDIN_CONTEXT=none WORKFORCE_SANDBOX=off
LOG="$tmp/log" "$tmp/workforce" pick 'review the changes of this branch for security issues' >/dev/null 2>&1
# The prompt is the argument after -p, or on stdin when it is over 64 KiB.
if [ -s "$tmp/log/stdin" ]; then
  cp "$tmp/log/stdin" "$tmp/prompt"
else
  python3 -c 'import sys; sys.stdout.write(open(sys.argv[1]).read()[len("-p "):].split(" --output-format ")[0])' "$tmp/log/argv" >"$tmp/prompt"
fi
prompt=$(wc -c <"$tmp/prompt")
lines=$(grep -c '^- ' "$tmp/prompt")
start=$(date +%s%N)
for _ in $(seq "$runs"); do "$tmp/workforce" pick 'review the changes of this branch for security issues' >/dev/null 2>&1; done
end=$(date +%s%N)
echo "personas=$n candidates=$lines prompt_bytes=$prompt runs=$runs pick_mean=$(( (end - start) / runs / 1000 ))us"
