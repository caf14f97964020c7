#!/usr/bin/env bash
# Regenerates this fixture from the real agentworkforce 4.0.2, installed from
# npm into a scratch directory outside the repository:
#   - persona.schema.json: @agentworkforce/persona-kit's schemas/persona.schema.json
#   - project/.agentworkforce/workforce/personas/persona-{maker,improver}.json:
#     the two built-in personas of @agentworkforce/workload-router's generated
#     catalog (dist/generated/personas.js), written as JSON
#   - show/<id>.json: `agentworkforce show <id> --json` for every persona of
#     the project directory, run there with an empty home, the project's
#     absolute path replaced by $PROJECT
# The other persona files (release-auditor, triage-bot, grok-scout, in-place)
# are written by hand to cover every field of that schema.
# Usage: testdata/agentworkforce-4.0.2/record.sh SCRATCH-DIR
set -euo pipefail
scratch=$(realpath "${1:?usage: record.sh SCRATCH-DIR}")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$scratch/home"
npm install --prefix "$scratch" --ignore-scripts --no-audit --no-fund agentworkforce@4.0.2
# npm skips the optional native binding on Node versions below the package's
# engines field (22); the CLI needs it to start.
npm install --prefix "$scratch" --ignore-scripts --no-audit --no-fund --no-save @relayburn/sdk-linux-x64-gnu@2.10.2 || true
cp "$scratch/node_modules/@agentworkforce/persona-kit/schemas/persona.schema.json" "$here/persona.schema.json"
personas="$here/project/.agentworkforce/workforce/personas"
cat >"$scratch/extract.mjs" <<'JS'
import { personaMaker, personaImprover } from './node_modules/@agentworkforce/workload-router/dist/generated/personas.js';
import { writeFileSync } from 'node:fs';
for (const p of [personaMaker, personaImprover]) {
  writeFileSync(`${process.argv[2]}/${p.id}.json`, JSON.stringify(p, null, 2) + '\n');
}
JS
(cd "$scratch" && node extract.mjs "$personas")
cd "$here/project"
mkdir -p "$here/show"
for f in "$personas"/*.json; do
  id=$(basename "$f" .json)
  HOME="$scratch/home" AGENT_WORKFORCE_HOME="$scratch/home/.agentworkforce/workforce" \
    "$scratch/node_modules/.bin/agentworkforce" show "$id" --json | sed "s#$PWD#\$PROJECT#g" >"$here/show/$id.json"
done
