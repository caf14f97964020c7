#!/usr/bin/env bash
# Whole-process timings of `workforce pack` and `workforce install` of an
# N-persona pack (default 500), each persona with two sidecars.
# Usage: testdata/bench/pack.sh [N]
set -euo pipefail
n=${1:-500}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/workforce"
mkdir -p "$tmp/pack/personas"
echo '{"name": "bench", "version": "1.0.0"}' >"$tmp/pack/package.json"
for i in $(seq -w 1 "$n"); do
  id="p$i"
  mkdir -p "$tmp/pack/personas/$id/tier"
  printf '{"id": "%s", "intent": "x", "description": "Bench persona.", "claudeMd": "%s/notes.md", "tiers": {"best": {"harness": "codex", "model": "m", "agentsMd": "%s/tier/notes.md"}}}\n' "$id" "$id" "$id" >"$tmp/pack/personas/$id.json"
  echo "notes $id" >"$tmp/pack/personas/$id/notes.md"
  echo "tier $id" >"$tmp/pack/personas/$id/tier/notes.md"
done
export AGENT_WORKFORCE_HOME="$tmp/home"
s=$(date +%s%N); "$tmp/workforce" pack "$tmp/pack" -o "$tmp/p.tgz" >/dev/null 2>&1; e=$(date +%s%N)
echo "pack of $n personas: $(( (e - s) / 1000000 )) ms"
s=$(date +%s%N); "$tmp/workforce" install "$tmp/p.tgz" --dir "$tmp/layer" >/dev/null; e=$(date +%s%N)
echo "install of $n personas from the .tgz: $(( (e - s) / 1000000 )) ms"
s=$(date +%s%N); "$tmp/workforce" install "$tmp/pack" --dir "$tmp/layer2" >/dev/null; e=$(date +%s%N)
echo "install of $n personas from the directory: $(( (e - s) / 1000000 )) ms"
