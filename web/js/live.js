// Live updates: one EventSource per tab on /events (see internal/live and
// handlers/live.go). The server renders every change once and sends HTML; this
// file only puts it in place:
//   <kind>          nav count and list total: replace the elements with the same ids
//   status          the stale-data banner slot (#live-status)
//   <kind>-rows     changed rows of a list: swap by row id, insert, remove
//   csrs-view       the ops of the CSR queue's view this tab shows, deflated (live-csr.js)
//   resync          the page may have missed changes: fetch the list fragment again
//   session-expired the session is over: show the banner it carries, stop
//   too-many-streams this user has the most tabs with live updates (or the server
//                    the most streams it serves): the same
//   job-progress    a background job's progress (a replay): replace by id
//   job-done        the job ended; data is its page, whose outcome replaces the
//                   job's (the stream names the job, ?job=, while the page shows it:
//                   data-live-job on the job's element)
// The page works without it: every page is correct when loaded.
//
// htmx-ext-sse is not used for the connection: it logs every reconnect as a
// console error and offers no hook to tell a resync from a plain swap.
import htmx from './htmx.js';
import { inflateView, onQueueRows, onQueueView } from './live-csr.js';

const TABLE_ID = 'list-table';

function parse(html) {
  const t = document.createElement('template');
  t.innerHTML = html;
  return t.content;
}

// replaceById puts each top-level element of the fragment in place of the page's
// element with the same id. A live region keeps its node (screen readers announce
// changes inside a region, not a region that is replaced).
function replaceById(html) {
  for (const el of [...parse(html).children]) {
    const cur = el.id && document.getElementById(el.id);
    if (!cur) continue;
    if (cur.hasAttribute('aria-live')) {
      cur.replaceChildren(...el.childNodes);
      cur.hidden = el.hidden;
      htmx.process(cur);
    } else {
      cur.replaceWith(el);
      htmx.process(el);
    }
  }
}

// listURL is the view the table shows: the server names it (filters, sort,
// tab and page) in data-view-url; otherwise what the filter form would ask
// for now (its fields, and the sort and tab inputs the fragment carries with
// form="filter-form"). Either is right even where the address bar shows
// something else (a form's POST).
function listURL(form) {
  const table = document.getElementById(TABLE_ID);
  if (table && table.dataset.viewUrl) return table.dataset.viewUrl;
  if (!form) return window.location.pathname + window.location.search;
  const params = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (typeof v === 'string' && v !== '') params.append(k, v);
  const query = params.toString();
  return form.getAttribute('action') + (query ? '?' + query : '');
}

// refetch asks the server for the list fragment of the page's view (its filter
// and sort), as the filter form does. A short random delay spreads the
// requests of many tabs; a filter request under way is left to finish first.
// The view's updates that arrive while the fragment is on its way wait for it
// (viewQueue) and are applied to it: it may be older than some of them.
let refetchTimer = 0;
let viewQueue = null;
function refetch() {
  if (refetchTimer) return;
  refetchTimer = setTimeout(() => {
    refetchTimer = 0;
    const table = document.getElementById(TABLE_ID);
    if (!table) return;
    const form = document.getElementById('filter-form');
    // The filter form names the table its hx-indicator, so htmx marks the
    // table (not the form) while the form's request is under way.
    if (table.classList.contains('htmx-request') || (form && form.classList.contains('htmx-request'))) {
      refetch();
      return;
    }
    // A selection (ticked rows of the CSR queue) survives the new fragment.
    const ticked = [...document.querySelectorAll(`#${TABLE_ID} input[type=checkbox]:checked`)]
      .map((b) => [b.name, b.value]);
    viewQueue = viewQueue || [];
    htmx.ajax('GET', listURL(form), {
      target: '#' + TABLE_ID, select: '#' + TABLE_ID, swap: 'outerHTML',
    }).finally(() => {
      const waiting = viewQueue || [];
      viewQueue = null;
      const table = document.getElementById(TABLE_ID);
      let stale = false;
      for (const frag of waiting) stale = table ? onQueueView(table, frag) : false;
      if (stale) refetch();
    }).then(() => {
      for (const box of document.querySelectorAll(`#${TABLE_ID} input[type=checkbox]`)) {
        if (!box.checked && !box.disabled && ticked.some(([n, v]) => n === box.name && v === box.value)) {
          box.checked = true;
          box.dispatchEvent(new Event('change', { bubbles: true }));
        }
      }
    });
  }, 100 + Math.random() * 400);
}

// showNotice reveals the detail page's "changed / deleted / may be out of date"
// notice, in the variant named.
function showNotice(which) {
  const notice = document.getElementById('live-notice');
  if (!notice) return;
  for (const s of notice.querySelectorAll('[data-live-notice]')) s.hidden = s.dataset.liveNotice !== which;
  notice.hidden = false;
}

// keepChecks carries ticked checkboxes (a selection) over to a row's new version.
function keepChecks(from, to) {
  for (const box of from.querySelectorAll('input[type=checkbox]:checked')) {
    for (const other of to.querySelectorAll('input[type=checkbox]')) {
      if (other.name === box.name && other.value === box.value) other.checked = true;
    }
  }
}

// insertSorted puts a new row in name order (row ids are "row-<kind>-<name>").
function insertSorted(tbody, row) {
  for (const tr of tbody.rows) {
    if (tr.id > row.id) {
      tbody.insertBefore(row, tr);
      return;
    }
  }
  tbody.appendChild(row);
}

function onRows(kind, html) {
  const frag = parse(html);
  const rows = [...frag.querySelectorAll('tr[id]')];
  const object = document.body.dataset.liveObject;
  const mine = object && rows.find((r) => r.id === object);
  if (mine) showNotice(mine.hasAttribute('data-live-removed') ? 'removed' : 'changed');

  const table = document.getElementById(TABLE_ID);
  if (!table || table.dataset.kind !== kind) return;
  // The CSR queue has rows of its own (live-csr.js); another page with rows of
  // its own (FlowSchemas in evaluation order) fetches its fragment instead.
  if (table.hasAttribute('data-csr-queue')) {
    if (onQueueRows(table, frag)) refetch();
    return;
  }
  if (table.dataset.liveRows !== kind) {
    refetch();
    return;
  }
  const tbody = table.querySelector('tbody');
  // Rows can be inserted and removed in place only in the unfiltered list in
  // name order; elsewhere only the server knows where they go.
  const inPlace = table.hasAttribute('data-live-default') && tbody;
  // Under a label selector a changed row may no longer match (its labels
  // changed), which only the server can tell: fetch the view again.
  const selected = new URL(table.dataset.viewUrl || window.location.href, window.location.origin).searchParams.has('selector');
  let stale = false;
  for (const row of rows) {
    const cur = document.getElementById(row.id);
    if (row.hasAttribute('data-live-removed')) {
      if (cur) {
        cur.remove();
        stale = stale || !inPlace;
      }
    } else if (cur) {
      keepChecks(cur, row);
      cur.replaceWith(row);
      htmx.process(row);
      stale = stale || selected;
    } else if (inPlace) {
      insertSorted(tbody, row);
      htmx.process(row);
    } else {
      stale = true;
    }
  }
  if (inPlace) {
    if (tbody.rows.length === 0) stale = true; // the server renders the empty state
    const from = frag.querySelector('[data-live-count] [aria-live]');
    const to = table.querySelector('[data-live-count] [aria-live]');
    if (from && to) to.replaceChildren(...from.childNodes);
  }
  if (stale) refetch();
}

// onView applies the ops of the CSR queue's view (live-csr.js), or keeps them
// for the fragment on its way.
function onView(html) {
  const frag = parse(html);
  const table = document.getElementById(TABLE_ID);
  if (!table || !table.hasAttribute('data-csr-queue')) return;
  if (viewQueue) viewQueue.push(frag);
  else if (onQueueView(table, frag)) refetch();
}

// viewsInOrder applies the view's updates in the order they came: each is
// inflated first (inflateView, asynchronous). One that cannot be (deflated
// against a dictionary this page does not hold) fetches the view.
let viewsInOrder = Promise.resolve();
function onViewData(data) {
  viewsInOrder = viewsInOrder.then(async () => {
    const table = document.getElementById(TABLE_ID);
    if (!table || !table.hasAttribute('data-csr-queue')) return;
    const html = await inflateView(table, data);
    if (html === null) refetch();
    else onView(html);
  }).catch(() => refetch());
}

function onResync(topic) {
  const kind = topic.replace(/-rows(-metrics)?$/, '');
  const table = document.getElementById(TABLE_ID);
  if (table && table.dataset.kind === kind) refetch();
  if (document.body.dataset.liveObject && document.body.dataset.liveRows === kind) showNotice('resync');
}

// jobLiveURL is the stream of the page with its running job's topic, when the
// page shows one (handlers/replay's progress bar), else "".
function jobLiveURL() {
  const job = document.querySelector('[data-live-job]');
  return (job && job.dataset.liveJob) || '';
}

// onJobDone fetches the ended job's page into the outcome its element is in.
function onJobDone(url) {
  const job = document.querySelector('[data-job-url]');
  if (!job || job.dataset.jobUrl !== url) return; // shown already, or another job
  const outcome = job.closest('[id]:not([data-job-url])');
  if (!outcome) return;
  htmx.ajax('GET', url, { target: '#' + outcome.id, select: '#' + outcome.id, swap: 'outerHTML' });
}

function connect(body) {
  const kinds = (body.dataset.liveKinds || '').split(' ').filter(Boolean);
  const rowsKind = body.dataset.liveRows;
  let source = null;
  let retry = 1000;
  let ended = false;

  let url = jobLiveURL() || body.dataset.liveUrl;
  const open = () => {
    const es = new EventSource(url);
    source = es;
    es.addEventListener('open', () => { retry = 1000; });
    // data-live-state tells tests (and curious people) where the stream stands.
    es.addEventListener('hello', () => { body.dataset.liveState = 'connected'; });
    es.addEventListener('error', () => {
      body.dataset.liveState = 'reconnecting';
      // CONNECTING: the browser reconnects by itself (and the server resyncs the
      // page from Last-Event-ID). CLOSED: the server answered with something that
      // is not a stream; try again later.
      if (es.readyState === EventSource.CLOSED && !ended && source === es) {
        setTimeout(open, retry);
        retry = Math.min(retry * 2, 60000);
      }
    });
    for (const k of kinds) es.addEventListener(k, (e) => replaceById(e.data));
    es.addEventListener('status', (e) => replaceById(e.data));
    if (rowsKind) es.addEventListener(rowsKind + '-rows', (e) => onRows(rowsKind, e.data));
    es.addEventListener('csrs-view', (e) => onViewData(e.data));
    es.addEventListener('resync', (e) => onResync(e.data));
    es.addEventListener('job-progress', (e) => replaceById(e.data));
    es.addEventListener('job-done', (e) => onJobDone(e.data));
    for (const ev of ['session-expired', 'too-many-streams']) {
      es.addEventListener(ev, (e) => {
        ended = true;
        body.dataset.liveState = 'ended';
        es.close();
        replaceById(e.data);
      });
    }
  };
  open();
  // The CSR queue's stream names the view its table shows: when a filter, tab,
  // sort or page link swapped in another view, the stream follows it (from
  // the cursor the new table was rendered at).
  // A background job's element (a replay's progress) names the stream with the
  // job's topic: the stream follows it the same way.
  document.addEventListener('htmx:afterSettle', () => {
    const table = document.getElementById(TABLE_ID);
    const job = jobLiveURL();
    const next = job || (table && table.dataset.liveUrl);
    if (!next || ended || !source) return;
    const param = (u, p) => new URL(u, window.location.origin).searchParams.get(p);
    if (param(next, 'view') === param(url, 'view') && param(next, 'job') === param(url, 'job')) return;
    url = next;
    source.close();
    open();
  });
  // Leaving the page (or entering the back/forward cache) ends the stream; a
  // page restored from that cache connects again and resyncs.
  window.addEventListener('pagehide', () => { if (source) source.close(); });
  window.addEventListener('pageshow', (e) => { if (e.persisted && !ended) open(); });
}

if (document.body && document.body.dataset.liveUrl && 'EventSource' in window) connect(document.body);
