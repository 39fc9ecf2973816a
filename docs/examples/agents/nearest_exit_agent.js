#!/usr/bin/env node
// An EMBERBench external agent in JavaScript (Node.js, no packages).
//
// Protocol: one observation (canonical JSON) per line on stdin; answer each
// with one JSON object on one line on stdout, mapping every person id inside
// to a move: "N", "E", "S", "W" or "stay". The process lives for one episode.
//
// Strategy: breadth-first search from the exits that are not burning, through
// cells that are neither walls nor burning; each person steps to the
// neighbour closest to an exit (ties: N, E, S, W), or stays if none is closer.
//
// Run it:  emberbench run --policy "cmd:node docs/examples/agents/nearest_exit_agent.js" ...
"use strict";

const readline = require("readline");

const MOVES = [["N", -1, 0], ["E", 0, 1], ["S", 1, 0], ["W", 0, -1]];

function distances(obs) {
  const { height, width, grid } = obs;
  const dist = new Array(height * width).fill(-1);
  const queue = [];
  for (const exit of obs.exits) {
    if (grid[exit.row][exit.col] !== "*") {
      dist[exit.row * width + exit.col] = 0;
      queue.push([exit.row, exit.col]);
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const [r, c] = queue[head];
    for (const [, dr, dc] of MOVES) {
      const nr = r + dr, nc = c + dc;
      if (nr < 0 || nc < 0 || nr >= height || nc >= width) continue;
      const ch = grid[nr][nc];
      if (ch === "#" || ch === "*" || dist[nr * width + nc] >= 0) continue;
      dist[nr * width + nc] = dist[r * width + c] + 1;
      queue.push([nr, nc]);
    }
  }
  return dist;
}

function decide(obs) {
  const dist = distances(obs);
  const action = {};
  for (const person of obs.people) {
    const here = dist[person.row * obs.width + person.col];
    let best = "stay";
    let bestDist = here < 0 ? Infinity : here;
    for (const [name, dr, dc] of MOVES) {
      const nr = person.row + dr, nc = person.col + dc;
      if (nr < 0 || nc < 0 || nr >= obs.height || nc >= obs.width) continue;
      const d = dist[nr * obs.width + nc];
      if (d >= 0 && d < bestDist) {
        best = name;
        bestDist = d;
      }
    }
    action[person.id] = best;
  }
  return action;
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const obs = JSON.parse(line);
  process.stdout.write(JSON.stringify(decide(obs)) + "\n");
});
