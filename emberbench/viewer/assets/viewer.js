// EMBERBench episode viewer: draws the frames embedded in this page. No network, no framework.
// Positions are decoded from the move codes the Python side recorded while replaying the
// episode in the simulator; this script never simulates anything.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("emberbench-data").textContent);
  if (DATA.viewer_data_version !== "1.1") {
    throw new Error("unsupported viewer data version " + DATA.viewer_data_version);
  }
  var MOVED = "NESW", WALL_BLOCKED = "nesw", PEOPLE_BLOCKED = "1234";
  var DR = [-1, 0, 1, 0], DC = [0, 1, 0, -1];
  var SPEEDS = [1, 2, 5, 10, 20, 50];
  var STYLE = getComputedStyle(document.documentElement);
  function css(name) { return STYLE.getPropertyValue(name).trim(); }
  var COLOR = {
    inside: css("--inside"), evacuated: css("--evacuated"), casualty: css("--casualty"),
    stranded: css("--stranded"), fire: css("--fire"), newfire: css("--newfire"), wall: css("--wall"),
    floor: css("--floor"), exit: css("--exit"), wallblock: css("--wallblock"), peopleblock: css("--peopleblock")
  };
  var $ = function (id) { return document.getElementById(id); };
  var canvas = $("grid"), ctx = canvas.getContext("2d");
  var embeddedByIndex = {};
  DATA.episodes.forEach(function (ep, slot) { if (ep.index !== null) { embeddedByIndex[ep.index] = slot; } });

  var view = { slot: -1, ep: null, sc: null, t: 0, playing: false, timer: null, cell: 8, rows: null, cols: null,
               absent: null, stacks: [] };

  // -- decoding -----------------------------------------------------------------------------
  function decode(ep) {
    var sc = DATA.scenarios[ep.scenario], n = sc.people.length, T = ep.steps;
    var rows = new Int16Array((T + 1) * n), cols = new Int16Array((T + 1) * n);
    for (var i = 0; i < n; i++) { rows[i] = sc.people[i][1]; cols[i] = sc.people[i][2]; }
    for (var t = 1; t <= T; t++) {
      var base = (t - 1) * n, here = t * n, prev = (t - 1) * n;
      for (var j = 0; j < n; j++) {
        var d = MOVED.indexOf(ep.moves.charAt(base + j));
        rows[here + j] = rows[prev + j] + (d >= 0 ? DR[d] : 0);
        cols[here + j] = cols[prev + j] + (d >= 0 ? DC[d] : 0);
      }
    }
    return { rows: rows, cols: cols, n: n };
  }

  function stateOf(ep, i, t) {
    var kind = ep.fate_kind.charAt(i), step = ep.fate_step[i];
    if (kind === "s") { return t >= ep.steps ? "stranded" : "inside"; }
    if (step <= t) { return kind === "e" ? "evacuated" : "casualty"; }
    return "inside";
  }

  function countsAt(ep, t) {
    var out = { inside: 0, evacuated: 0, casualty: 0, stranded: 0, wall: 0, people: 0 };
    var n = view.sc.people.length;
    for (var i = 0; i < n; i++) { out[stateOf(ep, i, t)] += 1; }
    if (t >= 1) {
      for (var j = 0; j < n; j++) {
        var c = ep.moves.charAt((t - 1) * n + j);
        if (WALL_BLOCKED.indexOf(c) >= 0) { out.wall += 1; } else if (PEOPLE_BLOCKED.indexOf(c) >= 0) { out.people += 1; }
      }
    }
    return out;
  }

  // -- drawing ------------------------------------------------------------------------------
  function layout() {
    var sc = view.sc;
    var avail = Math.max(240, $("stage").clientWidth - 4);
    var tall = Math.max(240, window.innerHeight - 260);
    var cell = Math.floor(Math.min(avail / sc.width, tall / sc.height));
    view.cell = Math.max(3, Math.min(cell, 40));
    var ratio = window.devicePixelRatio || 1;
    canvas.style.width = (sc.width * view.cell) + "px";
    canvas.style.height = (sc.height * view.cell) + "px";
    canvas.width = Math.round(sc.width * view.cell * ratio);
    canvas.height = Math.round(sc.height * view.cell * ratio);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  }

  function draw() {
    var ep = view.ep, sc = view.sc, t = view.t, s = view.cell, n = sc.people.length;
    ctx.fillStyle = COLOR.floor;
    ctx.fillRect(0, 0, sc.width * s, sc.height * s);
    ctx.fillStyle = COLOR.wall;
    for (var r = 0; r < sc.height; r++) {
      var row = sc.map[r];
      for (var c = 0; c < sc.width; c++) { if (row.charAt(c) === "#") { ctx.fillRect(c * s, r * s, s, s); } }
    }
    for (var k = 0; k < ep.ignition.length; k++) {
      var ig = ep.ignition[k];
      if (ig >= 0 && ig <= t) {
        ctx.fillStyle = (ig === t && t > 0) ? COLOR.newfire : COLOR.fire;
        ctx.fillRect((k % sc.width) * s, Math.floor(k / sc.width) * s, s, s);
      }
    }
    ctx.lineWidth = Math.max(1, s / 6);
    ctx.strokeStyle = COLOR.exit;
    sc.exits.forEach(function (e) { ctx.strokeRect(e[2] * s + ctx.lineWidth / 2, e[1] * s + ctx.lineWidth / 2, s - ctx.lineWidth, s - ctx.lineWidth); });
    var rad = Math.max(1.2, s * 0.36), off = t * n, onCell = {};
    for (var i = 0; i < n; i++) {
      var st = stateOf(ep, i, t);
      if (st === "evacuated" && ep.fate_step[i] < t) { continue; }  // gone: shown on its exit step only
      var key = view.rows[off + i] * sc.width + view.cols[off + i];
      onCell[key] = (onCell[key] || 0) + 1;
      var x = view.cols[off + i] * s + s / 2, y = view.rows[off + i] * s + s / 2;
      if (st === "casualty") {
        ctx.strokeStyle = COLOR.casualty; ctx.lineWidth = Math.max(1, s / 5);
        ctx.beginPath(); ctx.moveTo(x - rad, y - rad); ctx.lineTo(x + rad, y + rad);
        ctx.moveTo(x + rad, y - rad); ctx.lineTo(x - rad, y + rad); ctx.stroke();
        continue;
      }
      ctx.fillStyle = COLOR[st];
      ctx.beginPath(); ctx.arc(x, y, rad, 0, 2 * Math.PI); ctx.fill();
      if (t >= 1) {
        var code = ep.moves.charAt((t - 1) * n + i);
        var d = WALL_BLOCKED.indexOf(code), kind = "wallblock";
        if (d < 0) { d = PEOPLE_BLOCKED.indexOf(code); kind = "peopleblock"; }
        if (d >= 0) {
          ctx.fillStyle = COLOR[kind];
          var w = Math.max(1.5, s / 5);
          var bx = x - s / 2 + (d === 1 ? s - w : 0), by = y - s / 2 + (d === 2 ? s - w : 0);
          if (d === 0 || d === 2) { ctx.fillRect(x - s / 2, by, s, w); } else { ctx.fillRect(bx, y - s / 2, w, s); }
        }
      }
    }
    drawStacks(onCell);
    updatePanel();
  }

  // Several people on one cell (casualties stay where they fell, so they pile up): the count is drawn
  // on the cell, listed in the panel and given on hover, so no one hides under another mark.
  function drawStacks(onCell) {
    var sc = view.sc, s = view.cell;
    view.stacks = [];
    Object.keys(onCell).forEach(function (k) {
      if (onCell[k] > 1) { view.stacks.push([Math.floor(k / sc.width), k % sc.width, onCell[k]]); }
    });
    view.stacks.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var size = Math.max(9, Math.round(s * 0.62));
    ctx.font = "bold " + size + "px system-ui, sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    ctx.lineWidth = 3; ctx.strokeStyle = "#ffffff"; ctx.fillStyle = "#111111";
    view.stacks.forEach(function (st) {
      var x = st[1] * s + s * 0.72, y = st[0] * s + s * 0.3;
      ctx.strokeText(String(st[2]), x, y);
      ctx.fillText(String(st[2]), x, y);
    });
  }

  function peopleOn(row, col) {
    for (var k = 0; k < view.stacks.length; k++) {
      if (view.stacks[k][0] === row && view.stacks[k][1] === col) { return view.stacks[k][2]; }
    }
    return 0;
  }

  function setRows(table, rows) {
    table.textContent = "";
    rows.forEach(function (r) {
      var tr = document.createElement("tr");
      r.forEach(function (v, col) {
        var td = document.createElement("td");
        td.textContent = v;
        if (col > 0 && typeof v === "number") { td.className = "num"; }
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
  }

  function updatePanel() {
    var ep = view.ep, t = view.t, c = countsAt(ep, t);
    $("step").textContent = String(t);
    $("step").setAttribute("data-step", String(t));
    $("slider").value = String(t);
    setRows($("counts"), [
      ["inside", c.inside], ["evacuated", c.evacuated], ["casualties", c.casualty],
      ["stranded", c.stranded], ["burning cells", ep.burning[t]],
      ["moves blocked by walls", c.wall], ["moves blocked by people", c.people],
      ["cells with several people", view.stacks.length]
    ]);
    $("stacks").textContent = view.stacks.length ? "Several people on one cell (count at (row, column)): " +
      view.stacks.map(function (st) {
        return st[2] + "\u00a0at\u00a0(" + st[0] + ",\u00a0" + st[1] + ")"; }).join(", ") : "";
  }

  function showEpisodeInfo() {
    var ep = view.ep, sc = view.sc;
    var rows = [["scenario", sc.id], ["seed", ep.seed]];
    if (ep.index !== null) { rows.unshift(["manifest index", ep.index]); }
    rows.push(["size", sc.height + " x " + sc.width], ["people", sc.people.length],
              ["steps", ep.steps + " of at most " + sc.max_steps], ["termination", ep.termination]);
    setRows($("episode"), rows);
    var dirs = {};
    DATA.metric_definitions.forEach(function (m) { dirs[m.name] = m; });
    var body = $("metrics").querySelector("tbody");
    body.textContent = "";
    ep.metrics.forEach(function (m) {
      var def = dirs[m[0]], tr = document.createElement("tr");
      var arrow = def.direction === "higher" ? "\u2191 better" : def.direction === "lower" ? "\u2193 better" : "";
      [m[0], m[1] === null ? "undefined" : formatNumber(m[1]), arrow].forEach(function (v, col) {
        var td = document.createElement("td");
        td.textContent = v;
        if (col === 0) { td.title = def.definition; }
        if (col === 1) {
          td.className = "num";
          if (m[2] !== null && String(m[1]) !== m[2]) { td.title = "exact: " + m[2]; td.classList.add("exact"); }
        }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function showSource() {
    var src = DATA.source;
    var parts = [src.kind === "result" ? "result " + src.name + " (model " + src.model_id + ", sha256 " + src.result_digest + ")"
                                       : "record " + src.name + " (sha256 " + src.record_digest + ")"];
    if (src.manifest_hash) { parts.push("manifest " + src.manifest_hash); }
    if (src.suite) { parts.push("suite " + src.suite); }
    parts.push("every frame comes from replaying the authenticated record in the EMBERBench simulator");
    $("source").textContent = parts.join(" \u00b7 ");
  }

  function formatNumber(v) {
    if (Number.isInteger(v)) { return String(v); }
    return String(Number(v.toPrecision(4)));  // 4 significant digits, no trailing zeros
  }

  // -- playback -----------------------------------------------------------------------------
  function go(t) {
    view.t = Math.max(0, Math.min(view.ep.steps, t));
    draw();
  }

  function tick() {
    if (!view.playing) { return; }
    if (view.t >= view.ep.steps) { setPlaying(false); return; }
    go(view.t + 1);
    view.timer = setTimeout(tick, 1000 / Number($("speed").value));
  }

  function setPlaying(on) {
    view.playing = on;
    $("play").textContent = on ? "Pause" : "Play";
    clearTimeout(view.timer);
    if (on) {
      if (view.t >= view.ep.steps) { go(0); }
      view.timer = setTimeout(tick, 1000 / Number($("speed").value));
    }
  }

  function changeSpeed(delta) {
    var sel = $("speed"), i = SPEEDS.indexOf(Number(sel.value)) + delta;
    sel.value = String(SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, i))]);
  }

  function setShown(on) {
    ["grid", "controls", "legend", "detail"].forEach(function (id) { $(id).hidden = !on; });
  }

  function load(slot) {
    setPlaying(false);
    view.absent = null;
    view.slot = slot;
    view.ep = DATA.episodes[slot];
    view.sc = DATA.scenarios[view.ep.scenario];
    var dec = decode(view.ep);
    view.rows = dec.rows; view.cols = dec.cols;
    $("slider").max = String(view.ep.steps);
    $("steps").textContent = String(view.ep.steps);
    $("notice").hidden = true;
    setShown(true);
    layout();
    showEpisodeInfo();
    go(0);
    markCurrent();
  }

  function listRow(index) {
    var L = DATA.list;
    if (!L) { return -1; }
    for (var i = 0; i < L.index.length; i++) { if (L.index[i] === index) { return i; } }
    return -1;
  }

  // An episode that is listed but not embedded: nothing of another episode stays on screen; the notice
  // says so and gives the command (and, when known, the link) for a page that shows it.
  function showAbsent(index) {
    setPlaying(false);
    view.absent = index;
    setShown(false);
    var box = $("notice"), L = DATA.list, row = listRow(index);
    box.textContent = "";
    box.className = "absent";
    if (row < 0) {
      box.textContent = "Episode " + index + " is not an episode of this result" +
        (L ? " (it has " + L.index.length + ", listed below)." : ".");
    } else {
      var sc = DATA.scenarios[L.scenario[row]];
      box.appendChild(document.createTextNode("Episode " + index + " (" + sc.id + ", seed " + L.seed[row] +
        ") is not embedded in this page, which embeds " + DATA.episodes.length + " of " + L.index.length +
        " episodes. Make a page for it by running this in the folder of " + DATA.source.name + ": "));
      var code = document.createElement("code");
      code.textContent = (DATA.regenerate || "emberbench view RESULT --episode {index}").replace("{index}", String(index));
      box.appendChild(code);
      box.appendChild(document.createTextNode(" (it writes a new page for that episode beside the result)."));
      if (DATA.regenerate_page) {
        var link = document.createElement("a");
        link.href = DATA.regenerate_page.replace("{index}", String(index));
        link.textContent = "open that page";
        box.appendChild(document.createTextNode(" Once made: "));
        box.appendChild(link);
        box.appendChild(document.createTextNode("."));
      }
    }
    box.hidden = false;
    setRows($("episode"), row < 0 ? [["manifest index", index], ["embedded", "no"]] : [
      ["manifest index", index], ["scenario", DATA.scenarios[L.scenario[row]].id], ["seed", L.seed[row]],
      ["evacuated", L.evacuated[row]], ["casualties", L.casualties[row]], ["stranded", L.stranded[row]],
      ["steps", L.steps[row]], ["embedded", "no"]]);
    markCurrent();
  }

  function selectIndex(index) {
    var embedded = Object.prototype.hasOwnProperty.call(embeddedByIndex, index);
    if (embedded) { load(embeddedByIndex[index]); } else { showAbsent(index); }
    if (history.replaceState) { history.replaceState(null, "", "#episode=" + index); }
    return embedded;
  }

  function stepEpisode(delta) {
    var next = view.slot + delta;
    if (view.absent !== null && delta < 0 && view.slot >= 0) { next = view.slot; }
    if (next >= 0 && next < DATA.episodes.length) {
      load(next);
      var idx = view.ep.index;
      if (idx !== null && history.replaceState) { history.replaceState(null, "", "#episode=" + idx); }
    }
  }

  // -- picker -------------------------------------------------------------------------------
  var PICKER_ROWS = 300;
  function buildPicker() {
    var L = DATA.list;
    if (!L) { return; }
    $("picker").hidden = false;
    var sel = $("filter-scenario");
    DATA.scenarios.forEach(function (sc, slot) {
      if (L.scenario.indexOf(slot) >= 0) {
        var o = document.createElement("option"); o.value = String(slot); o.textContent = sc.id; sel.appendChild(o);
      }
    });
    ["filter-scenario", "filter-order", "filter-embedded"].forEach(function (id) { $(id).addEventListener("change", renderPicker); });
    $("episodes").querySelector("tbody").addEventListener("click", function (ev) {
      var tr = ev.target.closest("tr");
      if (tr && tr.dataset.index !== undefined) { selectIndex(Number(tr.dataset.index)); }
    });
    renderPicker();
  }

  function renderPicker() {
    var L = DATA.list, want = $("filter-scenario").value, order = $("filter-order").value;
    var onlyEmbedded = $("filter-embedded").checked;
    var rows = [];
    for (var i = 0; i < L.index.length; i++) {
      if (want !== "" && L.scenario[i] !== Number(want)) { continue; }
      var embedded = Object.prototype.hasOwnProperty.call(embeddedByIndex, L.index[i]);
      if (onlyEmbedded && !embedded) { continue; }
      rows.push(i);
    }
    if (order !== "index") { rows.sort(function (a, b) { return (L[order][b] - L[order][a]) || (L.index[a] - L.index[b]); }); }
    var body = $("episodes").querySelector("tbody");
    body.textContent = "";
    rows.slice(0, PICKER_ROWS).forEach(function (i) {
      var tr = document.createElement("tr"), idx = L.index[i];
      var embedded = Object.prototype.hasOwnProperty.call(embeddedByIndex, idx);
      tr.dataset.index = String(idx);
      if (!embedded) { tr.className = "absent"; }
      [idx, DATA.scenarios[L.scenario[i]].id, L.seed[i], L.evacuated[i], L.casualties[i], L.stranded[i], L.steps[i],
       embedded ? "\u25cf" : ""].forEach(function (v) {
        var td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    $("picker-count").textContent = rows.length > PICKER_ROWS
      ? "showing " + PICKER_ROWS + " of " + rows.length + " matching episodes (narrow the filter to see others)"
      : rows.length + " matching episodes; " + DATA.episodes.length + " of " + L.index.length + " embedded";
    markCurrent();
  }

  function markCurrent() {
    var body = $("episodes").querySelector("tbody");
    var current = view.absent !== null ? view.absent : view.ep ? view.ep.index : null;
    if (!body || current === null) { return; }
    Array.prototype.forEach.call(body.children, function (tr) {
      tr.classList.toggle("current", Number(tr.dataset.index) === current);
    });
  }

  // -- wiring -------------------------------------------------------------------------------
  function shown() { return view.ep !== null && view.absent === null; }
  $("play").addEventListener("click", function () { if (shown()) { setPlaying(!view.playing); } });
  $("first").addEventListener("click", function () { setPlaying(false); if (shown()) { go(0); } });
  $("last").addEventListener("click", function () { setPlaying(false); if (shown()) { go(view.ep.steps); } });
  $("back").addEventListener("click", function () { setPlaying(false); if (shown()) { go(view.t - 1); } });
  $("forward").addEventListener("click", function () { setPlaying(false); if (shown()) { go(view.t + 1); } });
  $("slider").addEventListener("input", function () { setPlaying(false); if (shown()) { go(Number($("slider").value)); } });
  $("helpbutton").addEventListener("click", function () { $("help").hidden = !$("help").hidden; });
  window.addEventListener("resize", function () { if (shown()) { layout(); draw(); } });
  canvas.addEventListener("mousemove", function (ev) {
    if (!shown()) { return; }
    var box = canvas.getBoundingClientRect();
    var col = Math.floor((ev.clientX - box.left) / view.cell), row = Math.floor((ev.clientY - box.top) / view.cell);
    var count = peopleOn(row, col);
    canvas.title = count > 1 ? count + " people on cell (" + row + ", " + col + ")" : "";
  });
  document.addEventListener("keydown", function (ev) {
    var tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" && ev.target.type !== "range" || tag === "SELECT" || tag === "TEXTAREA") { return; }
    var handled = true, on = shown();
    switch (ev.key) {
      case " ": if (on) { setPlaying(!view.playing); } break;
      case "ArrowRight": setPlaying(false); if (on) { go(view.t + 1); } break;
      case "ArrowLeft": setPlaying(false); if (on) { go(view.t - 1); } break;
      case "Home": setPlaying(false); if (on) { go(0); } break;
      case "End": setPlaying(false); if (on) { go(view.ep.steps); } break;
      case "+": case "=": changeSpeed(1); break;
      case "-": changeSpeed(-1); break;
      case "n": stepEpisode(1); break;
      case "p": stepEpisode(-1); break;
      case "?": $("help").hidden = !$("help").hidden; break;
      default: handled = false;
    }
    if (handled) { ev.preventDefault(); }
  });

  function fromHash() {
    var m = DATA.list ? /episode=(\d+)/.exec(location.hash) : null;  // a record's page has one episode
    return m ? Number(m[1]) : null;
  }
  window.addEventListener("hashchange", function () {
    var wanted = fromHash();
    if (wanted !== null && wanted !== (view.absent !== null ? view.absent : view.ep && view.ep.index)) { selectIndex(wanted); }
  });

  buildPicker();
  showSource();
  var asked = fromHash();
  if (asked !== null && !Object.prototype.hasOwnProperty.call(embeddedByIndex, asked)) {
    showAbsent(asked);  // never draw another episode under the notice
  } else {
    load(asked !== null ? embeddedByIndex[asked] : DATA.start);
  }
  // For tests and the benchmark: time from navigation start to the first frame drawn.
  window.emberbenchViewer = {
    firstFrameMs: performance.now(),
    step: function () { return view.t; },
    episodeIndex: function () { return shown() ? view.ep.index : null; },
    absentIndex: function () { return view.absent; },
    stacks: function () { return shown() ? view.stacks.slice() : []; },
    cellSize: function () { return view.cell; },
    playing: function () { return view.playing; }
  };
})();
