// report.js - the HTML report's views, drawn from the JSON data elements
// the writer embedded: a flame graph (icicle) of the calling-context tree,
// a timeline for traces, the top kernels, the hottest source lines of a
// profile with PC samples (lines.js) and, with two profiles, a diff.
// Names are data: they reach the page only through textContent and canvas
// text, never as markup. window.kscopeReport exposes the state for tests.
// Every number comes decided in the data (what rolls up, what a total
// is, the top kernels: read/rollup.c and read/top.c, as `kscope view`,
// `top` and `diff` print them); the page only shows them.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const ROW = 18;
  const report = { state: { view: null, zoom: 0, metric: null, search: '', matches: 0,
    share: 0, t0: 0, t1: 1, errors: [] } };
  window.kscopeReport = report;

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function load(id) {
    const s = $(id);
    return s ? JSON.parse(s.textContent) : null;
  }

  // ------------------------------------------------------------ formats
  // As C's "%.3e": at least two exponent digits.
  function expo(v) {
    return v.toExponential(3).replace(/e([+-])(\d)$/, 'e$10$2');
  }
  // As kscope__format_ns (read/text.c), so the page and `kscope top` agree.
  function fmtNs(ns) {
    const a = Math.abs(ns);
    if (isNaN(ns)) return '-';
    if (!isFinite(ns)) return ns > 0 ? 'inf' : '-inf';
    if (a >= 1e15) return expo(ns / 1e9) + ' s';
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return ns.toFixed(0) + ' ns';
  }
  function fmtNum(v) {
    if (isNaN(v)) return '-';
    if (!isFinite(v)) return v > 0 ? 'inf' : '-inf';
    const a = Math.abs(v);
    if (a >= 1e15) return (v / 1e15).toFixed(2) + 'P';
    if (a >= 1e12) return (v / 1e12).toFixed(2) + 'T';
    if (a >= 1e9) return (v / 1e9).toFixed(2) + 'G';
    if (a >= 1e6) return (v / 1e6).toFixed(2) + 'M';
    if (a >= 1e4) return (v / 1e3).toFixed(1) + 'k';
    return Number.isInteger(v) ? String(v) : v.toPrecision(4);
  }
  function fmtMetric(name, v) {
    return /\((ns)\)$/.test(name) ? fmtNs(v) : fmtNum(v) + (/\/s$/.test(name) ? '' : '');
  }
  const num = (v) => (isNaN(v) ? null : isFinite(v) ? v : v > 0 ? 'inf' : '-inf');
  function hue(s) {
    let h = 0;
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return Math.abs(h);
  }

  // --------------------------------------------------------- tree model
  // A sparse array of the data: gaps between indices, values; fill where
  // none is written.
  function decodeSparse(n, gaps, vals, fill) {
    const a = new Float64Array(n).fill(fill);
    if (!gaps) return a;
    let at = 0;
    for (let k = 0; k < gaps.length; k++) { at += gaps[k]; a[at] = vals[k]; }
    return a;
  }
  // A metric as the data gives it: val, what `kscope view` shows for each
  // node; own, its own value; width, the flame graph's; total, ROOT's.
  function metricFrom(n, m) {
    const val = decodeSparse(n, m.i, m.v, m.inc ? 0 : NaN);
    if (m.rate) return { name: m.name, rate: true, val, own: val, width: val, total: NaN };
    const own = m.inc ? decodeSparse(n, m.oi, m.ov, NaN) : val;
    const width = val.map((v) => (isNaN(v) ? 0 : v));
    if (m.wi) { let at = 0; m.wi.forEach((g, k) => { at += g; width[at] = m.wv[k]; }); }
    width[0] = m.total;
    return { name: m.name, inc: m.inc, val, own, width, total: m.total };
  }
  function buildTree(d) {
    const n = d.name.length;
    const parent = new Int32Array(n);
    parent[0] = -1;
    for (let i = 1; i < n; i++) parent[i] = i - d.up[i];
    const names = d.name.map((k) => d.strings[k]);
    const device = new Uint8Array(n);
    let at = 0;
    for (const g of d.device) { at += g; device[at] = 1; }
    const metrics = d.metrics.map((m) => metricFrom(n, m));
    const kids = Array.from({ length: n }, () => []);
    for (let i = 1; i < n; i++) kids[parent[i]].push(i);
    return { n, parent, names, device, metrics, kids, raw: d, dflt: d.default };
  }
  function metricOf(tree, name) {
    return tree.metrics.find((m) => m.name === name);
  }
  function defaultMetric(tree) {
    return tree.dflt && metricOf(tree, tree.dflt) ? tree.dflt : null;
  }
  function pathOf(tree, i) {
    const p = [];
    for (; i > 0; i = tree.parent[i]) p.push(tree.names[i]);
    return p.reverse();
  }

  // ------------------------------------------------------------ header
  function addFact(label, value, cls) {
    const f = el('span', null, 'fact' + (cls ? ' ' + cls : ''));
    f.append(el('b', label), el('span', value));
    $('fact-list').append(f);
  }
  // The run's facts: the launchers' file beside a tree profile, a trace's
  // metadata (kscope's, or Chrome's own command_line).
  function showRun(p, label) {
    const run = p.run || (p.trace && p.trace.metadata) || {};
    const cmd = run.command || run.command_line;
    if (cmd) addFact('command', cmd, 'command');
    if (run.process) addFact('process', run.process, 'command');
    if (run.host) addFact('host', run.host + (run.pid ? ' (pid ' + run.pid + ')' : ''));
    if (run.start_time) addFact('started', run.start_time);
    if (run.kscope_version) addFact('kscope', run.kscope_version);
    if (p.runError) note(label + ': ' + p.runError);
  }
  function note(text) {
    $('notes').append(el('li', text));
  }
  function showFacts(p, label) {
    const t = p.tree, raw = t.raw;
    addFact(label, p.name);
    showRun(p, label);
    for (const d of raw.devices)
      addFact('device ' + d.type + ' ' + d.id, 'arch ' + d.arch + ', ' + d.sms + ' SMs' +
        (d.flops16 > 0 ? ', ' + (d.flops16 / 1e12).toFixed(1) + ' TFLOP/s fp16' : '') +
        (d.bytes > 0 ? ', ' + (d.bytes / 1e9).toFixed(0) + ' GB/s' : ''));
    if (!raw.devices.length) addFact('devices', 'none recorded');
    if (p.span) addFact('duration', fmtNs(p.span));
    else if (metricOf(t, 'wall_time (ns)')) addFact('host wall time', fmtNs(metricOf(t, 'wall_time (ns)').total));
    const g = p.top; // as `kscope report` says it
    addFact('GPU time', fmtNs(g.kernel_ns + g.copy_ns) + ' (kernels ' + fmtNs(g.kernel_ns) + ' in ' +
      g.launches + ' launches, copies and sets ' + fmtNs(g.copy_ns) + ')');
    for (const k of Object.keys(raw.facts))
      addFact(k === 'dropped_records' ? 'dropped records' : k, String(raw.facts[k]));
    if (raw.lod)
      note(label + ': ' + raw.lod.of + ' nodes; those under ' + raw.lod.share * 100 + '% of the total ' +
        raw.lod.metric + ' are merged into "(other)" nodes (' + raw.lod.kept + ' shown).');
    if (p.trace && p.trace.unended)
      note(label + ': ' + p.trace.unended + ' slices began ("B") and never ended; they are drawn to the end ' +
        'of the trace.');
    if (p.trace && p.trace.unplaced)
      note(label + ': ' + p.trace.unplaced + ' events have a time or duration beyond 4e15 us (127 years) ' +
        'and are not on the timeline.');
    if (p.trace) for (const tr of p.trace.tracks)
      if (tr.n > tr.ts.length)
        note(label + ': track ' + trackLabel(p.trace, tr) + ' holds ' + tr.n + ' slices; the ' +
          tr.ts.length + ' longest are shown.');
  }

  // ----------------------------------------------------------- icicle
  // Lays out the subtree of `root` in [0, width): each child gets its
  // share of the parent's width (of the children's sum, when the metric
  // does not add up), down to half a pixel.
  function layout(tree, val, root, width) {
    const boxes = [];
    const stack = [[root, 0, width, 0]];
    while (stack.length) {
      const [i, x, w, depth] = stack.pop();
      boxes.push({ i, x, w, depth });
      const kids = tree.kids[i];
      let sum = 0;
      for (const k of kids) sum += Math.max(0, val(k));
      const scale = w / Math.max(sum, Math.max(0, val(i)), 1e-300);
      let cx = x;
      for (const k of kids) {
        const cw = Math.max(0, val(k)) * scale;
        if (cw >= 0.5) stack.push([k, cx, cw, depth + 1]);
        cx += cw;
      }
    }
    return boxes;
  }
  function setupCanvas(canvas, height) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 1000;
    canvas.style.height = height + 'px';
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    return { ctx, width };
  }
  function drawBoxes(canvas, boxes, label, fill) {
    const maxDepth = boxes.reduce((m, b) => Math.max(m, b.depth), 0);
    const { ctx } = setupCanvas(canvas, (maxDepth + 1) * ROW + 2);
    for (const b of boxes) {
      const y = b.depth * ROW;
      ctx.fillStyle = fill(b.i);
      ctx.fillRect(b.x, y, Math.max(b.w - 0.5, 0.5), ROW - 1);
      if (b.w > 30) {
        ctx.fillStyle = '#111';
        ctx.save();
        ctx.beginPath();
        ctx.rect(b.x, y, b.w - 2, ROW);
        ctx.clip();
        ctx.fillText(label(b.i), b.x + 3, y + ROW / 2);
        ctx.restore();
      }
    }
    canvas.boxes = boxes;
  }
  function boxAt(canvas, ev) {
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left, depth = Math.floor((ev.clientY - r.top) / ROW);
    return (canvas.boxes || []).find((b) => b.depth === depth && x >= b.x && x < b.x + b.w);
  }
  function showTip(ev, lines) {
    const tip = $('tip');
    tip.textContent = lines.join('\n');
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 540) + 'px';
    tip.style.top = ev.clientY + 14 + 'px';
  }
  function hideTip() {
    $('tip').hidden = true;
  }

  function searchMatcher(q) {
    if (!q) return null;
    const m = /^\/(.*)\/$/.exec(q);
    if (m) {
      try { const re = new RegExp(m[1], 'i'); return (s) => re.test(s); } catch (e) { return () => false; }
    }
    const low = q.toLowerCase();
    return (s) => s.toLowerCase().includes(low);
  }

  function flameView(p) {
    const tree = p.tree, st = report.state;
    const select = $('flame-metric');
    for (const m of tree.metrics) if (!m.rate) select.append(el('option', m.name));
    st.metric = defaultMetric(tree);
    select.value = st.metric;
    const canvas = $('flame-canvas');
    let matched = new Uint8Array(tree.n);
    function value() {
      const m = metricOf(tree, st.metric);
      return m && !m.rate ? (i) => m.width[i] : () => 1;
    }
    function updateSearch() {
      const match = searchMatcher(st.search);
      matched = new Uint8Array(tree.n);
      const val = value();
      let count = 0, covered = 0;
      if (match) for (let i = 1; i < tree.n; i++) {
        if (!match(tree.names[i])) continue;
        matched[i] = 1;
        count++;
        let j = tree.parent[i];
        while (j > 0 && !matched[j]) j = tree.parent[j];
        if (j <= 0) covered += val(i); // not inside another match
      }
      st.matches = count;
      st.share = val(0) > 0 ? covered / val(0) : 0;
      $('flame-matches').textContent = match ? count + ' matches, ' + (st.share * 100).toFixed(2) +
        '% of ' + (st.metric || 'the total') : '';
    }
    function draw() {
      const val = value();
      const boxes = layout(tree, val, st.zoom, canvas.clientWidth || 1000);
      drawBoxes(canvas, boxes, (i) => tree.names[i], (i) => {
        if (matched[i]) return '#e0409a';
        const h = hue(tree.names[i]);
        return tree.device[i] ? 'hsl(' + (10 + (h % 40)) + ',75%,' + (58 + (h % 12)) + '%)'
          : 'hsl(' + (190 + (h % 50)) + ',45%,' + (70 + (h % 12)) + '%)';
      });
      $('flame-path').textContent = st.zoom ? pathOf(tree, st.zoom).join(' > ') : '';
    }
    report.zoom = (i) => { st.zoom = i >= 0 && i < tree.n ? i : 0; draw(); };
    report.search = (q) => { st.search = q; $('flame-search').value = q; updateSearch(); draw(); };
    canvas.addEventListener('click', (ev) => {
      const b = boxAt(canvas, ev);
      if (b) report.zoom(b.i === st.zoom ? Math.max(tree.parent[b.i], 0) : b.i);
    });
    // What hovering node i shows: its share of the view, then each metric
    // as `kscope view` shows it (ROOT: the total of a per-node metric).
    function tipLines(i) {
      const lines = [tree.names[i], pathOf(tree, i).slice(0, -1).join(' > ') || '(top level)'];
      const base = value()(st.zoom);
      if (base > 0) lines.push((value()(i) / base * 100).toFixed(2) + '% of the view');
      for (const m of tree.metrics) {
        const v = m.val[i];
        if (m.rate) { if (v > 0) lines.push(m.name + ': ' + fmtNum(v)); continue; }
        if (i === 0 && !m.inc && isNaN(v)) { // ROOT holds none of its own
          if (m.total > 0) lines.push(m.name + ': total ' + fmtMetric(m.name, m.total));
          continue;
        }
        if (isNaN(v) || (m.inc && v === 0 && isNaN(m.own[i]))) continue;
        lines.push(m.name + ': ' + fmtMetric(m.name, v) + (m.inc && tree.kids[i].length
          ? ' (own ' + fmtMetric(m.name, isNaN(m.own[i]) ? 0 : m.own[i]) + ')' : ''));
      }
      return lines;
    }
    report.tip = tipLines;
    canvas.addEventListener('mousemove', (ev) => {
      const b = boxAt(canvas, ev);
      if (!b) return hideTip();
      showTip(ev, tipLines(b.i));
    });
    canvas.addEventListener('mouseleave', hideTip);
    select.addEventListener('change', () => { st.metric = select.value; updateSearch(); draw(); });
    $('flame-search').addEventListener('input', (ev) => report.search(ev.target.value));
    $('flame-reset').addEventListener('click', () => report.zoom(0));
    return draw;
  }

  // ------------------------------------------------------- top kernels
  // `kscope top`'s rows, as read/top.c made them.
  function topRows(top) {
    return top.rows.map(([name, pct, total, calls, avg, min, max]) => ({ name, pct, total, calls, avg, min, max }));
  }
  // A table whose header sorts it; cols: [title, key, format, is name].
  function sortableTable(table, cols, rows, key) {
    let sortKey = key, asc = false;
    function fill() {
      rows.sort((a, b) => {
        const x = a[sortKey], y = b[sortKey];
        if (typeof x !== 'string' && isNaN(x) !== isNaN(y)) return isNaN(x) ? 1 : -1; // none: last
        const c = typeof x === 'string' ? x.localeCompare(y) : x === y || (isNaN(x) && isNaN(y)) ? 0 : x - y;
        return asc ? c : -c;
      });
      const head = el('tr');
      for (const [title, k, , isName] of cols) {
        const th = el('th', title, (isName ? 'name ' : '') + (k === sortKey ? 'sorted' + (asc ? ' asc' : '') : ''));
        th.addEventListener('click', () => { asc = k === sortKey ? !asc : false; sortKey = k; fill(); });
        head.append(th);
      }
      table.tHead.replaceChildren(head);
      const body = document.createDocumentFragment();
      for (const r of rows.slice(0, 2000)) {
        const tr = el('tr');
        for (const [, k, f, isName] of cols) tr.append(el('td', f(r[k], r), isName ? 'name' : ''));
        body.append(tr);
      }
      table.tBodies[0].replaceChildren(body);
    }
    fill();
  }
  function topView(top) {
    const rows = topRows(top);
    if (!rows.length) {
      $('view-top').prepend(el('p', 'No GPU kernels in this profile.'));
      return;
    }
    sortableTable($('top-table'), [['%', 'pct', (v) => v.toFixed(2)], ['total', 'total', fmtNs],
      ['calls', 'calls', String], ['avg', 'avg', fmtNs], ['min', 'min', fmtNs], ['max', 'max', fmtNs],
      ['kernel', 'name', String, true]], rows, 'total');
  }

  // ------------------------------------------------------------- diff
  function unionTrees(a, b) {
    const key = new Map(), nodes = [{ a: 0, b: 0, parent: -1, name: 'ROOT' }];
    key.set('', 0);
    const keys = [''];
    function add(tree, side) {
      const k = new Array(tree.n);
      k[0] = '';
      for (let i = 1; i < tree.n; i++) {
        k[i] = k[tree.parent[i]] + '\u0000' + tree.names[i];
        let u = key.get(k[i]);
        if (u === undefined) {
          u = nodes.length;
          key.set(k[i], u);
          keys.push(k[i]);
          nodes.push({ a: -1, b: -1, parent: key.get(k[tree.parent[i]]), name: tree.names[i] });
        }
        nodes[u][side] = i;
      }
    }
    add(a, 'a');
    add(b, 'b');
    const kids = nodes.map(() => []);
    for (let u = 1; u < nodes.length; u++) kids[nodes[u].parent].push(u);
    return { n: nodes.length, nodes, kids, parent: nodes.map((x) => x.parent), names: nodes.map((x) => x.name) };
  }
  function diffView(pa, pb) {
    const u = unionTrees(pa.tree, pb.tree), select = $('diff-metric');
    const common = pa.tree.metrics.filter((m) => !m.rate && metricOf(pb.tree, m.name));
    for (const m of common) select.append(el('option', m.name));
    // `kscope diff`'s metric: A's default, else B's
    const first = [pa.tree.dflt, pb.tree.dflt].find((d) => common.some((m) => m.name === d));
    select.value = first || (common[0] || {}).name;
    const canvas = $('diff-canvas');
    function draw() {
      const ma = metricOf(pa.tree, select.value), mb = metricOf(pb.tree, select.value);
      // each side's value as `kscope view` shows it (NaN: none), and width
      const va = (x) => (ma && x.a >= 0 ? ma.val[x.a] : NaN), vb = (x) => (mb && x.b >= 0 ? mb.val[x.b] : NaN);
      const wa = (x) => (ma && x.a >= 0 ? ma.width[x.a] : 0), wb = (x) => (mb && x.b >= 0 ? mb.width[x.b] : 0);
      const z = (v) => (isNaN(v) ? 0 : v);
      const val = (i) => Math.max(wa(u.nodes[i]), wb(u.nodes[i]));
      drawBoxes(canvas, layout(u, val, 0, canvas.clientWidth || 1000), (i) => u.names[i], (i) => {
        const x = u.nodes[i], a = wa(x), b = wb(x);
        const r = Math.max(a, b) > 0 ? (b - a) / Math.max(a, b) : 0;
        const s = Math.round(Math.min(1, Math.abs(r)) * 60);
        return r >= 0 ? 'hsl(5,' + (15 + s) + '%,' + (88 - s / 2) + '%)' : 'hsl(215,' + (15 + s) + '%,' + (88 - s / 2) + '%)';
      });
      canvas.onmousemove = (ev) => {
        const bx = boxAt(canvas, ev);
        if (!bx) return hideTip();
        const x = u.nodes[bx.i], a = va(x), b = vb(x);
        showTip(ev, [u.names[bx.i], 'A: ' + (x.a < 0 ? 'absent' : fmtMetric(select.value, a)),
          'B: ' + (x.b < 0 ? 'absent' : fmtMetric(select.value, b)), 'change: ' + fmtMetric(select.value, z(b) - z(a)) +
          (a > 0 && !isNaN(b) ? ' (' + ((b / a - 1) * 100).toFixed(1) + '%)' : '')]);
      };
      canvas.onmouseleave = hideTip;
      // `kscope diff`'s rows: every node whose value changed, or that one
      // side lacks; the change counts a missing value as 0
      const rows = [];
      for (let i = 0; i < u.n; i++) {
        const x = u.nodes[i], a = va(x), b = vb(x), delta = z(b) - z(a);
        if (delta === 0 && x.a >= 0 && x.b >= 0) continue;
        rows.push({ path: (i ? pathOf(u, i).join(' > ') : 'ROOT') +
          (x.a < 0 ? '  [only in B]' : x.b < 0 ? '  [only in A]' : ''),
          a, b, delta, abs: Math.abs(delta), ratio: x.a >= 0 && x.b >= 0 && a !== 0 ? b / a : NaN });
      }
      rows.sort((p, q) => q.abs - p.abs);
      const f = (v) => fmtMetric(select.value, v);
      sortableTable($('diff-table'), [['A', 'a', f], ['B', 'b', f], ['change', 'delta', f],
        ['|change|', 'abs', f], ['B/A', 'ratio', (v) => (isNaN(v) ? '-' : isFinite(v) ? v.toFixed(3) + 'x' : 'inf')],
        ['calling context', 'path', String, true]], rows.slice(0, 500), 'abs');
      report.state.diffRows = rows.length;
    }
    select.addEventListener('change', draw);
    return draw;
  }

  // ---------------------------------------------------------- timeline
  function trackLabel(trace, tr) {
    const pname = trace.procNames && trace.procNames.get(tr.pid);
    const tname = tr.name >= 0 ? trace.strings[tr.name] : 'thread ' + trace.strings[tr.tid];
    return (pname || 'process ' + trace.strings[tr.pid]) + ' / ' + tname;
  }
  function prepareTrace(t) {
    t.procNames = new Map();
    for (let k = 0; k + 1 < t.processes.length; k += 2)
      t.procNames.set(t.processes[k], t.strings[t.processes[k + 1]]);
    let end = 0;
    t.tracks.forEach((tr, index) => {
      tr.index = index;
      const n = tr.ts.length, ts = new Float64Array(n), depth = new Uint16Array(n);
      const stack = [];
      let at = 0, maxDur = 0, maxDepth = 0;
      for (let i = 0; i < n; i++) {
        at += tr.ts[i];
        ts[i] = at;
        while (stack.length && stack[stack.length - 1] <= at) stack.pop();
        depth[i] = Math.min(stack.length, 60);
        maxDepth = Math.max(maxDepth, depth[i]);
        stack.push(at + tr.dur[i]);
        maxDur = Math.max(maxDur, tr.dur[i]);
        end = Math.max(end, at + tr.dur[i]);
      }
      Object.assign(tr, { abs: ts, depth, maxDur, lanes: n ? maxDepth + 1 : 1 });
    });
    t.tracks.sort((x, y) => x.pid - y.pid || x.sort - y.sort || x.index - y.index);
    for (const c of t.counters) {
      const ts = new Float64Array(c.ts.length);
      let at = 0;
      c.ts.forEach((g, i) => { at += g; ts[i] = at; end = Math.max(end, at); });
      c.abs = ts;
      c.max = c.v.reduce((m, v) => Math.max(m, v), 0);
    }
    for (let k = 1; k < t.marks.length; k += 4) end = Math.max(end, t.marks[k]);
    t.end = end;
    return end;
  }
  // An event's args, one line each: "key: value" (a call stack as a
  // path, other objects as JSON), long values cut. The args document is
  // parsed at the first hover: per args, a template with '#' for each
  // number, and per track the numbers of its slices in order.
  function holes(t) {
    let n = 0, inStr = false;
    for (let c = 0; c < t.length; c++) {
      const ch = t[c];
      if (inStr) { if (ch === '\\') c++; else if (ch === '"') inStr = false; }
      else if (ch === '"') inStr = true;
      else if (ch === '#') n++;
    }
    return n;
  }
  function fill(t, nums, at) {
    let out = '', inStr = false;
    for (let c = 0; c < t.length; c++) {
      const ch = t[c];
      if (inStr) { if (ch === '\\') { out += ch; c++; out += t[c]; continue; } if (ch === '"') inStr = false; }
      else if (ch === '"') inStr = true;
      else if (ch === '#') { out += nums[at++]; continue; }
      out += ch;
    }
    return out;
  }
  // The numbers of a list of args templates, and where each item's start.
  function numbered(doc, text, tmpl) {
    const nums = text ? text.split(',') : [], at = new Int32Array(tmpl.length);
    let k = 0;
    for (let i = 0; i < tmpl.length; i++) { at[i] = k; if (tmpl[i] >= 0) k += doc.holes[tmpl[i]]; }
    return { nums, at };
  }
  function argLines(trace, tr, i) {
    const tmpl = tr ? tr.args_i : null;
    const t = tr ? (tmpl ? tmpl[i] : -1) : trace.marks[i * 4 + 3];
    if (t === undefined || t < 0) return [];
    if (!trace.argsDoc) {
      const d = load(trace.argsId) || { tracks: [], marks: '', templates: [] };
      d.holes = d.templates.map(holes);
      trace.argsDoc = d;
    }
    const d = trace.argsDoc;
    if (tr && !tr.argNums) tr.argNums = numbered(d, d.tracks[tr.index], tmpl);
    if (!tr && !trace.markNums) {
      const m = [];
      for (let k = 3; k < trace.marks.length; k += 4) m.push(trace.marks[k]);
      trace.markNums = numbered(d, d.marks, m);
    }
    const n = tr ? tr.argNums : trace.markNums, text = fill(d.templates[t], n.nums, n.at[i]);
    let a;
    try { a = JSON.parse(text); } catch (e) { return ['args: ' + text.slice(0, 300)]; }
    const lines = ['args:'];
    for (const key of Object.keys(a).slice(0, 40)) {
      const v = a[key];
      let s = key === 'call_stack' && Array.isArray(v) ? v.join(' > ') : typeof v === 'string' ? v : JSON.stringify(v);
      if (s.length > 300) s = s.slice(0, 300) + '…';
      lines.push('  ' + key + ': ' + s);
    }
    return lines;
  }
  function lowerBound(a, v) {
    let lo = 0, hi = a.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; }
    return lo;
  }
  function timelineView(trace) {
    const st = report.state, canvas = $('tl-canvas'), LANE = 16, HEAD = 18, CTR = 34;
    st.t0 = 0;
    st.t1 = Math.max(trace.end, 1);
    const rows = []; // {kind, y, h, track|counter}
    let y = 22;
    for (const tr of trace.tracks) { rows.push({ kind: 'track', y, h: HEAD + tr.lanes * LANE, tr }); y += HEAD + tr.lanes * LANE + 4; }
    for (const c of trace.counters) { rows.push({ kind: 'counter', y, h: HEAD + CTR, c }); y += HEAD + CTR + 4; }
    const rowOf = new Map(rows.filter((r) => r.tr).map((r) => [r.tr.index, r]));
    const height = Math.min(y + 4, 30000);
    let hits = [];
    function xOf(t, w) { return ((t - st.t0) / (st.t1 - st.t0)) * w; }
    function drawTrack(ctx, w, r) {
      const tr = r.tr, span = st.t1 - st.t0;
      let i = lowerBound(tr.abs, st.t0 - tr.maxDur);
      const lastX = new Float64Array(64).fill(-1);
      for (; i < tr.abs.length && tr.abs[i] <= st.t1; i++) {
        const end = tr.abs[i] + tr.dur[i];
        if (end < st.t0) continue;
        const x0 = Math.max(xOf(tr.abs[i], w), 0), x1 = Math.min(xOf(end, w), w), d = tr.depth[i];
        if (x1 < lastX[d] + 0.5) continue; // merged into the pixel already drawn
        lastX[d] = Math.max(x1, x0 + 1);
        const name = trace.strings[tr.name_i[i]], yy = r.y + HEAD + d * LANE;
        ctx.fillStyle = 'hsl(' + (hue(name) % 360) + ',55%,68%)';
        ctx.fillRect(x0, yy, Math.max(x1 - x0, 1), LANE - 1);
        if (x1 - x0 > 40) { ctx.fillStyle = '#111'; ctx.fillText(name.slice(0, Math.floor((x1 - x0) / 6)), x0 + 2, yy + LANE / 2); }
        if (x1 - x0 >= 2) hits.push([x0, yy, x1, yy + LANE, tr, i]);
      }
      void span;
    }
    function drawCounter(ctx, w, r) {
      const c = r.c, top = r.y + HEAD;
      ctx.fillStyle = '#7a9cc6';
      ctx.beginPath();
      ctx.moveTo(0, top + CTR);
      let i = Math.max(lowerBound(c.abs, st.t0) - 1, 0);
      for (; i < c.abs.length; i++) {
        const x = Math.max(xOf(c.abs[i], w), 0), v = c.max > 0 ? c.v[i] / c.max : 0;
        ctx.lineTo(x, top + CTR - v * CTR);
        const nx = i + 1 < c.abs.length ? Math.min(xOf(c.abs[i + 1], w), w) : w;
        ctx.lineTo(nx, top + CTR - v * CTR);
        if (c.abs[i] > st.t1) break;
      }
      ctx.lineTo(w, top + CTR);
      ctx.fill();
    }
    function drawMarksFlows(ctx, w) {
      ctx.fillStyle = '#c0392b';
      for (let k = 0; k < trace.marks.length; k += 4) {
        const r = rowOf.get(trace.marks[k]), x = xOf(trace.marks[k + 1], w);
        if (!r || x < 0 || x > w) continue;
        ctx.beginPath(); ctx.moveTo(x - 4, r.y + 2); ctx.lineTo(x + 4, r.y + 2); ctx.lineTo(x, r.y + 12); ctx.fill();
        hits.push([x - 4, r.y, x + 4, r.y + 12, null, k]);
      }
      ctx.strokeStyle = 'rgba(40,40,40,0.45)';
      let drawn = 0;
      for (let k = 0; k < trace.flows.length && drawn < 3000; k += 4) {
        const a = rowOf.get(trace.flows[k]), b = rowOf.get(trace.flows[k + 2]);
        const xa = xOf(trace.flows[k + 1], w), xb = xOf(trace.flows[k + 3], w);
        if (!a || !b || (xa < 0 && xb < 0) || (xa > w && xb > w)) continue;
        ctx.beginPath(); ctx.moveTo(xa, a.y + HEAD + 4); ctx.lineTo(xb, b.y + HEAD + 4); ctx.stroke();
        drawn++;
      }
    }
    function draw() {
      const { ctx, width } = setupCanvas(canvas, height);
      hits = [];
      ctx.fillStyle = '#666';
      ctx.fillText(fmtNs(st.t0) + ' … ' + fmtNs(st.t1), 4, 10);
      for (const r of rows) {
        if (r.y > height) break;
        ctx.fillStyle = '#eef1f6';
        ctx.fillRect(0, r.y, width, HEAD - 2);
        ctx.fillStyle = '#333';
        ctx.fillText(r.tr ? trackLabel(trace, r.tr) : 'counter ' + (trace.procNames.get(r.c.pid) || trace.strings[r.c.pid]) +
          ' / ' + trace.strings[r.c.name] + ' (max ' + fmtNum(r.c.max) + ')', 4, r.y + HEAD / 2);
        if (r.tr) drawTrack(ctx, width, r); else drawCounter(ctx, width, r);
      }
      drawMarksFlows(ctx, width);
      $('tl-range').textContent = 'view: ' + fmtNs(st.t1 - st.t0);
    }
    function zoomAt(f, frac) {
      const span = st.t1 - st.t0, at = st.t0 + span * frac, ns = Math.min(Math.max(span * f, 100), trace.end * 2 + 1000);
      st.t0 = at - ns * frac; st.t1 = st.t0 + ns; draw();
    }
    function pan(frac) { const d = (st.t1 - st.t0) * frac; st.t0 += d; st.t1 += d; draw(); }
    report.timeline = { zoomAt, pan, reset: () => { st.t0 = 0; st.t1 = Math.max(trace.end, 1); draw(); },
      // What is drawn where, in page coordinates (for tests and tools).
      boxes: () => {
        const r = canvas.getBoundingClientRect();
        return hits.map((q) => ({ x0: r.left + q[0], y0: r.top + q[1], x1: r.left + q[2], y1: r.top + q[3],
          name: q[4] ? trace.strings[q[4].name_i[q[5]]] : trace.strings[trace.marks[q[5] + 2]],
          mark: !q[4], depth: q[4] ? q[4].depth[q[5]] : 0, start: q[4] ? q[4].abs[q[5]] : trace.marks[q[5] + 1],
          dur: q[4] ? q[4].dur[q[5]] : 0 }));
      } };
    canvas.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = canvas.getBoundingClientRect();
      if (ev.shiftKey) pan(ev.deltaY / 1000); else zoomAt(Math.exp(ev.deltaY / 500), (ev.clientX - r.left) / r.width);
    }, { passive: false });
    let drag = null;
    canvas.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, t0: st.t0, t1: st.t1 }; });
    window.addEventListener('mouseup', () => { drag = null; });
    canvas.addEventListener('mousemove', (ev) => {
      const r = canvas.getBoundingClientRect();
      if (drag) {
        const d = ((ev.clientX - drag.x) / r.width) * (drag.t1 - drag.t0);
        st.t0 = drag.t0 - d; st.t1 = drag.t1 - d; draw(); return;
      }
      const x = ev.clientX - r.left, yy = ev.clientY - r.top;
      const h = hits.find((q) => x >= q[0] && x <= q[2] && yy >= q[1] && yy <= q[3]);
      if (!h) return hideTip();
      if (!h[4]) {
        const k = h[5];
        return showTip(ev, ['mark: ' + trace.strings[trace.marks[k + 2]], 'at ' + fmtNs(trace.marks[k + 1])]
          .concat(argLines(trace, null, k / 4)));
      }
      const tr = h[4], i = h[5];
      showTip(ev, [trace.strings[tr.name_i[i]], trackLabel(trace, tr), 'start ' + fmtNs(tr.abs[i]),
        'duration ' + fmtNs(tr.dur[i])].concat(argLines(trace, tr, i)));
    });
    canvas.addEventListener('mouseleave', hideTip);
    window.addEventListener('keydown', (ev) => {
      if (st.view !== 'timeline' || ev.target.tagName === 'INPUT') return;
      const k = ev.key.toLowerCase();
      if (k === 'w') zoomAt(0.8, 0.5); else if (k === 's') zoomAt(1.25, 0.5);
      else if (k === 'a') pan(-0.1); else if (k === 'd') pan(0.1); else if (k === '0') report.timeline.reset();
    });
    $('tl-reset').addEventListener('click', () => report.timeline.reset());
    return draw;
  }

  // -------------------------------------------------------------- tabs
  function main() {
    const a = load('kscope-a'), b = load('kscope-b');
    const profiles = [a, b].filter(Boolean).map((p) => ({ name: p.name, tree: buildTree(p.tree), trace: p.trace,
      run: p.run, runError: p.run_error, lines: p.lines, top: p.top }));
    profiles.forEach((p, k) => { if (p.trace) p.trace.argsId = k ? 'kscope-b-args' : 'kscope-a-args'; });
    for (const p of profiles) if (p.trace) p.span = prepareTrace(p.trace);
    profiles.forEach((p, k) => showFacts(p, profiles.length > 1 ? (k ? 'B' : 'A') : 'profile'));
    const views = [['flame', 'Flame graph', flameView(profiles[0])]];
    if (profiles[0].trace) views.push(['timeline', 'Timeline', timelineView(profiles[0].trace)]);
    topView(profiles[0].top);
    views.push(['top', 'Top kernels', null]);
    if (profiles[0].lines) // PC samples: each kernel's hottest source lines (lines.js)
      views.push(['lines', 'Source lines', () => { report.lines = window.kscopeLinesView(profiles[0].lines, $('lines-list')); }]);
    if (profiles[1]) views.push(['diff', 'Diff A → B', diffView(profiles[0], profiles[1])]);
    const drawn = {};
    function show(name) {
      report.state.view = name;
      for (const [v] of views) $('view-' + v).classList.toggle('on', v === name);
      for (const btn of $('tabs').children) btn.classList.toggle('on', btn.dataset.view === name);
      const v = views.find((x) => x[0] === name);
      if (v && v[2]) { v[2](); drawn[name] = true; }
    }
    for (const [v, title] of views) {
      const btn = el('button', title);
      btn.type = 'button';
      btn.dataset.view = v;
      btn.addEventListener('click', () => show(v));
      $('tabs').append(btn);
    }
    report.show = show;
    // The numbers as the page holds them, for tests (NaN: null).
    report.numbers = (k) => {
      const t = profiles[k || 0].tree, arr = (a) => Array.from(a, num);
      return { names: t.names, parent: Array.from(t.parent), metrics: t.metrics.map((m) => ({ name: m.name,
        inc: !!m.inc, rate: !!m.rate, total: num(m.total), val: arr(m.val), width: arr(m.width) })) };
    };
    window.addEventListener('resize', () => show(report.state.view));
    const wanted = (location.hash || '').slice(1);
    show(views.some((v) => v[0] === wanted) ? wanted : 'flame');
    report.state.ready = true;
    document.body.dataset.ready = '1';
  }
  try {
    main();
  } catch (e) {
    report.state.errors.push(String(e));
    document.body.prepend(el('pre', 'kscope report: the page could not be drawn: ' + e));
    throw e;
  }
})();
