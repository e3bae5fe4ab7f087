(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  function byId(id) { return document.getElementById(id); }
  function size(node) { return Math.max(320, Math.min(1000, node.clientWidth || 900)); }
  function plot(id, opts, cols) {
    var node = byId(id);
    if (!node || !cols[0].length) { return; }
    opts.width = size(node);
    opts.height = 280;
    opts.scales = opts.scales || {};
    opts.scales.x = opts.scales.x || {};
    opts.scales.x.time = false;
    new uPlot(opts, cols, node);
  }
  var bars = uPlot.paths.bars({ size: [0.9, 40] });
  function pct(u, v) { return v == null ? "" : (v * 100).toFixed(1) + "%"; }
  plot("chart-passk", {
    axes: [{ label: "k", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] }, { label: "pass@k", values: function (u, vs) { return vs.map(function (v) { return (v * 100).toFixed(0) + "%"; }); } }],
    scales: { y: { range: [0, 1] } },
    series: [{ label: "k" }, { label: "pass@k", stroke: "#2563eb", width: 2, value: pct, points: { show: true } }]
  }, [data.passk_k, data.passk]);
  var ids = data.problem_ids;
  plot("chart-problems", {
    axes: [{ label: "problems, best to worst" }, { label: "pass rate" }],
    scales: { y: { range: [0, 1] } },
    series: [{ label: "problem", value: function (u, v) { return v == null ? "" : ids[v]; } },
             { label: "pass rate", fill: "#93c5fd", stroke: "#2563eb", paths: bars, points: { show: false }, value: pct }]
  }, [ids.map(function (_, i) { return i; }), data.problem_rates]);
  plot("chart-wall", {
    axes: [{ label: "sandbox wall time (ms)" + (data.wall_log ? ", log scale" : "") }, { label: "candidates" }],
    scales: { x: data.wall_log ? { distr: 3, log: 10 } : {} },
    series: [{ label: "ms" }, { label: "candidates", fill: "#fcd34d", stroke: "#b45309", paths: bars, points: { show: false } }]
  }, [data.wall_bins, data.wall_counts]);
  plot("chart-gen", {
    axes: [{ label: "percentile" }, { label: "generation latency (ms)" }],
    series: [{ label: "percentile" }, { label: "latency ms", stroke: "#7c3aed", width: 2 }]
  }, [data.gen_curve_q, data.gen_curve_ms]);
  var tl = data.timeline;
  if (tl) {
    plot("chart-timeline", {
      axes: [{ label: "seconds since the first request" }, { label: "per " + tl.step_s.toFixed(2) + " s" }],
      series: [{ label: "t (s)" },
               { label: "requests", stroke: "#2563eb" },
               { label: "429s", stroke: "#dc2626" },
               { label: "retries", stroke: "#d97706" },
               { label: "in flight", stroke: "#059669", width: 2 }]
    }, [tl.t, tl.requests, tl.rate_limited, tl.retries, tl.in_flight]);
  }
  function key(cell) {
    var v = cell.getAttribute("data-v");
    if (v === null) { v = cell.textContent; }
    var n = Number(v);
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
        heads.forEach(function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var r = x < y ? -1 : x > y ? 1 : 0;
          return dir === "asc" ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.body.setAttribute("data-ready", "1");
})();
