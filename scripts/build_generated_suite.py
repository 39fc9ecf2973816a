#!/usr/bin/env python3
"""Write the shipped suite emberbench-v1-generated 1.0.0: 200 scenarios of the standard recipe, seed 1.

The suite is package data and pinned by hash (tests/unit/test_generated_suite.py).
It is exactly what ``emberbench suite generate --recipe standard --count 200
--seed 1 --suite-id emberbench-v1-generated --suite-version 1.0.0`` writes;
running this script again rewrites identical bytes. Changing the generator,
the standard recipe or the simulator-independent parts of the scenario
format changes the suite, which must then be released as a new version.

Usage: python scripts/build_generated_suite.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.generate import generate_suite, load_recipe, write_suite  # noqa: E402

SUITE_ID = "emberbench-v1-generated"
SUITE_VERSION = "1.0.0"
RECIPE = "standard"
COUNT = 200
SEED = 1


def main(out: Path) -> None:
    suite = generate_suite(load_recipe(RECIPE), COUNT, SEED, suite_id=SUITE_ID, suite_version=SUITE_VERSION)
    write_suite(suite, out, force=True)
    size = sum(p.stat().st_size for p in out.rglob("*.json"))
    print(f"wrote {len(suite.scenarios)} scenarios ({size} bytes); suite hash {suite.hash}")


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1] / "emberbench" / "suites" / SUITE_ID
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
