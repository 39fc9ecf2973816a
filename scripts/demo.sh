#!/usr/bin/env bash
# The main job as a user runs it: build the dev manifest, evaluate greedy
# (where the automatic executor choice puts it: in process, since 36 episodes
# take less time than Ray takes to start) and fire-aware on an embedded Ray
# instance (--executor ray: every core of this machine), both with the
# content-addressed store, verify both results by full replay, and print the
# paired comparison table. Each run's last line names the executor that
# played it. The artifacts are the same bytes whichever executor plays them.
# Everything it writes goes under ./demo-out/.
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

echo "== run greedy (executor chosen by the work)"
emberbench run --manifest "$OUT/dev-manifest.json" --policy greedy --model-id greedy \
    --out "$OUT/greedy.json" --store "$STORE"

echo "== run fire-aware on an embedded Ray instance (--executor ray)"
emberbench run --manifest "$OUT/dev-manifest.json" --policy fire-aware --model-id fire-aware \
    --out "$OUT/fire-aware.json" --store "$STORE" --executor ray

for policy in greedy fire-aware; do
    echo "== verify $policy (every record replayed)"
    emberbench verify "$OUT/$policy.json"
done

echo "== paired comparison: greedy - fire-aware"
emberbench compare "$OUT/greedy.json" "$OUT/fire-aware.json" --out "$OUT/greedy-vs-fire-aware.compare.json"
