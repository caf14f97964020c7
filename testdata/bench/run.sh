#!/usr/bin/env bash
# Whole run lifecycle against cp -a + rm -rf of the same tree, in one run:
# create the sandbox of a FILES-file, SIZE_MB MB tree, a stand-in harness
# that edits 10 files, sync-back, cleanup; then the same with --reuse, warm
# (the sandbox kept from the run before and refreshed); then with the
# overlay (--tree overlay: nothing copied). Reports wall time
# and peak RSS. The tree is made under $TMPDIR (default /tmp): set
# TMPDIR=/dev/shm to measure on tmpfs.
# Usage: testdata/bench/run.sh [FILES] [SIZE_MB] [RUNS]
set -euo pipefail
files=${1:-20000}
size_mb=${2:-150}
runs=${3:-3}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
make -s build OUT="$tmp/workforce"
repo="$tmp/repo"
mkdir -p "$repo/.git" "$tmp/bin"
per=$(( size_mb * 1024 * 1024 / files ))
# Text, written by the shell itself (no process a file): 200,000 files in
# seconds.
blob=$(head -c "$per" /dev/urandom | base64 -w0 | head -c "$per")
for d in $(seq 0 99); do
  mkdir -p "$repo/d$d"
  for f in $(seq 0 $(( files / 100 - 1 ))); do printf '%s' "$blob" >"$repo/d$d/f$f.dat"; done
done
# The stand-in answers --version as codex does (the version workforce
# measured), so that its version is probed once and cached, as a real
# harness's is.
cat >"$tmp/bin/codex" <<'SH'
#!/bin/sh
if [ "$1" = --version ]; then echo "codex-cli 0.169.0"; exit 0; fi
for i in 0 1 2 3 4 5 6 7 8 9; do echo "edit" >> "d$i/f0.dat"; done
SH
chmod +x "$tmp/bin/codex"
export PATH="$tmp/bin:$PATH" AGENT_WORKFORCE_HOME="$tmp/home"
echo "tree: $(find "$repo" -type f | wc -l) files, $(du -sm "$repo" | cut -f1) MB"
sync
# Each measurement starts with the page cache's dirty data written out, so
# that neither pays for the other's writes.
for r in $(seq "$runs"); do
  sync
  s=$(date +%s%N)
  cp -a "$repo" "$tmp/copy" && rm -rf "$tmp/copy"
  e=$(date +%s%N)
  echo "run $r: cp -a + rm -rf: $(( (e - s) / 1000000 )) ms"
  sync
  s=$(date +%s%N)
  (cd "$repo" && /usr/bin/time -f "%M" -o "$tmp/rss" "$tmp/workforce" run test-writer@best-value >/dev/null)
  e=$(date +%s%N)
  echo "run $r: workforce run: $(( (e - s) / 1000000 )) ms, peak RSS $(cat "$tmp/rss") KB"
  sync
  s=$(date +%s%N)
  (cd "$repo" && /usr/bin/time -f "%M" -o "$tmp/rss" "$tmp/workforce" run test-writer@best-value --tree overlay >"$tmp/out")
  e=$(date +%s%N)
  echo "run $r: workforce run --tree overlay: $(( (e - s) / 1000000 )) ms, peak RSS $(cat "$tmp/rss") KB, $(grep -c '^updated: ' "$tmp/out") files synced back"
  (cd "$repo" && "$tmp/workforce" run test-writer@best-value --reuse >/dev/null) # warms it
  sync
  s=$(date +%s%N)
  (cd "$repo" && /usr/bin/time -f "%M" -o "$tmp/rss" "$tmp/workforce" run test-writer@best-value --reuse >/dev/null)
  e=$(date +%s%N)
  echo "run $r: workforce run --reuse, warm: $(( (e - s) / 1000000 )) ms, peak RSS $(cat "$tmp/rss") KB"
  rm -rf "$tmp/home/warm"
done
