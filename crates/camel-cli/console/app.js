// The camel console: a page over the admin API of `camel run --admin-addr`.
// No framework and no build step. Data from the server is only ever put in the page as
// text (textContent), except the route diagram, an SVG the server draws, which is parsed
// as XML and imported (it holds no script; the page's CSP would block one anyway).
'use strict';

const TOKEN_KEY = 'camelAdminToken';
const state = { rows: [], view: null, timers: [], original: '', validating: 0 };

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k.startsWith('data-')) e.setAttribute(k, v); else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

function askToken(message) {
  $('token-box').hidden = false;
  $('token-message').textContent = message ||
    'This admin API needs its token. It is kept for this tab only (sessionStorage).';
  $('token-input').focus();
}

// One request to the admin API, with the token when there is one.
async function api(method, path, body, type) {
  const headers = {};
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  if (body !== undefined && body !== null) headers['Content-Type'] = type || 'application/json';
  const r = await fetch(path, { method, headers, body, cache: 'no-store', credentials: 'omit' });
  if (r.status === 401) {
    askToken(t ? 'The token was refused: enter the admin token again.' : undefined);
  }
  return r;
}

async function json(method, path, body, type) {
  const r = await api(method, path, body, type);
  let data = null;
  try { data = await r.json(); } catch (_) { data = null; }
  return { status: r.status, data };
}

function notice(text) {
  const n = $('notice');
  n.hidden = !text;
  n.textContent = text || '';
}

// ---- formatting, as `camel get routes` prints ----
function age(s) {
  if (s === null || s === undefined) return '-';
  s = Math.floor(s);
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm' + (s % 60) + 's';
  if (s < 86400) return Math.floor(s / 3600) + 'h' + Math.floor((s % 3600) / 60) + 'm';
  return Math.floor(s / 86400) + 'd' + Math.floor((s % 86400) / 3600) + 'h';
}
function count(v) { return v === null || v === undefined ? '-' : String(Math.round(v)); }
function duration(s) {
  if (s === null || s === undefined || !isFinite(s)) return s === Infinity ? '>max' : '-';
  if (s < 0.001) return (s * 1e6).toFixed(0) + 'µs';
  if (s < 1) return (s * 1e3).toFixed(1) + 'ms';
  return s.toFixed(2) + 's';
}

// ---- the live stream: rows once a second, read with fetch so the token stays in a header ----
async function stream() {
  for (;;) {
    try {
      const r = await api('GET', '/console/api/events');
      if (r.ok && r.body) {
        $('live').className = 'live on';
        $('live').textContent = 'live';
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = event.split('\n').filter(l => l.startsWith('data: ')).map(l => l.slice(6)).join('\n');
            if (data) { state.rows = JSON.parse(data); render(); }
          }
        }
      }
    } catch (_) { /* reconnect below */ }
    $('live').className = 'live off';
    $('live').textContent = 'offline';
    await new Promise(done => setTimeout(done, 1500));
  }
}

function render() {
  if (state.view === 'list') renderList();
  else if (state.view) renderRouteStatus();
}

// ---- the route list ----
function showList() {
  state.view = 'list';
  const table = el('table', { id: 'routes' },
    el('thead', {}, el('tr', {}, ...['route', 'status', 'uptime', 'total', 'failed', 'in flight', 'mean', 'p99', 'from']
      .map(h => el('th', {}, h)))),
    el('tbody'));
  $('view').replaceChildren(el('div', { class: 'panel' }, el('h2', {}, 'Routes'), table));
  renderList();
}

function renderList() {
  const body = document.querySelector('#routes tbody');
  if (!body) return;
  body.replaceChildren(...state.rows.map(r => el('tr', { 'data-route': r.id },
    el('td', {}, el('a', { href: '#/route/' + encodeURIComponent(r.id) }, r.id)),
    el('td', { class: 'status status-' + r.status.split(' ')[0] }, r.status + (r.failing ? ' — ' + r.failing : '')),
    el('td', { class: 'num uptime' }, age(r.uptime_seconds)),
    el('td', { class: 'num total' }, count(r.total)),
    el('td', { class: 'num failed' }, count(r.failed)),
    el('td', { class: 'num inflight' }, count(r.inflight)),
    el('td', { class: 'num mean' }, duration(r.mean_seconds)),
    el('td', { class: 'num p99' }, duration(r.p99_seconds)),
    el('td', { class: 'mono' }, r.from))));
}

// ---- a route's page ----
function showRoute(id) {
  state.view = id;
  const actions = ['start', 'stop', 'suspend', 'resume'].map(a =>
    el('button', { type: 'button', 'data-action': a, onclick: () => act(id, a) }, a));
  const traceOn = el('button', { type: 'button', id: 'trace-on', onclick: () => trace(id, 'start') }, 'trace on');
  const traceOff = el('button', { type: 'button', id: 'trace-off', onclick: () => trace(id, 'stop') }, 'trace off');
  $('view').replaceChildren(
    el('div', { class: 'panel' },
      el('h2', {}, 'Route ', el('span', { class: 'mono', id: 'route-id' }, id)),
      el('div', { class: 'actions' },
        el('span', {}, 'status: ', el('strong', { id: 'route-status' }, '…')),
        el('span', { class: 'muted', id: 'route-counts' }),
        ...actions, traceOn, traceOff,
        el('span', { id: 'action-result', class: 'muted' }))),
    el('div', { class: 'panel' },
      el('h2', {}, 'Diagram ', el('span', { class: 'muted', id: 'trace-state' })),
      el('div', { id: 'diagram' }, 'loading…'),
      el('details', { id: 'mermaid-box' }, el('summary', {}, 'Mermaid: drawn by Mermaid, and its source (for a README)'),
        el('div', { id: 'mermaid-drawing' }), el('pre', { class: 'mono', id: 'mermaid-text' }))),
    el('div', { class: 'panel' },
      el('h2', {}, 'Last traced exchanges'),
      el('table', { id: 'exchanges' }, el('thead', {}, el('tr', {},
        ...['seq', 'exchange', 'outcome', 'duration', 'steps', 'body as it left'].map(h => el('th', {}, h)))), el('tbody'))),
    el('div', { class: 'panel' },
      el('h2', {}, 'Definition'),
      el('p', { class: 'muted' }, 'Checked on the server as you type; Apply hot-swaps the route (in-flight exchanges finish on the old steps). Values shown as *** are hidden credentials: put the real value back before applying.'),
      el('div', { class: 'columns' },
        el('div', {},
          el('div', { class: 'editor' }, el('pre', { id: 'gutter' }), el('textarea', { id: 'editor', spellcheck: false, wrap: 'off' })),
          el('p', {}, el('span', { id: 'validity' }, ''), ' ',
            el('button', { type: 'button', id: 'apply', class: 'primary', onclick: () => apply(id) }, 'Apply'), ' ',
            el('button', { type: 'button', id: 'revert', onclick: () => loadYaml(id) }, 'Revert'), ' ',
            el('span', { id: 'apply-result' })),
          el('ul', { id: 'errors' })),
        el('div', {}, el('pre', { id: 'diff' })))));
  $('mermaid-box').addEventListener('toggle', () => { if ($('mermaid-box').open) renderMermaid($('mermaid-text').textContent); });
  const editor = $('editor');
  editor.addEventListener('input', () => { gutter(); diff(); scheduleValidate(id); });
  editor.addEventListener('scroll', () => { $('gutter').scrollTop = editor.scrollTop; });
  renderRouteStatus();
  loadDiagram(id);
  loadYaml(id);
  refreshTrace(id);
  state.timers.push(setInterval(() => refreshTrace(id), 2000));
}

function renderRouteStatus() {
  const row = state.rows.find(r => r.id === state.view);
  if (!row || !$('route-status')) return;
  $('route-status').textContent = row.status;
  $('route-status').className = 'status-' + row.status.split(' ')[0];
  $('route-counts').textContent = 'exchanges ' + count(row.total) + ', failed ' + count(row.failed) +
    ', in flight ' + count(row.inflight) + ', mean ' + duration(row.mean_seconds) + ', p99 ' + duration(row.p99_seconds) +
    ', up ' + age(row.uptime_seconds);
}

async function act(id, action) {
  $('action-result').textContent = action + '…';
  const { status, data } = await json('POST', '/routes/' + encodeURIComponent(id) + '/' + action);
  $('action-result').textContent = status === 200 ? action + ': ' + data.status : action + ' refused (' + status + '): ' + (data && data.error || '');
}

async function trace(id, action) {
  const { status, data } = await json('POST', '/routes/' + encodeURIComponent(id) + '/trace/' + action);
  $('action-result').textContent = status === 200 ? 'tracer ' + (data.enabled ? 'on' : 'off') : 'tracer: ' + (data && data.error || status);
  refreshTrace(id);
}

async function loadDiagram(id) {
  const r = await api('GET', '/console/api/routes/' + encodeURIComponent(id) + '/diagram.svg');
  const box = $('diagram');
  if (!box) return;
  if (!r.ok) { box.textContent = 'no diagram (' + r.status + ')'; return; }
  const doc = new DOMParser().parseFromString(await r.text(), 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName !== 'svg') { box.textContent = 'the diagram did not parse'; return; }
  for (const s of svg.querySelectorAll('script, foreignObject')) s.remove();
  box.replaceChildren(document.importNode(svg, true));
  refreshTrace(id);
  const mmd = await api('GET', '/console/api/routes/' + encodeURIComponent(id) + '/diagram.mmd');
  if (mmd.ok && $('mermaid-text')) {
    $('mermaid-text').textContent = await mmd.text();
    if ($('mermaid-box').open) renderMermaid($('mermaid-text').textContent);
  }
}

// Per-step counts, from the tracer's kept exchanges (the last ones, not all time).
async function refreshTrace(id) {
  if (state.view !== id) return;
  const { status, data } = await json('GET', '/routes/' + encodeURIComponent(id) + '/trace');
  const exchanges = status === 200 && data ? data.exchanges || [] : [];
  const enabled = status === 200 && data && data.enabled;
  if ($('trace-state')) {
    $('trace-state').textContent = enabled
      ? '— counts per step over the last ' + exchanges.length + ' traced exchanges'
      : '— the tracer is off for this route: turn it on to see counts per step';
  }
  const counts = new Map();
  for (const x of exchanges) {
    for (const s of x.steps || []) {
      const c = counts.get(s.id) || { n: 0, failed: 0 };
      c.n += 1;
      if (s.outcome === 'failed') c.failed += 1;
      counts.set(s.id, c);
    }
  }
  for (const g of document.querySelectorAll('#diagram g.node[data-step]')) {
    let label = g.querySelector('text.count');
    const c = counts.get(g.getAttribute('data-step'));
    if (!c) { if (label) label.remove(); continue; }
    if (!label) {
      const box = g.getBBox();
      label = document.createElementNS('http://www.w3.org/2000/svg', 'text');
      label.setAttribute('class', 'count');
      label.setAttribute('x', String(box.x + box.width + 4));
      label.setAttribute('y', String(box.y + 11));
      g.append(label);
    }
    label.textContent = c.n + (c.failed ? ' (' + c.failed + ' failed)' : '');
    label.setAttribute('fill', c.failed ? '#c62828' : '#1565c0');
  }
  const body = document.querySelector('#exchanges tbody');
  if (!body) return;
  body.replaceChildren(...exchanges.slice(-10).reverse().map(x => {
    const last = (x.steps || []).filter(s => s.body).pop();
    const text = last && last.body.text !== null && last.body.text !== undefined ? last.body.text : '';
    return el('tr', {},
      el('td', { class: 'num' }, x.seq), el('td', { class: 'mono' }, x.exchange_id),
      el('td', {}, x.outcome + (x.error ? ': ' + x.error : '')),
      el('td', { class: 'num' }, duration(x.duration_us / 1e6)),
      el('td', { class: 'num' }, (x.steps || []).length),
      el('td', { class: 'mono' }, text.length > 80 ? text.slice(0, 79) + '…' : text));
  }));
}

// ---- the editor ----
async function loadYaml(id) {
  const r = await api('GET', '/console/api/routes/' + encodeURIComponent(id) + '/yaml');
  if (!r.ok) return;
  state.original = await r.text();
  if (!$('editor')) return;
  $('editor').value = state.original;
  $('errors').replaceChildren();
  $('validity').textContent = '';
  gutter([]);
  diff();
}

function gutter(errorLines) {
  const lines = $('editor').value.split('\n').length;
  const bad = new Set(errorLines || state.errorLines || []);
  $('gutter').replaceChildren(...Array.from({ length: lines }, (_, i) =>
    el('span', { class: bad.has(i + 1) ? 'line error' : 'line', 'data-line': i + 1 }, i + 1)));
  $('gutter').scrollTop = $('editor').scrollTop;
}

function scheduleValidate(id) {
  clearTimeout(state.validateTimer);
  state.validateTimer = setTimeout(() => validate(id), 300);
}

function showErrors(errors) {
  state.errorLines = errors.map(e => e.line).filter(Boolean);
  gutter(state.errorLines);
  $('errors').replaceChildren(...errors.map(e => {
    const where = e.line ? 'line ' + e.line + (e.column ? ', column ' + e.column : '') + ': ' : '';
    const li = el('li', { 'data-line': e.line || '' }, where + e.message);
    li.addEventListener('click', () => { if (e.line) goTo(e.line, e.column || 1); });
    return li;
  }));
}

function goTo(line, column) {
  const editor = $('editor');
  const lines = editor.value.split('\n');
  let at = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) at += lines[i].length + 1;
  at += column - 1;
  editor.focus();
  editor.setSelectionRange(at, at);
}

async function validate(id) {
  const seq = ++state.validating;
  const { status, data } = await json('POST', '/console/api/routes/' + encodeURIComponent(id) + '/validate',
    $('editor').value, 'application/yaml');
  if (seq !== state.validating || !data) return;
  if (status !== 200) { $('validity').textContent = 'not checked (' + status + ')'; return; }
  $('validity').textContent = data.ok ? 'valid' : data.errors.length + ' error(s)';
  $('validity').className = data.ok ? 'ok' : 'bad';
  showErrors(data.errors || []);
}

async function apply(id) {
  $('apply-result').textContent = 'applying…';
  $('apply-result').className = '';
  const { status, data } = await json('PUT', '/routes/' + encodeURIComponent(id), $('editor').value, 'application/yaml');
  const result = $('apply-result');
  if (status === 200 || status === 201) {
    result.textContent = status === 200 ? 'swapped' : 'added and started';
    result.className = 'ok';
    showErrors([]);
    await loadYaml(id);
    loadDiagram(id);
  } else if (status === 409) {
    result.textContent = 'conflict (409): ' + (data && data.error || 'the route changed meanwhile; try again');
    result.className = 'bad';
  } else {
    result.textContent = 'refused (' + status + ')';
    result.className = 'bad';
    const errors = data && data.errors ? data.errors.map(m => parsePlaced(m)) : [{ message: data && data.error || String(status) }];
    showErrors(errors);
  }
}

// `PUT /routes/x:3:9: message` → {line: 3, column: 9, message}.
function parsePlaced(message) {
  const m = /^[^:]*(?::[^:]*)*?:(\d+):(\d+): (.*)$/.exec(message);
  return m ? { line: Number(m[1]), column: Number(m[2]), message: m[3] } : { message };
}

// A line diff (longest common subsequence) of the running definition and the editor.
function diff() {
  const a = state.original.split('\n');
  const b = $('editor').value.split('\n');
  const out = $('diff');
  if (a.length * b.length > 4e6) { out.textContent = 'too long to compare here'; return; }
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const lines = [];
  let i = 0, j = 0, changed = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { lines.push(el('span', { class: 'same' }, '  ' + a[i])); i++; j++; }
    else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) { lines.push(el('span', { class: 'del' }, '- ' + a[i])); i++; changed++; }
    else { lines.push(el('span', { class: 'add' }, '+ ' + b[j])); j++; changed++; }
  }
  out.replaceChildren(el('span', { class: 'muted', id: 'diff-summary' },
    changed ? changed + ' line(s) differ from the running route' : 'same as the running route'), ...lines);
}

// ---- navigation ----
function route() {
  for (const t of state.timers) clearInterval(t);
  state.timers = [];
  state.errorLines = [];
  const hash = location.hash.replace(/^#/, '');
  const m = /^\/route\/(.+)$/.exec(hash);
  if (m) showRoute(decodeURIComponent(m[1]));
  else if (hash === '/outboxes') showOutboxes();
  else if (hash === '/sinks') showSinks();
  else showList();
  for (const a of document.querySelectorAll('nav a')) a.className = a.getAttribute('href') === '#' + (hash || '/') ? 'current' : '';
}

function saveToken() {
  const t = $('token-input').value.trim();
  if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
  $('token-input').value = '';
  $('token-box').hidden = true;
  route();
}

document.addEventListener('DOMContentLoaded', () => {
  $('token-button').addEventListener('click', () => askToken());
  $('token-save').addEventListener('click', saveToken);
  $('token-input').addEventListener('keydown', e => { if (e.key === 'Enter') saveToken(); });
  window.addEventListener('hashchange', route);
  route();
  stream();
  json('GET', '/routes').then(({ status }) => {
    if (status === 200 && !token()) notice('No admin token is configured: the console is read-only (start camel run with --admin-token-file to allow changes).');
  });
});
