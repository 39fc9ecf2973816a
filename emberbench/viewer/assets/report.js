// Orders every leaderboard by the metric the reader picks (best first by its direction). No network.
(function () {
  "use strict";
  var DIRECTION = {};
  document.querySelectorAll("table.leaderboard thead th[data-metric]").forEach(function (th) {
    DIRECTION[th.dataset.metric] = th.dataset.direction === "lower" ? 1 : -1;
  });
  var select = document.getElementById("order-by");
  document.querySelectorAll("table.leaderboard tbody").forEach(function (body) {
    Array.prototype.forEach.call(body.children, function (tr, i) { tr.dataset.given = String(i); });
  });
  function order() {
    var metric = select.value, attr = metric.replace(/_/g, "-");
    var th = metric && document.querySelector('table.leaderboard thead th[data-metric="' + metric + '"]');
    var all = document.getElementById("show-all"), radio = th && document.getElementById("show-" + th.dataset.kind);
    if (radio && all && !all.checked) { radio.checked = true; }  // show the column the rows are ordered by
    document.querySelectorAll("table.leaderboard tbody").forEach(function (body) {
      var rows = Array.prototype.slice.call(body.children);
      rows.sort(function (a, b) {
        if (!metric) { return Number(a.dataset.given) - Number(b.dataset.given); }
        var x = a.getAttribute("data-" + attr), y = b.getAttribute("data-" + attr);
        if (x === "" || y === "") { return (x === "") - (y === "") || Number(a.dataset.given) - Number(b.dataset.given); }
        return DIRECTION[metric] * (Number(x) - Number(y)) || Number(a.dataset.given) - Number(b.dataset.given);
      });
      rows.forEach(function (tr) { body.appendChild(tr); });
    });
  }
  if (select) { select.addEventListener("change", order); }
})();
