/* fleet.js - the fleet page: the rank x scope heat map (time, or each
   rank's time over the scope's mean across ranks), and the tables of the
   summary (stragglers, imbalance, top kernels, communication), all from
   the JSON element #fleet-data that kscope.fleet.page writes. */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('fleet-data').textContent);
  const S = data.summary;
  const state = { ready: false, mode: 'ratio', cells: null };

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function ns(v) {
    if (v === null || v === undefined) return '-';
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (v / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (v / 1e3).toFixed(3) + ' us';
    return v.toFixed(0) + ' ns';
  }
  const fixed = (d) => (v) => (v === null || v === undefined ? '-' : Number(v).toFixed(d));
  const pct = (v) => (v === null || v === undefined ? '-' : (100 * v).toFixed(1) + '%');
  const plain = (v) => (v === null || v === undefined ? '-' : String(v));

  /* ---------------------------------------------------------- header */
  function facts() {
    const list = document.getElementById('fact-list');
    const r = S.ranks;
    const items = [['dataset', S.dataset], ['run', S.run],
      ['ranks', r.count + (r.count ? ' (' + r.min + '-' + r.max + ')' : '')],
      ['scopes compared by', S.metric], ['engine', S.engine]];
    for (const [k, v] of items) {
      const d = el('div', null, 'fact');
      d.appendChild(el('b', k));
      d.appendChild(el('span', v));
      list.appendChild(d);
    }
    const notes = document.getElementById('notes');
    if (r.missing.length) notes.appendChild(el('li', 'ranks missing: ' + r.missing.join(', ')));
    if (!data.heatmap.scopes.length) notes.appendChild(el('li', 'no scope holds enough time on two ranks or more to compare'));
    if (data.heatmap_binned) notes.appendChild(el('li', 'more ranks than the heat map has columns: ' +
      'each column is a bin of ranks and shows its slowest'));
  }

  /* ------------------------------------------------------------ tabs */
  function tabs() {
    const nav = document.getElementById('tabs');
    const views = Array.from(document.querySelectorAll('.view'));
    views.forEach((v, i) => {
      const b = el('button', v.dataset.title);
      b.type = 'button';
      b.id = 'tab-' + v.id.slice(5);
      b.addEventListener('click', () => show(v.id));
      nav.appendChild(b);
      if (i === 0) b.classList.add('on');
    });
    views[0].classList.add('on');
  }
  function show(id) {
    for (const v of document.querySelectorAll('.view')) v.classList.toggle('on', v.id === id);
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', 'view-' + b.id.slice(4) === id);
    if (id === 'view-heat') drawHeat();
  }

  /* ---------------------------------------------------------- tables */
  function fillTable(t, cols, rows) {
    const head = t.createTHead(), body = t.createTBody();
    let sortKey = null, asc = false;
    const tr = document.createElement('tr');
    cols.forEach((c) => {
      const th = el('th', c.title, c.name ? 'name' : '');
      th.addEventListener('click', () => {
        asc = sortKey === c.key ? !asc : false;
        sortKey = c.key;
        for (const h of tr.children) h.classList.remove('sorted', 'asc');
        th.classList.add('sorted');
        if (asc) th.classList.add('asc');
        render();
      });
      tr.appendChild(th);
    });
    head.appendChild(tr);
    function render() {
      const sorted = rows.slice();
      if (sortKey) {
        sorted.sort((a, b) => {
          const x = a[sortKey], y = b[sortKey];
          const r = x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
          return asc ? r : -r;
        });
      }
      body.textContent = '';
      for (const r of sorted) {
        const row = document.createElement('tr');
        for (const c of cols) row.appendChild(el('td', (c.fmt || plain)(r[c.key]), c.name ? 'name' : ''));
        body.appendChild(row);
      }
      if (!sorted.length) {
        const row = document.createElement('tr');
        const td = el('td', 'none', 'name');
        td.colSpan = cols.length;
        row.appendChild(td);
        body.appendChild(row);
      }
    }
    render();
  }
  /* The summary's tables, a view each after the heat map's, in tab order:
     [name (view-NAME holds NAME-table), tab title, columns, rows]. */
  function tables() {
    const views = [
      ['stragglers', 'stragglers', [
        { key: 'rank', title: 'rank' }, { key: 'ratio', title: 'ratio', fmt: fixed(2) },
        { key: 'time_ns', title: 'time', fmt: ns }, { key: 'median_ns', title: 'median', fmt: ns },
        { key: 'scopes', title: 'scopes' }, { key: 'scope', title: 'worst scope', name: true }], S.stragglers],
      ['imbalance', 'imbalance', [
        { key: 'max_over_mean', title: 'max/mean', fmt: fixed(2) }, { key: 'max_rank', title: 'slowest rank' },
        { key: 'min_rank', title: 'fastest rank' }, { key: 'mean_ns', title: 'mean', fmt: ns },
        { key: 'max_ns', title: 'max', fmt: ns }, { key: 'min_ns', title: 'min', fmt: ns },
        { key: 'ranks', title: 'ranks' }, { key: 'scope', title: 'scope', name: true }], S.imbalance],
      ['kernels', 'top kernels', [
        { key: 'time_ns', title: 'time', fmt: ns }, { key: 'count', title: 'launches', fmt: fixed(0) },
        { key: 'ranks', title: 'ranks' }, { key: 'mean_ns', title: 'mean/rank', fmt: ns },
        { key: 'min_ns', title: 'min', fmt: ns }, { key: 'max_ns', title: 'max', fmt: ns },
        { key: 'spread', title: 'max/mean', fmt: fixed(2) }, { key: 'max_rank', title: 'slowest rank' },
        { key: 'kernel', title: 'kernel', name: true }], S.top_kernels],
      ['comm', 'communication', [
        { key: 'rank', title: 'rank' }, { key: 'comm_ns', title: 'communication', fmt: ns },
        { key: 'compute_ns', title: 'computation', fmt: ns }, { key: 'comm_share', title: 'share', fmt: pct },
        { key: 'overlap_ns', title: 'overlapped', fmt: ns }], S.comm_compute],
    ];
    const main = document.querySelector('main');
    for (const [name, title, cols, rows] of views) {
      const view = main.appendChild(el('section', null, 'view'));
      view.id = 'view-' + name;
      view.dataset.title = title;
      const t = view.appendChild(el('table'));
      t.id = name + '-table';
      fillTable(t, cols, rows);
    }
  }

  /* -------------------------------------------------------- heat map */
  const LEFT = 260, TOP = 18, ROW = 16;
  function heatCells() {
    const h = data.heatmap;
    let bins = 0, maxTime = 0;
    for (const row of h.cells) for (const [bin, , t] of row) { bins = Math.max(bins, bin + 1); maxTime = Math.max(maxTime, t); }
    const grid = h.scopes.map((s, i) => {
      const line = new Array(bins).fill(null);
      for (const [bin, rank, t] of h.cells[i]) line[bin] = { scope: s.name, rank: rank, time_ns: t, mean_ns: s.mean_ns };
      return line;
    });
    return { scopes: h.scopes.map((s) => ({ name: s.name, mean: s.mean_ns })), bins, grid, maxTime };
  }
  function colour(c, cells) {
    if (state.mode === 'time') {
      const t = cells.maxTime > 0 ? c.time_ns / cells.maxTime : 0;
      const r = 255, g = Math.round(245 - 190 * t), b = Math.round(235 - 215 * t);
      return 'rgb(' + r + ',' + g + ',' + b + ')';
    }
    const x = c.mean_ns > 0 ? Math.log2(c.time_ns / c.mean_ns) : 0; /* -1..1: half to double */
    const s = Math.max(-1, Math.min(1, x));
    if (s >= 0) return 'rgb(255,' + Math.round(255 - 170 * s) + ',' + Math.round(255 - 200 * s) + ')';
    return 'rgb(' + Math.round(255 + 175 * s) + ',' + Math.round(255 + 110 * s) + ',255)';
  }
  function drawHeat() {
    const canvas = document.getElementById('heat-canvas');
    const cells = state.cells || (state.cells = heatCells());
    const width = Math.max(600, canvas.parentElement.clientWidth || 1000);
    const cw = Math.max(1, (width - LEFT - 10) / Math.max(1, cells.bins));
    const height = TOP + ROW * cells.scopes.length + 4;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.height = height + 'px';
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    g.font = '11px ui-monospace, monospace';
    g.fillStyle = '#1d2330';
    const r = S.ranks;
    g.fillText('rank ' + r.min + ' \u2192', LEFT, 12);
    const last = String(r.max);
    g.fillText(last, LEFT + cw * cells.bins - g.measureText(last).width, 12);
    cells.scopes.forEach((s, y) => {
      let label = s.name;
      while (label.length > 1 && g.measureText(label).width > LEFT - 10) label = '\u2026' + label.slice(2);
      g.fillStyle = '#1d2330';
      g.fillText(label, 4, TOP + ROW * y + 12);
      for (let x = 0; x < cells.bins; x++) {
        const c = cells.grid[y][x];
        g.fillStyle = c ? colour(c, cells) : '#eceef3';
        g.fillRect(LEFT + x * cw, TOP + ROW * y, Math.max(1, cw - (cw > 3 ? 1 : 0)), ROW - 1);
      }
    });
    state.geometry = { cw, width, height };
    document.getElementById('heat-legend').textContent = state.mode === 'time'
      ? 'white: no time, dark red: the longest (' + ns(cells.maxTime) + ')'
      : 'blue: faster than the scope\u2019s mean, white: at it, red: slower (full colour at half or double)';
  }
  function cellAt(px, py) {
    const cells = state.cells, geo = state.geometry;
    if (!cells || !geo) return null;
    const x = Math.floor((px - LEFT) / geo.cw), y = Math.floor((py - TOP) / ROW);
    if (px < LEFT || x < 0 || x >= cells.bins || y < 0 || y >= cells.scopes.length) return null;
    return cells.grid[y][x];
  }
  function heat() {
    const canvas = document.getElementById('heat-canvas');
    const tip = document.getElementById('tip');
    document.getElementById('heat-mode').addEventListener('change', (e) => { state.mode = e.target.value; drawHeat(); });
    canvas.addEventListener('mousemove', (e) => {
      const r = canvas.getBoundingClientRect();
      const c = cellAt(e.clientX - r.left, e.clientY - r.top);
      if (!c) { tip.hidden = true; return; }
      tip.textContent = c.scope + '\nrank ' + c.rank + ': ' + ns(c.time_ns) + ' (' +
        (c.mean_ns > 0 ? (c.time_ns / c.mean_ns).toFixed(2) : '-') + 'x the mean, ' + ns(c.mean_ns) + ')';
      tip.style.left = (e.clientX + 12) + 'px';
      tip.style.top = (e.clientY + 12) + 'px';
      tip.hidden = false;
    });
    canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
    window.addEventListener('resize', () => { if (document.getElementById('view-heat').classList.contains('on')) drawHeat(); });
  }

  facts();
  tables(); /* before tabs(): a tab for each view */
  tabs();
  heat();
  drawHeat();
  state.ready = true;
  window.kscopeFleet = { state: state, data: data, cellAt: cellAt, show: show };
})();
