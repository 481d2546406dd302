// The HTML report's own script, run by the browser: reads the chart data (chart-specs.ts) from
// the page's JSON block and draws each chart with uPlot, with the timeline's events as labelled
// vertical markers, faults and the drain shaded on every chart. Text from the summary only ever goes in
// through textContent. The uPlot instances are left on window.evesimCharts (tests read them) and
// window.evesimChartsReady is set once all are drawn.

export const CHART_SCRIPT = String.raw`(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('evesim-chart-data').textContent);
  var charts = [];
  window.evesimCharts = charts;
  var EVENT_COLORS = { action: '#1565c0', 'fault-start': '#c62828', 'fault-end': '#c62828', abort: '#000000', drain: '#616161' };

  function clock(s) {
    var sign = s < 0 ? '-' : '';
    var t = Math.round(Math.abs(s));
    var m = Math.floor(t / 60);
    var r = t - m * 60;
    return sign + m + ':' + (r < 10 ? '0' : '') + r;
  }

  function markers() {
    var layer;
    function place(u) {
      var width = u.over.clientWidth;
      var items = layer.children;
      for (var i = 0; i < items.length; i++) {
        var el = items[i];
        var t = Number(el.dataset.t);
        var left = u.valToPos(t, 'x');
        if (el.dataset.until !== undefined) {
          var l = Math.max(0, left);
          var right = el.dataset.until === '' ? width : Math.min(width, u.valToPos(Number(el.dataset.until), 'x'));
          el.style.left = l + 'px';
          el.style.width = Math.max(0, right - l) + 'px';
          el.style.display = left > width || right < 0 ? 'none' : '';
        } else {
          el.style.left = left + 'px';
          el.style.display = left < 0 || left > width ? 'none' : '';
        }
      }
    }
    return {
      hooks: {
        init: function (u) {
          layer = document.createElement('div');
          layer.className = 'marker-layer';
          if (data.drainStartS !== null) {
            var band = document.createElement('div');
            band.className = 'drain-band';
            band.dataset.t = String(data.drainStartS);
            band.dataset.until = '';
            var tag = document.createElement('span');
            tag.textContent = 'drain';
            band.appendChild(tag);
            layer.appendChild(band);
          }
          // A fault's time is shaded from its start to its end (the next fault-end of the same label, else the end of the run).
          data.events.forEach(function (e, n) {
            if (e.kind !== 'fault-start') return;
            var end = null;
            for (var k = n + 1; k < data.events.length; k++) {
              if (data.events[k].kind === 'fault-end' && data.events[k].label === e.label) { end = data.events[k]; break; }
            }
            var f = document.createElement('div');
            f.className = 'fault-band';
            f.dataset.t = String(e.tMs / 1000);
            f.dataset.until = end ? String(end.tMs / 1000) : '';
            layer.appendChild(f);
          });
          data.events.forEach(function (e, n) {
            if (e.kind === 'drain' && data.drainStartS !== null) return;
            var m = document.createElement('div');
            m.className = 'ev-marker ev-' + e.kind;
            m.dataset.t = String(e.tMs / 1000);
            m.dataset.event = String(n);
            m.style.borderColor = EVENT_COLORS[e.kind] || '#000000';
            var label = document.createElement('span');
            label.className = 'ev-label';
            label.style.top = (n % 4) * 14 + 'px';
            label.style.color = EVENT_COLORS[e.kind] || '#000000';
            label.textContent = (e.kind === 'fault-end' ? 'end: ' : '') + e.label;
            m.title = clock(e.tMs / 1000) + ' ' + e.kind + ': ' + e.label;
            m.appendChild(label);
            layer.appendChild(m);
          });
          u.over.appendChild(layer);
        },
        draw: place,
      },
    };
  }

  // A value with no neighbour (a request every other interval) makes no line segment and would be
  // drawn as nothing: those values get their point.
  function isolatedPoints(u, si) {
    var d = u.data[si];
    var idxs = [];
    for (var i = 0; i < d.length; i++) {
      if (d[i] != null && (i === 0 || d[i - 1] == null) && (i === d.length - 1 || d[i + 1] == null)) idxs.push(i);
    }
    return idxs.length ? idxs : null;
  }

  function draw(spec, el) {
    var raws = [];
    var series = [{ label: 'time', value: function (u, v) { return v == null ? '--' : clock(v); } }];
    spec.series.forEach(function (s, i) {
      raws.push(s.raw || null);
      series.push({
        label: s.label,
        stroke: s.color,
        width: 1.5,
        fill: s.fill,
        dash: s.dash,
        // Lines only; a value with no neighbour still gets its point (isolatedPoints).
        points: { show: false, size: 5, filter: isolatedPoints },
        value: function (u, v, si, idx) {
          var raw = raws[si - 1];
          var shown = raw && idx != null ? raw[idx] : v;
          return shown == null ? '--' : String(Math.round(shown * 100) / 100) + ' ' + spec.unit;
        },
      });
    });
    var opts = {
      width: Math.max(240, el.clientWidth),
      height: spec.small ? 170 : 240,
      plugins: [markers()],
      scales: { x: { time: false, range: [data.x.length ? data.x[0] : 0, data.endS] }, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.08 : 1]; } } },
      axes: [
        { values: function (u, splits) { return splits.map(clock); } },
        { size: 56, label: spec.unit, labelSize: 16 },
      ],
      series: series,
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
    };
    var columns = [data.x].concat(spec.series.map(function (s) { return s.values; }));
    var plot = new uPlot(opts, columns, el);
    charts.push({ id: spec.id, plot: plot });
  }

  data.sections.forEach(function (section) {
    section.charts.forEach(function (spec) {
      var el = document.querySelector('[data-chart="' + spec.id + '"]');
      if (!el) throw new Error('no element for chart ' + spec.id);
      draw(spec, el);
    });
  });

  var resizing;
  window.addEventListener('resize', function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () {
      charts.forEach(function (c) {
        var el = c.plot.root.parentNode;
        c.plot.setSize({ width: Math.max(240, el.clientWidth), height: c.plot.height });
      });
    }, 100);
  });
  window.evesimChartsReady = true;
})();
`;
