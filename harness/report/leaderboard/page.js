(function () {
  const data = JSON.parse(document.getElementById('board-data').textContent);
  const corpusSel = document.getElementById('corpus');
  const stratumSel = document.getElementById('stratum');
  const table = document.getElementById('board');
  let sortKey = null, sortDir = -1;

  // own keys only: a stored name such as "constructor" must not find Object.prototype's
  function get(o, k) { return (o && Object.prototype.hasOwnProperty.call(o, k)) ? o[k] : undefined; }
  // a metric's value as shown: in percent for a share, as it is otherwise (answer_rank),
  // rounded as the Markdown and LaTeX tables round it. Both round the exact binary value;
  // on an exact tie (6.25 to one place) toFixed goes away from zero, Python's format to
  // even: the tie is read off the exact decimal expansion (toFixed(100) is exact)
  function shown(m, x, digits) {
    if (x === null || x === undefined) return '-';
    const v = (get(data.percent, m) === false ? 1 : 100) * x;
    const exact = v.toFixed(100), cut = exact.indexOf('.') + 1 + digits;
    if (/^50*$/.test(exact.slice(cut))) {
      const kept = exact.slice(0, digits ? cut : cut - 1);
      if (Number(kept.slice(-1)) % 2 === 0) return kept;
    }
    return v.toFixed(digits);
  }
  function hasKind(cell, stratum) {
    if (stratum === 'overall') return true;
    const kind = stratum.split('=')[0] + '=';
    return Object.keys(cell.strata).some(s => s.startsWith(kind));
  }
  function cellsOf(corpus) { return data.cells.filter(c => c.corpus === corpus); }
  function strataOf(corpus) {
    const seen = [];
    cellsOf(corpus).forEach(c => Object.keys(c.strata).forEach(s => {
      if (!seen.includes(s)) seen.push(s);
    }));
    return seen;
  }
  function option(value, text) {
    const o = document.createElement('option'); o.value = value; o.textContent = text; return o;
  }
  function fillStrata() {
    const keep = stratumSel.value;
    stratumSel.replaceChildren();
    const labels = get(data.clusters, corpusSel.value) || {};
    strataOf(corpusSel.value).forEach(s => {
      const id = s.startsWith('cluster=') ? s.slice(8) : null;
      const text = (id !== null && get(labels, id)) ? s + ' \u00b7 ' + get(labels, id) : s;
      stratumSel.appendChild(option(s, text));
    });
    if (strataOf(corpusSel.value).includes(keep)) stratumSel.value = keep;
  }
  function metricsOf(corpus) {
    return data.metrics.filter(m => cellsOf(corpus).some(c => get(c.strata.overall.mean, m) !== undefined));
  }
  function render() {
    const corpus = corpusSel.value, stratum = stratumSel.value;
    const metrics = metricsOf(corpus);
    const cols = ['retriever', 'n'].concat(metrics);
    const head = table.tHead.rows[0];
    head.replaceChildren();
    cols.forEach(k => {
      const th = document.createElement('th');
      th.textContent = k; th.className = 'sortable'; th.dataset.key = k;
      if (k === sortKey) th.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
      th.addEventListener('click', () => {
        sortDir = (sortKey === k) ? -sortDir : (k === 'retriever' ? 1 : -1);
        sortKey = k; render();
      });
      head.appendChild(th);
    });
    const th2 = document.createElement('th'); th2.textContent = 'provenance'; head.appendChild(th2);
    let rows = cellsOf(corpus).map(c => ({cell: c, s: get(c.strata, stratum) || {n: null, mean: {}}}));
    const best = Object.create(null);  // a metric named __proto__ stays a plain key
    metrics.forEach(m => {
      const vals = rows.filter(r => !r.cell.stale).map(r => get(r.s.mean, m)).filter(v => v !== null && v !== undefined);
      const pick = get(data.higher, m) === false ? Math.min : Math.max;  // outdated@K, answer_rank
      best[m] = vals.length ? pick(...vals) : null;
    });
    if (sortKey) {
      const val = r => sortKey === 'retriever' ? r.cell.label.toLowerCase()
        : sortKey === 'n' ? r.s.n : get(r.s.mean, sortKey);
      rows.sort((a, b) => {
        const x = val(a), y = val(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * sortDir;
      });
    }
    const body = table.tBodies[0];
    body.replaceChildren();
    rows.forEach(r => {
      const tr = document.createElement('tr');
      tr.dataset.retriever = r.cell.retriever;
      const name = document.createElement('th');
      name.textContent = r.cell.label + (r.cell.stale ? ' \u2020' : '');
      tr.appendChild(name);
      const n = document.createElement('td'); n.className = 'num';
      n.textContent = (r.s.n === null || r.s.n === undefined) ? '-' : r.s.n; tr.appendChild(n);
      metrics.forEach(m => {
        const td = document.createElement('td'); td.className = 'num';
        const v = get(r.s.mean, m);
        if (!r.cell.computed.includes(m)) {
          td.textContent = 'not computed'; td.className = 'nc';
          td.title = 'this cell was not scored with ' + m + '; python -m harness with ' +
            'metrics.names=[' + m + '] scores its stored ranked list';
        } else if (!hasKind(r.cell, stratum)) {
          td.textContent = 'no strata'; td.className = 'nc';
          td.title = 'this cell has no ' + stratum.split('=')[0] + ' strata: it was scored ' +
            'before they were built; rerun it (its stored ranked list is rescored, no retrieval)';
        } else if (r.s.n === null || r.s.n === undefined) {
          td.textContent = '-'; td.title = 'no query of this cell is in stratum ' + stratum;
        } else if (v === null || v === undefined) {
          td.textContent = '-'; td.title = m + ' is undefined for every query of this stratum';
        } else {
          td.textContent = shown(m, v, 2);
          const ci = get(r.s.ci, m);
          if (ci && ci[0] !== null) {
            const span = document.createElement('span'); span.className = 'ci';
            span.textContent = ' [' + shown(m, ci[0], 1) + ', ' + shown(m, ci[1], 1) + ']';
            td.appendChild(span);
          }
        }
        if (v !== null && v !== undefined && best[m] !== null && Math.abs(v - best[m]) < 1e-12 && !r.cell.stale) {
          td.style.fontWeight = 'bold';
        }
        tr.appendChild(td);
      });
      const prov = document.createElement('td');
      const det = document.createElement('details');
      const sum = document.createElement('summary');
      const p = r.cell.provenance;
      sum.textContent = 'provenance' + (p.git && p.git.commit ? ' · ' + String(p.git.commit).slice(0, 8) : '');
      const pre = document.createElement('pre');
      pre.textContent = JSON.stringify(p, null, 2);
      det.appendChild(sum); det.appendChild(pre); prov.appendChild(det); tr.appendChild(prov);
      body.appendChild(tr);
    });
    document.getElementById('count').textContent =
      rows.length + ' retriever' + (rows.length === 1 ? '' : 's') + ' on ' + corpus + ', stratum ' + stratum;
  }
  data.corpora.forEach(c => corpusSel.appendChild(option(c, c)));
  corpusSel.addEventListener('change', () => { fillStrata(); render(); });
  stratumSel.addEventListener('change', render);
  fillStrata();
  render();
})();
