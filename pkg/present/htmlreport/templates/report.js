// Draws the report's charts with uPlot from the JSON in #fleetbench-data. Each chart goes into
// the element whose data-chart attribute is its name; the instances stay in
// window.fleetbenchCharts by name, and window.fleetbenchReady says they are drawn.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#843c39"];
  var charts = {};
  window.fleetbenchCharts = charts;
  window.fleetbenchErrors = [];

  function fmt(v) {
    if (v == null || isNaN(v)) return "–";
    var a = Math.abs(v);
    if (a >= 1e6) return +(v / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return +(v / 1e3).toFixed(1) + "k";
    if (a >= 100 || Number.isInteger(v)) return v.toFixed(0);
    if (a >= 10) return +v.toFixed(1) + "";
    return +v.toFixed(3) + "";
  }
  // tick labels: nothing for the ticks uPlot leaves unlabelled (log axes' minor ticks); on a
  // linear axis, the decimals the ticks' spacing needs, so no two ticks read the same.
  function ticks(u, splits, axisIdx) {
    var log = u.scales[u.axes[axisIdx].scale].distr === 3, gap = Infinity, d = -1;
    for (var i = 1; i < splits.length; i++) {
      if (splits[i] != null && splits[i - 1] != null) gap = Math.min(gap, Math.abs(splits[i] - splits[i - 1]));
    }
    if (!log && gap > 0 && gap < 1) d = Math.min(12, Math.ceil(-Math.log10(gap) - 1e-9));
    return splits.map(function (v) { return v == null ? "" : d > 0 && Math.abs(v) < 1e4 ? v.toFixed(d) : fmt(v); });
  }
  // valueAxis draws a value axis as the report chose it (axes.go): its range from zero, its
  // ticks and their labels.
  function valueAxis(a) {
    return {
      range: function () { return [a.min, a.max]; },
      splits: function () { return a.ticks; },
      values: function (u, splits) { return splits.map(function (v) { var i = a.ticks.indexOf(v); return i < 0 ? "" : a.labels[i]; }); }
    };
  }
  // idleLegend shows the legend's values only while the cursor is on a point: uPlot writes
  // "--" in every slot otherwise, so the legend then names the series and nothing else.
  function idleLegend(u) {
    var legend = u.root.querySelector(".u-legend");
    if (legend) legend.classList.toggle("u-live", u.cursor.idx != null);
  }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  // timeTicks labels a time axis in UTC, 24-hour, with the date under the first tick and
  // wherever the day changes.
  function timeTicks(u, splits, axisIdx, space, incr) {
    var lastDay = "";
    return splits.map(function (v) {
      if (v == null) return "";
      var d = new Date(v * 1e3);
      var day = d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate());
      var t = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
      if (incr < 60) t += ":" + pad(d.getUTCSeconds());
      if (day !== lastDay) { lastDay = day; return t + "\n" + day; }
      return t;
    });
  }
  function utc(ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); }
  function color(i) { return palette[i % palette.length]; }

  // marksPlugin draws labelled vertical lines (load start and end, breaking points).
  function drawMarks(marks) {
    return function (u) {
      if (!marks || !marks.length) return;
      var ctx = u.ctx, dpr = uPlot.pxRatio, b = u.bbox;
      ctx.save();
      ctx.font = (11 * dpr) + "px sans-serif";
      // uPlot leaves the alignment of the last axis it drew (right-aligned for a left axis)
      ctx.textAlign = "left";
      ctx.textBaseline = "alphabetic";
      marks.forEach(function (m, i) {
        var x = Math.round(u.valToPos(m.x, "x", true));
        if (x < b.left - 1 || x > b.left + b.width + 1) return;
        ctx.strokeStyle = m.alert ? "#c62828" : "#444";
        ctx.fillStyle = ctx.strokeStyle;
        ctx.lineWidth = 1.5 * dpr;
        ctx.setLineDash([6 * dpr, 4 * dpr]);
        ctx.beginPath(); ctx.moveTo(x, b.top); ctx.lineTo(x, b.top + b.height); ctx.stroke();
        ctx.setLineDash([]);
        var w = ctx.measureText(m.label).width, tx = x + 4 * dpr;
        if (tx + w > b.left + b.width) tx = x - 4 * dpr - w;
        ctx.fillText(m.label, tx, b.top + (13 + 13 * i) * dpr);
      });
      ctx.restore();
    };
  }

  // drawSpans shades each span (a lost runner's gap) over the plot's height, with its label
  // near the bottom so it clears the marks' labels at the top.
  function drawSpans(spans) {
    return function (u) {
      if (!spans || !spans.length) return;
      var ctx = u.ctx, dpr = uPlot.pxRatio, b = u.bbox, right = b.left + b.width;
      ctx.save();
      ctx.font = (11 * dpr) + "px sans-serif";
      // uPlot leaves the alignment of the last axis it drew (right-aligned for a left axis)
      ctx.textAlign = "left";
      ctx.textBaseline = "alphabetic";
      spans.forEach(function (s, i) {
        var x0 = Math.max(u.valToPos(s.from, "x", true), b.left), x1 = Math.min(u.valToPos(s.to, "x", true), right);
        if (x1 < b.left || x0 > right) return;
        if (x1 - x0 < 3 * dpr) { var m = (x0 + x1) / 2; x0 = m - 1.5 * dpr; x1 = m + 1.5 * dpr; }
        ctx.fillStyle = "rgba(198, 40, 40, 0.16)";
        ctx.fillRect(x0, b.top, x1 - x0, b.height);
        ctx.fillStyle = "#c62828";
        var w = ctx.measureText(s.label).width, tx = x0 + 4 * dpr;
        if (tx + w > right) tx = Math.max(b.left, x1 - 4 * dpr - w);
        ctx.fillText(s.label, tx, b.top + b.height - (6 + 13 * i) * dpr);
      });
      ctx.restore();
    };
  }

  // drawBands shades each band (a series' repetitions' min–max at each x) in its series' colour.
  function drawBands(c) {
    return function (u) {
      if (!c.bands || !c.bands.length) return;
      var ctx = u.ctx;
      ctx.save();
      c.bands.forEach(function (b) {
        var s = c.series[b.series];
        if (!s) return;
        var scale = s.right ? "y2" : "y", top = [], bottom = [];
        c.x.forEach(function (x, i) {
          if (b.low[i] == null || b.high[i] == null) return;
          var px = u.valToPos(x, "x", true);
          top.push([px, u.valToPos(b.high[i], scale, true)]);
          bottom.push([px, u.valToPos(b.low[i], scale, true)]);
        });
        if (top.length < 2) return;
        ctx.fillStyle = color(s.color) + "26";
        ctx.beginPath();
        ctx.moveTo(top[0][0], top[0][1]);
        top.slice(1).forEach(function (p) { ctx.lineTo(p[0], p[1]); });
        bottom.reverse().forEach(function (p) { ctx.lineTo(p[0], p[1]); });
        ctx.closePath();
        ctx.fill();
      });
      ctx.restore();
    };
  }

  // drawPoints draws each point (a slow request: its start, its duration) as a dot on the left
  // axis' scale.
  function drawPoints(points) {
    return function (u) {
      if (!points || !points.length) return;
      var ctx = u.ctx, dpr = uPlot.pxRatio, b = u.bbox;
      ctx.save();
      ctx.fillStyle = "rgba(198, 40, 40, 0.55)";
      points.forEach(function (p) {
        var x = u.valToPos(p.x, "x", true), y = u.valToPos(p.y, "y", true);
        if (x < b.left || x > b.left + b.width || y < b.top || y > b.top + b.height) return;
        ctx.beginPath(); ctx.arc(x, y, 3 * dpr, 0, 2 * Math.PI); ctx.fill();
      });
      ctx.restore();
    };
  }

  function build(c, el) {
    var width = Math.max(el.clientWidth, 400);
    var time = c.kind === "time", bars = c.kind === "bars", cat = c.kind === "category";
    var right = c.series.some(function (s) { return s.right; });
    var xAxis = { label: c.xLabel, labelSize: 22, stroke: "#333", grid: { stroke: "#eceef2" } };
    var scales = { x: { time: time }, y: { auto: true }, y2: { auto: true } };
    var yAxis = c.yAxis ? valueAxis(c.yAxis) : null, y2Axis = c.y2Axis ? valueAxis(c.y2Axis) : null;
    if (yAxis) scales.y = { auto: true, range: yAxis.range };
    if (y2Axis) scales.y2 = { auto: true, range: y2Axis.range };
    if (c.points && c.points.length) {
      // the x range reaches the dots too: a request of the last window starts after its start
      var lo = Math.min.apply(null, c.points.map(function (p) { return p.x; })),
        hi = Math.max.apply(null, c.points.map(function (p) { return p.x; }));
      scales.x.range = function (u, min, max) { return [Math.min(min, lo), Math.max(max, hi)]; };
    }
    if (time) {
      xAxis.values = timeTicks;
      xAxis.size = 52;
      xAxis.space = 90;
    } else if (bars) {
      scales.x.distr = 3;
      xAxis.values = ticks;
    } else if (cat) {
      scales.x.range = function () { return [-0.5, c.x.length - 0.5]; };
      xAxis.splits = function () { return c.x; };
      xAxis.values = function (u, splits) { return splits.map(function (i) { return c.xNames[i] || ""; }); };
    } else {
      // few x values (sweep values, peak steps): a tick at each, as the seeds' charts have
      if (c.x.length <= 16) xAxis.splits = function () { return c.x; };
      if (c.logX) {
        scales.x.distr = 3;
        // a label at every swept value, not only the log axis' 1-2-5 ticks
        xAxis.filter = function (u, splits) { return splits; };
      }
      xAxis.values = ticks;
    }
    var axes = [xAxis, { scale: "y", label: c.yLabel, labelSize: 22, size: 60, stroke: "#333", grid: { stroke: "#eceef2" },
      values: ticks }];
    if (yAxis) { axes[1].splits = yAxis.splits; axes[1].values = yAxis.values; }
    if (right) {
      axes.push({ scale: "y2", side: 1, label: c.y2Label, labelSize: 22, size: 60, stroke: "#333", grid: { show: false },
        values: ticks });
      if (y2Axis) { axes[2].splits = y2Axis.splits; axes[2].values = y2Axis.values; }
    }
    var series = [{ label: time ? "time (UTC)" : c.xLabel,
      value: time ? "{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}" : function (u, v) { return cat ? (c.xNames[v] || "") : fmt(v); } }];
    var data = [c.x];
    c.series.forEach(function (s) {
      var col = color(s.color);
      var o = { label: s.label, scale: s.right ? "y2" : "y", stroke: col, width: 2, spanGaps: true,
        value: function (u, v) { return fmt(v); }, points: { show: !time || c.x.length < 60, size: 6, fill: col } };
      if (s.dash) o.dash = [8, 5];
      if (s.faint) { o.stroke = col + "99"; o.width = 1.5; o.points = { show: false }; }
      if (bars) { o.paths = uPlot.paths.bars({ size: [0.9, 80], align: -1 }); o.fill = col + "99"; o.points = { show: false }; }
      series.push(o);
      data.push(s.values);
    });
    var opts = {
      width: width, height: 300, series: series, axes: axes, scales: scales,
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [drawBands(c), drawSpans(c.spans), drawMarks(c.marks), drawPoints(c.points)], setLegend: [idleLegend] }
    };
    if (time) opts.tzDate = utc;
    var u = new uPlot(opts, data, el);
    idleLegend(u);
    charts[c.name] = u;
  }

  function init() {
    var data = JSON.parse(document.getElementById("fleetbench-data").textContent);
    data.charts.forEach(function (c) {
      var el = document.querySelector('[data-chart="' + c.name + '"]');
      if (!el) { window.fleetbenchErrors.push("no element for chart " + c.name); return; }
      try { build(c, el); } catch (e) { window.fleetbenchErrors.push(c.name + ": " + e); }
    });
    window.addEventListener("resize", function () {
      Object.keys(charts).forEach(function (name) {
        var el = document.querySelector('[data-chart="' + name + '"]');
        charts[name].setSize({ width: Math.max(el.clientWidth, 400), height: 300 });
      });
    });
    window.fleetbenchReady = true;
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
