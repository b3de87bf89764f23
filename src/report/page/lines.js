// lines.js - the HTML report's "Source lines" view, for a profile recorded
// with PC sampling: per kernel (heaviest first) its samples and main stall
// reasons, then its hottest source lines with theirs, as `kscope view
// --lines` prints them. The data is the "lines" object the writer made
// (read/lines.c): stall reasons by index, samples per reason on each row.
// Names reach the page through textContent only. report.js calls
// kscopeLinesView when a profile has lines.
window.kscopeLinesView = function (lines, host) {
  'use strict';
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  const pct = (part, whole) => (whole > 0 ? (100 * part / whole).toFixed(1) : '0.0') + '%';
  // "long_scoreboard 81%, wait 9%, selected 5%": the three largest reasons
  // of a row, as shares of its samples.
  function reasons(row) {
    const order = row.r.map((v, k) => [v, k]).filter((x) => x[0] > 0).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    const text = order.slice(0, 3).map(([v, k]) => lines.reasons[k] + ' ' + (100 * v / row.samples).toFixed(0) + '%');
    return text.length ? text.join(', ') : '-';
  }
  const shown = [];
  host.replaceChildren();
  host.append(el('p', lines.total + ' PC samples; each row: samples, share of all samples, the main reasons ' +
    'the warps there stalled (share of the row\'s samples), the source line.', 'lines-note'));
  for (const k of lines.kernels) {
    const head = el('h2');
    head.append(el('span', k.name, 'name'), el('span', ': ' + k.samples + ' samples (' + pct(k.samples, lines.total) +
      '); ' + reasons(k)));
    const table = el('table', null, 'lines-table');
    const tr = el('tr');
    for (const [t, cls] of [['samples', ''], ['%', ''], ['main stall reasons', 'reasons'], ['source line', 'name']]) tr.append(el('th', t, cls));
    table.append(el('thead'));
    table.tHead.append(tr);
    const body = el('tbody');
    for (const row of k.lines) {
      const r = el('tr');
      const bar = el('td', null, 'share');
      const fill = el('span', pct(row.samples, lines.total));
      fill.style.setProperty('--w', Math.min(100, 100 * row.samples / Math.max(k.samples, 1)) + '%');
      bar.append(fill);
      r.append(el('td', row.samples), bar, el('td', reasons(row), 'reasons'),
        el('td', row.line === null ? '(no line information)' : row.line, 'name'));
      body.append(r);
    }
    table.append(body);
    host.append(head, table);
    if (k.more) host.append(el('p', k.more + ' more lines with fewer samples are left out.', 'lines-note'));
    shown.push({ name: k.name, samples: k.samples, reasons: reasons(k),
      lines: k.lines.map((row) => ({ line: row.line, samples: row.samples, reasons: reasons(row) })) });
  }
  return shown;
};
