#!/usr/bin/env bash
# The main job as a user runs it: build the dev manifest, evaluate greedy and
# fire-aware on an embedded Ray instance (every core of this machine) with the
# content-addressed store, verify both results by full replay, and print the
# paired comparison table. Everything it writes goes under ./demo-out/.
# Usage: scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh

OUT=demo-out
STORE="$OUT/store"
rm -rf "$OUT"
mkdir -p "$OUT"

echo "== manifest: every public scenario under seeds 0 1 2"
emberbench manifest build --seeds 0 1 2 --out "$OUT/dev-manifest.json"

for policy in greedy fire-aware; do
    echo "== run $policy (Ray, embedded)"
    emberbench run --manifest "$OUT/dev-manifest.json" --policy "$policy" --model-id "$policy" \
        --out "$OUT/$policy.json" --store "$STORE"
done

for policy in greedy fire-aware; do
    echo "== verify $policy (every record replayed)"
    emberbench verify "$OUT/$policy.json"
done

echo "== paired comparison: greedy - fire-aware"
emberbench compare "$OUT/greedy.json" "$OUT/fire-aware.json" --out "$OUT/greedy-vs-fire-aware.compare.json"
