// Live updates of the CSR approval queue, in two forms:
//   - onQueueView: the tab's stream follows its view (handlers/live_csr_views.go):
//     the server computes the view once per batch for all its tabs and sends,
//     deflated (inflateView), the ops that turn the page into the page now
//     (pages.CSRQueueViewUpdate):
//     remove, insert after, move after, replace, with the rows they carry, and
//     the tabs, count line and pager when they changed. The view is fetched
//     again only when the server says so or the rows differ afterwards.
//   - onQueueRows: a stream beyond the server's bound of open views gets, as
//     every queue did before, the changed rows of the unfiltered queue
//     (pages.CSRQueueLiveRows): removed rows as empty <tr data-live-removed>,
//     and per state tab its count badge and the count line of that tab
//     unfiltered. They are put in place where the page can tell where they go;
//     otherwise the view must be fetched again.
import htmx from './htmx.js';

const FILTERS = ['q', 'signer', 'requester', 'age', 'group', 'selector'];
const SELECT = '[data-testid="row-select"]';

// queueView is the view the table shows, from its data-view-url.
function queueView(table) {
  const p = new URL(table.dataset.viewUrl || window.location.href, window.location.origin).searchParams;
  return {
    state: p.get('state') || '',
    filtered: FILTERS.some((k) => p.get(k)),
    // The findings of a row can change with other CSRs (duplicates): sorted
    // by them, even a row that keeps its state may move.
    movable: p.get('sort') === 'checks',
    paged: Boolean(table.querySelector('[data-testid="pager"]')),
    // A changed row may no longer match the label selector (its labels
    // changed): only the server can tell.
    selected: Boolean(p.get('selector')),
  };
}

// replaceRow swaps a row for its new version, keeping what belongs to this
// page: the selection box only where the page offered one (it depends on the
// user's rights, which the shared fragment does not know), a ticked box if it
// is still the same request (its value carries the UID: a request deleted and
// created again under the name was not what the person ticked), and the
// keyboard's current row.
function replaceRow(cur, row) {
  // A storm's group row: its actions, like a selection box, only where the
  // page offered them.
  if ('csrGroup' in row.dataset && !cur.dataset.denyHref) {
    row.querySelectorAll('[data-testid="group-approve-newest"], [data-testid="group-deny-all"]').forEach((a) => a.parentElement.remove());
    delete row.dataset.approveHref;
    delete row.dataset.denyHref;
  }
  const box = row.querySelector(SELECT);
  const old = cur.querySelector(SELECT);
  if (box && !old) box.remove();
  const same = box && old && box.value === old.value;
  if (same && old.checked) box.checked = true;
  if ('current' in cur.dataset) row.dataset.current = '';
  cur.replaceWith(row);
  htmx.process(row);
  // The bulk form counts the ticked rows (csr-queue.js recounts on a box's change).
  if (box && old && old.checked && !same) box.dispatchEvent(new Event('change', { bubbles: true }));
}

// updateTabs sets the tab badges and, for a view that shows all its rows, the
// count line, from the fragment (the counts of an unfiltered queue).
function updateTabs(table, frag, view) {
  const tabs = frag.querySelector('[data-csr-live-tabs]');
  if (!tabs) return false;
  for (const t of tabs.querySelectorAll('[data-tab]')) {
    const badge = table.querySelector(`[data-testid="tab-${t.dataset.tab}"] [data-testid="tab-count"]`);
    const from = t.querySelector('[data-testid="tab-count"]');
    if (badge && from) {
      badge.className = from.className;
      badge.textContent = from.textContent;
    }
  }
  if (view.paged) return false;
  const line = tabs.querySelector(`[data-tab="${view.state || 'all'}"] [data-testid="list-count"]`);
  const to = table.querySelector('[data-testid="list-count"]');
  if (line && to) to.replaceChildren(...line.childNodes);
  return true;
}

// onQueueRows puts a live update into the queue table and reports whether the
// page must fetch its view again.
export function onQueueRows(table, frag) {
  const view = queueView(table);
  let stale = false;
  let left = false; // a row left the table: the counts it shows changed
  for (const row of frag.querySelectorAll('tr[id]')) {
    const cur = document.getElementById(row.id);
    if (row.hasAttribute('data-live-removed')) {
      if (cur) {
        cur.remove();
        left = true;
      }
    } else if (cur && cur.dataset.state === row.dataset.state) {
      replaceRow(cur, row); // same state: same place in the queue
      stale = stale || view.movable || view.selected;
    } else if (cur && view.state && row.dataset.state !== view.state) {
      cur.remove(); // decided (or issued): it leaves this tab
      left = true;
    } else if (cur || !view.state || row.dataset.state === view.state) {
      stale = true; // moved within this view, or new in it
    }
  }
  if (view.filtered) {
    // The tabs count only what the filters let through.
    stale = stale || left;
  } else if (!updateTabs(table, frag, view)) {
    stale = stale || left;
  }
  if (left && !stale && !table.querySelector('tbody tr')) stale = true; // the server renders the empty state
  if (left) {
    // The bulk form counts the ticked rows (csr-queue.js recounts on a box's change).
    const box = table.querySelector(`input[type=checkbox][name=names]`);
    if (box) box.dispatchEvent(new Event('change', { bubbles: true }));
    else document.dispatchEvent(new Event('htmx:afterSettle'));
  }
  return stale;
}

// mayOffer strips from a row new on the page what this page's user may not
// use: the selection box and a storm's actions are rendered for any user;
// the table names the signers its user may decide for (data-decide-signers)
// and whether they may delete (data-may-delete: a decided row's box).
function mayOffer(table, row, signer) {
  const decide = (table.dataset.decideSigners || '').split(' ').includes(signer);
  if ('csrGroup' in row.dataset) {
    if (!decide) {
      row.querySelectorAll('[data-testid="group-approve-newest"], [data-testid="group-deny-all"]').forEach((a) => a.parentElement.remove());
      delete row.dataset.approveHref;
      delete row.dataset.denyHref;
    }
    return;
  }
  const box = row.querySelector(SELECT);
  const keep = row.dataset.state === 'pending' ? decide : 'mayDelete' in table.dataset;
  if (box && !keep) box.remove();
}

// pageHash is the server's csrPageHash over the table's rows: FNV-1a (32 bits)
// of each row id and a line feed (ids are ASCII).
function pageHash(tbody) {
  let h = 0x811c9dc5;
  const add = (c) => { h = Math.imul(h ^ c, 0x01000193) >>> 0; };
  for (const tr of tbody.rows) {
    for (let i = 0; i < tr.id.length; i++) add(tr.id.charCodeAt(i));
    add(10);
  }
  return h.toString(16);
}

// setCounts puts the view's tab counts, count line and (when sent) pager in place.
function setCounts(table, counts) {
  for (const t of counts.querySelectorAll('[data-tab]')) {
    const badge = table.querySelector(`[data-testid="tab-${t.dataset.tab}"] [data-testid="tab-count"]`);
    if (badge) {
      badge.className = t.className;
      badge.textContent = t.textContent;
    }
  }
  // The count line is a live region: its node stays, its words change.
  const line = counts.querySelector('[data-testid="list-count"]');
  const curLine = table.querySelector('[data-testid="list-count"]');
  if (line && curLine) curLine.replaceChildren(...line.childNodes);
  const sent = counts.querySelector('[data-csr-view-pager]');
  if (!sent) return;
  const pager = sent.querySelector('[data-testid="pager"]');
  const curPager = table.querySelector('[data-testid="pager"]');
  if (curPager && pager) curPager.replaceWith(pager);
  else if (curPager) curPager.remove();
  else if (pager) table.querySelector('[data-testid="data-table"]')?.after(pager);
  if (pager) htmx.process(pager);
}

// dictionaries keeps each table's dictionary decoded (its base64 is read once).
const dictionaries = new WeakMap();

function fromBase64(s) {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

// inflateView turns a view's update (handlers/page.DeflateCSRView:
// "<dictionary id>:<base64 of raw deflate>") into its HTML, or null when the
// table holds another dictionary (the page was rendered by another process).
// A preset dictionary is, to an inflater, bytes that came before: the
// table's dictionary goes first as a stored block, and is cut off the output.
export async function inflateView(table, data) {
  const i = data.indexOf(':');
  if (i < 0 || !table.dataset.liveDict || data.slice(0, i) !== table.dataset.liveDictId) return null;
  let dict = dictionaries.get(table);
  if (!dict) {
    dict = fromBase64(table.dataset.liveDict);
    dictionaries.set(table, dict);
  }
  const n = dict.length;
  const stored = new Uint8Array([0, n & 255, n >> 8, ~n & 255, (~n >> 8) & 255]);
  const stream = new Blob([stored, dict, fromBase64(data.slice(i + 1))]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  const out = new Uint8Array(await new Response(stream).arrayBuffer());
  return new TextDecoder().decode(out.subarray(n));
}

// onQueueView applies one update of the tab's view and reports whether the
// page must fetch its view again.
export function onQueueView(table, frag) {
  const ops = frag.querySelector('[data-csr-view-ops]');
  const tbody = table.querySelector('tbody');
  if (!ops || ops.hasAttribute('data-refetch')) return true;
  const rows = new Map([...frag.querySelectorAll('tr[id]')].map((r) => [r.id, r]));
  let left = false;
  for (const li of ops.children) {
    const { op, key, after, signer } = li.dataset;
    const cur = tbody && tbody.querySelector(`tr[id="${CSS.escape(key)}"]`);
    if (op === 'remove') {
      if (cur) {
        cur.remove();
        left = true;
      }
      continue;
    }
    if (!tbody) return true;
    let el = cur;
    const row = rows.get(key);
    if (row && cur) {
      replaceRow(cur, row);
      el = row;
    } else if (row) {
      mayOffer(table, row, signer);
      el = row;
    } else if (!cur) {
      return true; // a move of a row this page does not have
    }
    if (op === 'replace') continue;
    if (after) {
      const anchor = tbody.querySelector(`tr[id="${CSS.escape(after)}"]`);
      if (!anchor) return true;
      anchor.after(el);
    } else {
      tbody.prepend(el);
    }
    if (el === row && !cur) htmx.process(row);
  }
  const counts = frag.querySelector('[data-csr-view-counts]');
  if (counts) setCounts(table, counts);
  if (left) {
    // The bulk form counts the ticked rows (csr-queue.js recounts on a box's change).
    const box = table.querySelector('input[type=checkbox][name=names]');
    if (box) box.dispatchEvent(new Event('change', { bubbles: true }));
    else document.dispatchEvent(new Event('htmx:afterSettle'));
  }
  return !tbody ? ops.children.length > 0 : pageHash(tbody) !== ops.dataset.hash;
}
