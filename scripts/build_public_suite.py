#!/usr/bin/env python3
"""Write the public suite emberbench-v1-public 1.0.0 (scenario files and suite.json).

The suite is package data and is pinned by content hash; this script is how it
was made. Running it again rewrites identical bytes (it is deterministic);
changing a scenario changes its hash and therefore the suite hash, which is a
new suite version.

Usage: python scripts/build_public_suite.py [OUT_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emberbench.io.atomic import atomic_write_bytes  # noqa: E402
from emberbench.io.canonical import canonical_bytes, digest  # noqa: E402
from emberbench.sim.rng import SplitMix64  # noqa: E402
from emberbench.sim.scenario import scenario_from_dict  # noqa: E402
from emberbench.io.versions import SCENARIO_FORMAT_VERSION, SUITE_FORMAT_VERSION, SUITE_VERSION  # noqa: E402


class Plan:
    """A scenario under construction: a walled rectangle to carve into."""

    def __init__(self, sid: str, h: int, w: int, description: str) -> None:
        self.sid, self.description = sid, description
        self.cells = [["#"] * w for _ in range(h)]
        self.h, self.w = h, w
        self.exits: list[dict] = []
        self.people: list[tuple[int, int]] = []
        self.fire: list[list[int]] = []

    def floor(self, r0: int, c0: int, r1: int, c1: int) -> "Plan":
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                self.cells[r][c] = "."
        return self

    def wall(self, r0: int, c0: int, r1: int, c1: int) -> "Plan":
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                self.cells[r][c] = "#"
        return self

    def exit(self, eid: str, r: int, c: int) -> "Plan":
        self.cells[r][c] = "."
        self.exits.append({"id": eid, "row": r, "col": c})
        return self

    def person(self, r: int, c: int) -> "Plan":
        self.people.append((r, c))
        return self

    def block(self, r0: int, c0: int, r1: int, c1: int, step: int = 1) -> "Plan":
        for r in range(r0, r1 + 1, step):
            for c in range(c0, c1 + 1, step):
                self.person(r, c)
        return self

    def scatter(self, n: int, r0: int, c0: int, r1: int, c1: int, seed: int) -> "Plan":
        rng = SplitMix64(seed)
        taken = set(self.people) | {(e["row"], e["col"]) for e in self.exits} | {tuple(f) for f in self.fire}
        while n:
            r, c = r0 + rng.below(r1 - r0 + 1), c0 + rng.below(c1 - c0 + 1)
            if self.cells[r][c] == "." and (r, c) not in taken:
                taken.add((r, c))
                self.person(r, c)
                n -= 1
        return self

    def burn(self, r: int, c: int) -> "Plan":
        self.fire.append([r, c])
        return self

    def to_dict(self, num: int, den: int, max_steps: int, allow_unreachable: bool = False) -> dict:
        return {
            "scenario_format": SCENARIO_FORMAT_VERSION,
            "id": self.sid,
            "description": self.description,
            "map": ["".join(row) for row in self.cells],
            "exits": self.exits,
            "people": [{"id": f"p{i:03d}", "row": r, "col": c} for i, (r, c) in enumerate(self.people, start=1)],
            "fire": self.fire,
            "spread": {"numerator": num, "denominator": den},
            "max_steps": max_steps,
            "seed": 0,
            "allow_unreachable": allow_unreachable,
        }


def scenarios() -> list[dict]:
    out = []

    p = Plan("v1-pub-01-single-exit-sparse", 10, 14,
             "One exit and a few people far from a slow fire: the baseline check that a policy walks people out at all.")
    p.floor(1, 1, 8, 12).exit("east", 5, 13)
    for r, c in ((2, 3), (3, 8), (5, 2), (6, 6), (7, 10), (8, 4)):
        p.person(r, c)
    p.burn(1, 1)
    out.append(p.to_dict(1, 4, 60))

    p = Plan("v1-pub-02-fire-at-near-exit", 13, 24,
             "Two exits; the fire starts beside the exit nearest to the crowd and spreads every step, so the near exit is a trap.")
    p.floor(1, 1, 11, 22).exit("west", 6, 0).exit("east", 6, 23)
    p.block(3, 6, 9, 9)
    p.burn(6, 2).burn(5, 2).burn(7, 2)
    out.append(p.to_dict(1, 1, 60))

    p = Plan("v1-pub-03-bottleneck-door", 16, 26,
             "A crowded hall drains through a one-cell door into a corridor: congestion decides how fast people get out.")
    p.floor(1, 1, 14, 12).floor(7, 13, 8, 24).exit("corridor-end", 7, 25)
    p.wall(1, 13, 6, 13).wall(9, 13, 14, 13).floor(7, 13, 7, 13).wall(8, 13, 8, 13)
    p.block(2, 2, 13, 10, 2)
    p.burn(14, 1)
    out.append(p.to_dict(1, 6, 160))

    p = Plan("v1-pub-04-dead-end-corridor", 9, 30,
             "People in a corridor between the only exit and a dead end; fire starts near the junction to the exit.")
    p.floor(4, 1, 4, 28).floor(1, 5, 7, 5).exit("stairs", 1, 5)
    for c in range(8, 27, 3):
        p.person(4, c)
    p.burn(7, 5)
    out.append(p.to_dict(1, 5, 80))

    p = Plan("v1-pub-05-four-exits-crowd", 22, 22,
             "A crowd in a square room with an exit on each side and a fire near the middle: several exits share the load.")
    p.floor(1, 1, 20, 20).exit("north", 0, 10).exit("east", 11, 21).exit("south", 21, 11).exit("west", 10, 0)
    p.burn(10, 10).burn(11, 11)
    p.scatter(60, 1, 1, 20, 20, seed=505)
    out.append(p.to_dict(1, 3, 120))

    p = Plan("v1-pub-06-fast-deterministic-fire", 14, 30,
             "Fire spreads to every neighbouring cell each step from two origins: a pure race with no randomness.")
    p.floor(1, 1, 12, 28).exit("left", 12, 0).exit("right", 1, 29)
    p.burn(6, 10).burn(7, 19)
    p.scatter(24, 1, 1, 12, 28, seed=606)
    out.append(p.to_dict(1, 1, 50))

    p = Plan("v1-pub-07-office-rooms", 17, 33,
             "Offices with single doors along a corridor with exits at both ends; a stochastic fire in one office.")
    p.floor(8, 1, 8, 31).exit("west", 8, 0).exit("east", 8, 32)
    for c0 in range(1, 31, 6):
        p.floor(1, c0, 6, c0 + 4).floor(7, c0 + 2, 7, c0 + 2)
        p.floor(10, c0, 15, c0 + 4).floor(9, c0 + 2, 9, c0 + 2)
    p.scatter(40, 1, 1, 15, 31, seed=707)
    p.burn(3, 15)
    out.append(p.to_dict(1, 3, 150))

    p = Plan("v1-pub-08-sealed-room", 12, 20,
             "A sealed room holds two people with no way out next to a hall with one exit: it separates stranded from trapped.")
    p.floor(1, 1, 10, 12).floor(2, 15, 9, 18).exit("door", 5, 0)
    p.person(4, 16).person(7, 17)
    p.block(2, 5, 8, 11, 3)
    p.burn(9, 12)
    out.append(p.to_dict(1, 4, 60, allow_unreachable=True))

    p = Plan("v1-pub-09-threatened-nearest-exit", 15, 28,
             "The nearest exit has a fire next to it that may or may not close it in time; the far exit is safe but slow.")
    p.floor(1, 1, 13, 26).exit("near", 13, 8).exit("far", 1, 27)
    p.burn(12, 10)
    p.block(6, 4, 10, 12, 2)
    out.append(p.to_dict(1, 4, 100))

    p = Plan("v1-pub-10-route-invalidation", 15, 30,
             "A short corridor to the exit passes a stochastic fire that can cut it; a longer detour stays open.")
    p.floor(2, 1, 12, 6)          # start hall
    p.floor(7, 7, 7, 27)          # short corridor east
    p.floor(1, 7, 1, 28)          # long detour along the top
    p.floor(1, 28, 7, 28)
    p.floor(1, 6, 1, 6)
    p.exit("exit", 7, 29)
    p.floor(8, 14, 12, 16)        # alcove where the fire starts
    p.burn(12, 15)
    p.block(3, 2, 11, 5, 2)
    out.append(p.to_dict(1, 6, 120))

    p = Plan("v1-pub-11-large-campus", 64, 64,
             "A 64x64 floor with 300 people, internal walls, six exits and three fire origins: congestion and speed at scale.")
    p.floor(1, 1, 62, 62)
    for r in (16, 32, 48):
        p.wall(r, 1, r, 62)
        for c in (8, 24, 40, 56):
            p.floor(r, c - 1, r, c + 1)
    for c in (21, 43):
        p.wall(1, c, 62, c)
        for r in (8, 24, 40, 56):
            p.floor(r, c, r, c)
    p.exit("n1", 0, 12).exit("n2", 0, 52).exit("w", 31, 0).exit("e", 33, 63).exit("s1", 63, 10).exit("s2", 63, 50)
    p.burn(20, 30).burn(44, 12).burn(40, 52)
    p.scatter(300, 1, 1, 62, 62, seed=1111)
    out.append(p.to_dict(1, 3, 300))

    p = Plan("v1-pub-12-smouldering-two-exits", 14, 24,
             "A fire that never spreads beside a crowd and two unequal exits: pure congestion and exit choice.")
    p.floor(1, 1, 12, 22).exit("main", 13, 6).exit("side", 0, 20)
    p.burn(7, 12)
    p.scatter(36, 2, 2, 11, 16, seed=1212)
    out.append(p.to_dict(0, 1, 90))
    return out


FAMILIES = [
    ("single-exit", "Scenarios with exactly one exit.",
     ["v1-pub-01-single-exit-sparse", "v1-pub-03-bottleneck-door", "v1-pub-04-dead-end-corridor",
      "v1-pub-08-sealed-room", "v1-pub-10-route-invalidation"]),
    ("multi-exit", "Scenarios where the choice of exit matters.",
     ["v1-pub-02-fire-at-near-exit", "v1-pub-05-four-exits-crowd", "v1-pub-06-fast-deterministic-fire",
      "v1-pub-07-office-rooms", "v1-pub-09-threatened-nearest-exit", "v1-pub-11-large-campus", "v1-pub-12-smouldering-two-exits"]),
    ("congestion", "Crowds that queue at doors or exits.",
     ["v1-pub-03-bottleneck-door", "v1-pub-05-four-exits-crowd", "v1-pub-11-large-campus",
      "v1-pub-12-smouldering-two-exits"]),
    ("exit-threatened", "The fire threatens the exit or route that is nearest.",
     ["v1-pub-02-fire-at-near-exit", "v1-pub-04-dead-end-corridor", "v1-pub-09-threatened-nearest-exit",
      "v1-pub-10-route-invalidation"]),
    ("deterministic-fire", "Fire that spreads with probability 0 or 1.",
     ["v1-pub-02-fire-at-near-exit", "v1-pub-06-fast-deterministic-fire", "v1-pub-12-smouldering-two-exits"]),
    ("stochastic-fire", "Fire whose spread depends on the seed.",
     ["v1-pub-01-single-exit-sparse", "v1-pub-03-bottleneck-door", "v1-pub-04-dead-end-corridor",
      "v1-pub-05-four-exits-crowd", "v1-pub-07-office-rooms", "v1-pub-08-sealed-room",
      "v1-pub-09-threatened-nearest-exit", "v1-pub-10-route-invalidation", "v1-pub-11-large-campus"]),
    ("trapped", "Some people can never reach an exit.", ["v1-pub-08-sealed-room"]),
    ("large", "Maps of at least 64x64 cells and 300 people.", ["v1-pub-11-large-campus"]),
]


def _readable(obj: dict) -> bytes:
    """Indented JSON for people to read; hashes are taken over the canonical form."""
    text = json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=True)
    assert canonical_bytes(json.loads(text)) == canonical_bytes(obj)
    return text.encode("ascii") + b"\n"


def main(out: Path) -> None:
    (out / "scenarios").mkdir(parents=True, exist_ok=True)
    entries = []
    for data in scenarios():
        scenario = scenario_from_dict(data, where=data["id"])
        rel = f"scenarios/{scenario.id}.json"
        atomic_write_bytes(out / rel, _readable(scenario.to_dict()))
        entries.append({"id": scenario.id, "file": rel, "scenario_hash": scenario.content_hash})
    manifest = {
        "suite_format": SUITE_FORMAT_VERSION,
        "suite_id": "emberbench-v1-public",
        "suite_version": SUITE_VERSION,
        "description": "The public EMBERBench v1 development suite.",
        "scenarios": entries,
        "families": [{"id": f, "description": d, "scenarios": s} for f, d, s in FAMILIES],
    }
    atomic_write_bytes(out / "suite.json", _readable(manifest))
    print(f"wrote {len(entries)} scenarios; suite hash {digest(manifest)}")


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1] / "emberbench" / "suites" / "emberbench-v1-public"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
