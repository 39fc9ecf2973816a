"""A team's external agent (standard library only): each person steps towards the nearest exit that is not burning."""

import json
import sys

MOVES = (("N", -1, 0), ("E", 0, 1), ("S", 1, 0), ("W", 0, -1))


def decide(obs):
    height, width, grid = obs["height"], obs["width"], obs["grid"]
    queue = [(e["row"], e["col"]) for e in obs["exits"] if grid[e["row"]][e["col"]] != "*"]
    dist = dict.fromkeys(queue, 0)
    for row, col in queue:
        for _, dr, dc in MOVES:
            cell = (row + dr, col + dc)
            if 0 <= cell[0] < height and 0 <= cell[1] < width and grid[cell[0]][cell[1]] not in "#*" \
                    and cell not in dist:
                dist[cell] = dist[(row, col)] + 1
                queue.append(cell)
    action = {}
    for person in obs["people"]:
        best, here = "stay", dist.get((person["row"], person["col"]), 10**9)
        for name, dr, dc in MOVES:
            d = dist.get((person["row"] + dr, person["col"] + dc))
            if d is not None and d < here:
                best, here = name, d
        action[person["id"]] = best
    return action


for line in sys.stdin:
    print(json.dumps(decide(json.loads(line))), flush=True)
