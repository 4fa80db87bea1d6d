// Live updates of the CSR approval queue. The server renders each change once
// for every open queue (pages.CSRQueueLiveRows): the changed rows as the queue
// renders them, removed rows as empty <tr data-live-removed>, and per state tab
// its count badge and the count line of that tab unfiltered. This file puts
// them in place where the page can tell where they go, and otherwise says the
// view must be fetched again (only the server knows the position of a new row
// or of one whose state moved it within the view).
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
