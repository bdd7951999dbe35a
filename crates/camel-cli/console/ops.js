// The console's operations pages (outboxes, batching sinks) and the Mermaid drawing of a
// route. Uses the helpers of app.js (el, json, api, $, age, count); loaded after it.
// As in app.js, data from the server only ever reaches the page as text.
'use strict';

const MERMAID_SRC = '/console/vendor/mermaid-12.3.0.min.js';

// ---- the outboxes ----
function showOutboxes() {
  state.view = 'outboxes';
  $('view').replaceChildren(
    el('div', { class: 'panel' },
      el('h2', {}, 'Outboxes'),
      el('p', { class: 'muted' }, 'The outboxes this process has opened: backlog, who drains each partition, and the dead messages. Retrying or discarding asks for confirmation first.'),
      el('div', { id: 'confirm', class: 'confirm', hidden: true },
        el('span', { id: 'confirm-text' }), ' ',
        el('button', { type: 'button', id: 'confirm-yes', class: 'primary' }, 'Confirm'), ' ',
        el('button', { type: 'button', id: 'confirm-no' }, 'Cancel')),
      el('p', { id: 'outbox-result', class: 'muted' }),
      el('div', { id: 'outboxes' }, 'loading…')));
  $('confirm-no').addEventListener('click', () => { $('confirm').hidden = true; });
  refreshOutboxes();
  state.timers.push(setInterval(refreshOutboxes, 2000));
}

// Asks before a change: `what` is shown, `run` is called on Confirm only.
function confirmThen(what, run) {
  $('confirm-text').textContent = what;
  $('confirm').hidden = false;
  $('confirm-yes').onclick = async () => {
    $('confirm').hidden = true;
    await run();
    refreshOutboxes();
  };
}

async function outboxAction(name, action, body, done) {
  const { status, data } = await json('POST', '/outboxes/' + encodeURIComponent(name) + '/' + action, JSON.stringify(body));
  $('outbox-result').textContent = status === 200 ? done(data) : action + ' refused (' + status + '): ' + (data && data.error || '');
}

function retryDead(name, ids) {
  const what = ids ? 'message ' + ids[0] : 'every dead message';
  confirmThen('Make ' + what + ' of outbox ' + name + ' pending again?', () =>
    outboxAction(name, 'retry-dead', ids ? { ids } : { all: true }, d => 'revived ' + d.revived + ' message(s) of ' + name));
}

function discard(name, id) {
  confirmThen('Discard message ' + id + ' of outbox ' + name + ' for good?', () =>
    outboxAction(name, 'discard', { id }, d => d.discarded ? 'discarded ' + id + ' of ' + name : 'no message ' + id + ' in ' + name));
}

function outboxSection(o) {
  if (o.error) return el('div', { class: 'outbox', 'data-outbox': o.name }, el('h3', {}, o.name), el('p', { class: 'bad' }, o.error));
  const counts = el('table', { class: 'counts' },
    el('thead', {}, el('tr', {}, ...['pending', 'in backoff', 'dead', 'oldest pending'].map(h => el('th', {}, h)))),
    el('tbody', {}, el('tr', {},
      el('td', { class: 'num pending' }, count(o.pending)),
      el('td', { class: 'num in-backoff' }, count(o.in_backoff)),
      el('td', { class: 'num dead' }, count(o.dead)),
      el('td', { class: 'num oldest' }, age(o.oldest_pending_age_seconds)))));
  const owners = el('table', { class: 'owners' },
    el('thead', {}, el('tr', {}, ...['partition', 'drained here', 'database session holding it'].map(h => el('th', {}, h)))),
    el('tbody', {}, ...o.partitions.map(p => el('tr', { 'data-partition': p.partition },
      el('td', { class: 'num' }, p.partition),
      el('td', { class: 'here' }, p.this_process ? 'yes' : 'no'),
      el('td', { class: 'mono' }, p.session || '-')))));
  const dead = el('table', { class: 'dead-messages' },
    el('thead', {}, el('tr', {}, ...['id', 'group', 'attempts', 'last error', ''].map(h => el('th', {}, h)))),
    el('tbody', {}, ...o.dead_messages.map(d => el('tr', { 'data-id': d.id },
      el('td', { class: 'num' }, d.id),
      el('td', { class: 'mono' }, d.group_key || '-'),
      el('td', { class: 'num' }, d.attempts),
      el('td', {}, d.last_error || ''),
      el('td', {},
        el('button', { type: 'button', class: 'retry', onclick: () => retryDead(o.name, [d.id]) }, 'retry'), ' ',
        el('button', { type: 'button', class: 'discard', onclick: () => discard(o.name, d.id) }, 'discard'))))));
  return el('div', { class: 'outbox', 'data-outbox': o.name },
    el('h3', {}, 'outbox ', el('span', { class: 'mono' }, o.name), ' ',
      el('button', { type: 'button', class: 'retry-all', disabled: !o.dead, onclick: () => retryDead(o.name, null) }, 'retry all dead')),
    counts, el('h4', {}, 'Partitions'), owners,
    el('h4', {}, 'Dead messages' + (o.dead > o.dead_messages.length ? ' (the first ' + o.dead_messages.length + ')' : '')),
    o.dead_messages.length ? dead : el('p', { class: 'muted' }, 'none'));
}

async function refreshOutboxes() {
  if (state.view !== 'outboxes') return;
  const { status, data } = await json('GET', '/outboxes');
  const box = $('outboxes');
  if (!box) return;
  if (status !== 200) { box.textContent = 'not available (' + status + ')'; return; }
  box.replaceChildren(...(data.length ? data.map(outboxSection) : [el('p', { class: 'muted' }, 'No outbox is open in this process.')]));
}

// ---- the batching sinks ----
function showSinks() {
  state.view = 'sinks';
  $('view').replaceChildren(el('div', { class: 'panel' },
    el('h2', {}, 'Batching sinks'),
    el('p', { class: 'muted' }, 'Per destination: entries waiting for a request, requests in flight, and deliveries refused at once (back-pressure) since the start. A batcher stops when idle; its refusals stay listed.'),
    el('table', { id: 'sinks' },
      el('thead', {}, el('tr', {}, ...['destination', 'batcher', 'queued', 'queued bytes', 'in flight', 'refused', 'by reason'].map(h => el('th', {}, h)))),
      el('tbody'))));
  refreshSinks();
  state.timers.push(setInterval(refreshSinks, 1000));
}

async function refreshSinks() {
  if (state.view !== 'sinks') return;
  const { status, data } = await json('GET', '/sinks');
  const body = document.querySelector('#sinks tbody');
  if (!body || status !== 200) return;
  body.replaceChildren(...data.map(s => el('tr', { 'data-sink': s.sink },
    el('td', { class: 'mono' }, s.sink),
    el('td', {}, s.live ? 'running' : 'idle'),
    el('td', { class: 'num queued' }, s.queued),
    el('td', { class: 'num' }, s.queued_bytes),
    el('td', { class: 'num inflight' }, s.requests_in_flight),
    el('td', { class: 'num refused' }, s.refused),
    el('td', { class: 'muted' }, Object.entries(s.refused_by_reason).filter(([, n]) => n).map(([r, n]) => r + ' ' + n).join(', ') || '-'))));
}

// ---- Mermaid: the route drawn by the vendored renderer, loaded on first use ----
let mermaidLoading = null;
function loadMermaid() {
  if (!mermaidLoading) {
    mermaidLoading = new Promise((done, failed) => {
      const s = el('script', { src: MERMAID_SRC });
      s.addEventListener('load', () => {
        // `strict`: no script or click handler in a drawing; SVG labels (no HTML in a
        // foreignObject), since the drawing is shown as an image.
        window.mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', flowchart: { htmlLabels: false } });
        done(window.mermaid);
      });
      s.addEventListener('error', () => { mermaidLoading = null; failed(new Error('the renderer did not load')); });
      document.head.append(s);
    });
  }
  return mermaidLoading;
}

// Mermaid's SVG as a standalone image: well-formed XML (its labels may hold HTML `<br>`),
// with a size (it says `width="100%"`, which an image cannot take).
function asImage(svgText) {
  const svg = new DOMParser().parseFromString(svgText, 'text/html').querySelector('svg');
  if (!svg) throw new Error('Mermaid gave no SVG');
  const [, , w, h] = (svg.getAttribute('viewBox') || '').split(/[\s,]+/).map(Number);
  if (w > 0 && h > 0) {
    svg.setAttribute('width', String(Math.ceil(w)));
    svg.setAttribute('height', String(Math.ceil(h)));
  }
  svg.removeAttribute('style');
  return new XMLSerializer().serializeToString(svg);
}

let mermaidSeq = 0;
// Draws `text` and shows it as an image: the SVG Mermaid makes carries its own style
// element, which the page's CSP would refuse inline but an image document keeps. (While it
// lays the drawing out in the page, Mermaid also sets inline styles the CSP refuses: the
// browser reports each in its console; the layout does not need them.)
async function renderMermaid(text) {
  const box = $('mermaid-drawing');
  if (!box) return;
  box.textContent = 'drawing…';
  try {
    const mermaid = await loadMermaid();
    const { svg } = await mermaid.render('mermaid-' + (++mermaidSeq), text);
    const img = el('img', { id: 'mermaid-image', alt: 'the route drawn by Mermaid', src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(asImage(svg)) });
    img.setAttribute('data-bytes', String(svg.length));
    if ($('mermaid-drawing')) $('mermaid-drawing').replaceChildren(img);
  } catch (e) {
    if ($('mermaid-drawing')) $('mermaid-drawing').textContent = 'Mermaid could not draw it: ' + (e && e.message || e);
  }
}
