/**
 * The playground's plan-and-trace panel: a script and a style sheet the
 * playground page loads from the router (only when `query_plans.enabled`).
 *
 * The script wraps the page's `fetch` before GraphiQL loads. Each operation
 * the user runs (not GraphiQL's own introspection) goes out with
 * `X-Switchyard-Include-Query-Plan`, `X-Switchyard-Include-Trace` and
 * `X-Switchyard-Cache-Debug`; the panel draws `extensions.queryPlan` as a
 * tree and `extensions.trace` as a waterfall, with the response cache's
 * status per fetch when the cache reports it. The extensions the panel asked
 * for are taken out of the response GraphiQL shows, unless the user set
 * those headers themselves.
 *
 * Plain browser JavaScript (no build step): kept as text here so the
 * router's bundle carries it.
 */

/** The panel's script; the page's `<script>` element carries the endpoint in `data-endpoint`. */
export const TRACE_PANEL_SCRIPT = String.raw`(function () {
  'use strict';
  var script = document.currentScript;
  var endpoint = new URL((script && script.dataset.endpoint) || '/graphql', location.href);
  var ASKED = {
    'x-switchyard-include-query-plan': 'queryPlan',
    'x-switchyard-include-trace': 'trace',
    'x-switchyard-cache-debug': 'responseCache'
  };
  var originalFetch = window.fetch.bind(window);

  function isOperation(request, payload) {
    if (request.method !== 'POST') return false;
    var url = new URL(request.url, location.href);
    if (url.origin !== endpoint.origin || url.pathname !== endpoint.pathname) return false;
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return false;
    return payload.operationName !== 'IntrospectionQuery';
  }

  window.fetch = async function (input, init) {
    var request = new Request(input, init);
    var payload;
    try {
      payload = request.method === 'POST' ? JSON.parse(await request.clone().text()) : undefined;
    } catch (error) {
      payload = undefined;
    }
    if (!isOperation(request, payload)) return originalFetch(request);
    var headers = new Headers(request.headers);
    var added = [];
    Object.keys(ASKED).forEach(function (name) {
      if (headers.get(name) !== 'true') {
        headers.set(name, 'true');
        added.push(ASKED[name]);
      }
    });
    var started = performance.now();
    var response = await originalFetch(new Request(request, { headers: headers }));
    if (!/json/.test(response.headers.get('content-type') || '')) return response;
    var text = await response.text();
    var body;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return rebuild(response, text);
    }
    var extensions = body && body.extensions;
    showPanel(operationNameOf(payload), extensions || {}, performance.now() - started);
    if (extensions) {
      added.forEach(function (key) { delete extensions[key]; });
      if (Object.keys(extensions).length === 0) delete body.extensions;
      text = JSON.stringify(body);
    }
    return rebuild(response, text);
  };

  // GraphiQL leaves operationName out for a document of one operation; its name is then the first one written.
  function operationNameOf(payload) {
    if (payload.operationName) return payload.operationName;
    var match = /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/m.exec(typeof payload.query === 'string' ? payload.query : '');
    return match ? match[1] : undefined;
  }

  function rebuild(response, text) {
    var headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(text, { status: response.status, statusText: response.statusText, headers: headers });
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function ms(value) {
    return value < 10 ? value.toFixed(2) + ' ms' : value < 100 ? value.toFixed(1) + ' ms' : Math.round(value) + ' ms';
  }

  var panel = el('section', 'sy-trace');
  panel.id = 'switchyard-trace';
  panel.setAttribute('aria-label', 'Query plan and trace');
  panel.hidden = true;
  var header = el('header', 'sy-trace-header');
  var title = el('h2', 'sy-trace-title', 'Plan & trace');
  var summary = el('span', 'sy-trace-summary');
  var close = el('button', 'sy-trace-close', '\u00d7');
  close.type = 'button';
  close.title = 'Hide the plan and trace';
  close.setAttribute('aria-label', 'Hide the plan and trace');
  close.addEventListener('click', function () { setOpen(false); });
  header.append(title, summary, close);
  var plan = el('div', 'sy-plan');
  plan.append(el('h3', '', 'Query plan'));
  var planTree = el('div', 'sy-plan-tree');
  plan.append(planTree);
  var waterfall = el('div', 'sy-waterfall');
  waterfall.append(el('h3', '', 'Subgraph calls'));
  var rows = el('div', 'sy-rows');
  waterfall.append(rows);
  var content = el('div', 'sy-trace-content');
  content.append(plan, waterfall);
  panel.append(header, content);

  function setOpen(open) {
    panel.hidden = !open;
    document.body.classList.toggle('sy-trace-open', open);
  }

  function mount() {
    document.body.append(panel);
  }
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);

  function showPanel(operationName, extensions, roundTripMs) {
    var trace = extensions.trace;
    summary.textContent = '';
    planTree.textContent = '';
    rows.textContent = '';
    if (!trace) {
      summary.textContent = (operationName || 'anonymous operation') + ': the router sent no trace (query_plans.enabled is off)';
      setOpen(true);
      return;
    }
    var parts = [operationName || 'anonymous operation', 'router ' + ms(trace.durationMs), 'round trip ' + ms(roundTripMs)];
    if (trace.plan) parts.push('plan ' + ms(trace.plan.durationMs) + (trace.plan.cacheHit === true ? ' (plan cache hit)' : trace.plan.cacheHit === false ? ' (plan cache miss)' : ''));
    parts.push(trace.fetches.length + (trace.fetches.length === 1 ? ' subgraph call' : ' subgraph calls'));
    summary.textContent = parts.join(' \u00b7 ');
    drawPlan(extensions.queryPlan);
    drawWaterfall(trace, cacheStatuses(trace.fetches, extensions.responseCache));
    setOpen(true);
  }

  function drawPlan(queryPlan) {
    if (!queryPlan || !queryPlan.node) {
      planTree.append(el('p', 'sy-empty', 'No subgraph is called: the router answered alone.'));
      return;
    }
    var list = el('ul', 'sy-tree');
    list.append(planNode(queryPlan.node));
    planTree.append(list);
  }

  function planNode(node) {
    var item = el('li', 'sy-node sy-node-' + node.kind.toLowerCase());
    if (node.kind === 'Sequence' || node.kind === 'Parallel') {
      item.append(el('span', 'sy-node-label', node.kind));
      var children = el('ul', 'sy-tree');
      node.nodes.forEach(function (child) { children.append(planNode(child)); });
      item.append(children);
    } else if (node.kind === 'Flatten') {
      item.append(el('span', 'sy-node-label', 'Flatten'), el('code', 'sy-node-path', (node.paths || [node.path]).map(function (p) { return p.join('.'); }).join(', ')));
      var inner = el('ul', 'sy-tree');
      inner.append(planNode(node.node));
      item.append(inner);
    } else if (node.kind === 'Fetch') {
      item.dataset.fetchId = String(node.id);
      item.append(
        el('span', 'sy-node-label', 'Fetch #' + node.id),
        el('span', 'sy-subgraph', node.subgraph),
        el('span', 'sy-node-kind', node.fetchKind)
      );
      item.append(el('code', 'sy-selection', node.selectionSet));
    }
    return item;
  }

  // The response cache lists its fetches in the order they started; fetches of one subgraph and kind are matched in that order.
  function cacheStatuses(fetches, responseCache) {
    if (!Array.isArray(responseCache)) return fetches.map(function () { return undefined; });
    var used = responseCache.map(function () { return false; });
    return fetches.map(function (fetch) {
      for (var i = 0; i < responseCache.length; i++) {
        var entry = responseCache[i];
        if (!used[i] && entry.subgraph === fetch.subgraph && entry.kind === fetch.kind) {
          used[i] = true;
          return entry.status;
        }
      }
      return undefined;
    });
  }

  function drawWaterfall(trace, statuses) {
    var total = Math.max(trace.durationMs, 0.001);
    if (trace.plan) rows.append(row('planning', 'plan', trace.plan.startMs, trace.plan.durationMs, total, [trace.plan.cacheHit ? 'plan cache hit' : 'planned'], []));
    if (trace.fetches.length === 0) rows.append(el('p', 'sy-empty', 'No subgraph call.'));
    trace.fetches.forEach(function (fetch, index) {
      var status = statuses[index];
      var chips = [fetch.kind];
      if (status === 'hit') chips.push('cache hit');
      else if (status === 'partial_hit') chips.push('cache partial hit');
      else if (status === 'miss') chips.push('cache miss');
      else if (!fetch.sent) chips.push('answered by the router');
      if (fetch.entities) chips.push(fetch.entities.sent + '/' + fetch.entities.requested + ' sent');
      var state = fetch.errors ? 'error' : status === 'hit' || !fetch.sent ? 'hit' : status === 'partial_hit' ? 'partial' : 'sent';
      var line = row(state, fetch.subgraph + ' #' + fetch.fetchId, fetch.startMs, fetch.durationMs, total, chips, fetch.errors || []);
      line.dataset.fetchId = String(fetch.fetchId);
      line.dataset.subgraph = fetch.subgraph;
      if (status) line.dataset.cache = status;
      rows.append(line);
    });
  }

  function row(state, label, startMs, durationMs, total, chips, errors) {
    var line = el('div', 'sy-row sy-' + state);
    line.append(el('span', 'sy-row-label', label));
    var track = el('div', 'sy-track');
    var bar = el('div', 'sy-bar');
    bar.style.left = Math.min(100, (startMs / total) * 100) + '%';
    bar.style.width = Math.max(0.5, (durationMs / total) * 100) + '%';
    bar.title = label + ': starts at ' + ms(startMs) + ', takes ' + ms(durationMs);
    track.append(bar);
    line.append(track);
    var facts = el('span', 'sy-row-facts');
    facts.append(el('span', 'sy-start', '+' + ms(startMs)), el('span', 'sy-duration', ms(durationMs)));
    chips.forEach(function (chip) { facts.append(el('span', 'sy-chip', chip)); });
    if (errors.length > 0) {
      var error = el('span', 'sy-chip sy-chip-error', errors.length === 1 ? '1 error' : errors.length + ' errors');
      error.title = errors.join('\n');
      facts.append(error);
    }
    line.append(facts);
    if (errors.length > 0) line.append(el('div', 'sy-row-errors', errors.join(' \u2014 ')));
    return line;
  }
})();
`;

/** The panel's styles: a drawer under GraphiQL, which shrinks to make room for it. */
export const TRACE_PANEL_STYLES = `
body.sy-trace-open .graphiql-container { height: calc(100vh - var(--sy-trace-height)); }
:root { --sy-trace-height: 300px; }
.sy-trace { position: fixed; left: 0; right: 0; bottom: 0; height: var(--sy-trace-height); box-sizing: border-box;
  display: flex; flex-direction: column; background: #f6f7f9; color: #1b2333; border-top: 1px solid #c9cfd9;
  font: 13px/1.4 system-ui, -apple-system, 'Segoe UI', sans-serif; z-index: 10; }
.sy-trace[hidden] { display: none; }
.sy-trace-header { display: flex; align-items: center; gap: 12px; padding: 6px 12px; border-bottom: 1px solid #dde2ea; }
.sy-trace-title { font-size: 14px; margin: 0; }
.sy-trace-summary { flex: 1; color: #4a5568; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.sy-trace-close { border: none; background: none; font-size: 18px; cursor: pointer; color: #4a5568; }
.sy-trace-content { flex: 1; display: flex; min-height: 0; }
.sy-trace-content h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #6b7588; margin: 0 0 6px; }
.sy-plan { width: 36%; overflow: auto; padding: 8px 12px; border-right: 1px solid #dde2ea; }
.sy-waterfall { flex: 1; overflow: auto; padding: 8px 12px; }
.sy-tree { list-style: none; margin: 0; padding-left: 14px; border-left: 1px dashed #c9cfd9; }
.sy-plan-tree > .sy-tree { padding-left: 0; border-left: none; }
.sy-node { margin: 3px 0; }
.sy-node-label { font-weight: 600; margin-right: 6px; }
.sy-subgraph { color: #1f5fbf; margin-right: 6px; }
.sy-node-kind, .sy-node-path { color: #6b7588; margin-right: 6px; }
.sy-selection { display: block; color: #4a5568; font-size: 11px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
/* Fixed outer columns: every row's track has the same width, so the bars share one time scale. */
.sy-row { display: grid; grid-template-columns: 140px 1fr 300px; align-items: center; gap: 8px; margin: 4px 0; }
.sy-row-label { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.sy-track { position: relative; height: 14px; background: #e7eaf0; border-radius: 3px; }
.sy-bar { position: absolute; top: 0; bottom: 0; min-width: 3px; border-radius: 3px; background: #2f6fde; }
.sy-planning .sy-bar { background: #8a63d2; }
.sy-hit .sy-bar { background: #2e9e5b; }
.sy-partial .sy-bar { background: #c99a1e; }
.sy-error .sy-bar { background: #d6453d; }
.sy-row-facts { display: flex; gap: 6px; white-space: nowrap; overflow: hidden; color: #4a5568; }
.sy-chip { padding: 0 6px; border-radius: 8px; background: #e1e6ee; }
.sy-chip-error { background: #f6d5d3; color: #9b1c15; }
.sy-row-errors { grid-column: 2 / 4; color: #9b1c15; font-size: 12px; }
.sy-empty { color: #6b7588; margin: 0; }
`;
