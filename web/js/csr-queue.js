// Keyboard work on the CSR approval queue (/csrs): j/k move through the rows,
// x ticks the current row, a/d approve or deny the ticked rows (or the current
// one when none is ticked), Enter opens the current row. On a storm's group
// row, a and d open the preview of "approve the newest, deny the rest" and of
// "deny all" (where the confirm button has the focus: Enter confirms). The queue works
// without this file: the checkboxes and buttons are a plain form.
//
// It installs itself on import and does nothing on pages without the queue.
// Everything is looked up at the moment of use, because htmx swaps the table
// (filters, tabs, live updates) and the rows are new elements each time.

const QUEUE = '[data-csr-queue]';
const ROW = '[data-csr-row]';
const FORM = 'form[data-csr-bulk]';

// The current row is remembered by name, so it survives a swap of the table.
let currentName = '';

function isTyping(el) {
  if (!el) return false;
  const tag = el.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || el.isContentEditable;
}

function rows(doc) {
  return Array.from(doc.querySelectorAll(`${QUEUE} ${ROW}`));
}

function currentRow(doc) {
  return rows(doc).find((r) => r.dataset.name === currentName) || null;
}

function checkbox(row) {
  return row ? row.querySelector('input[type=checkbox][name=names]') : null;
}

function ticked(doc) {
  const form = doc.querySelector(FORM);
  if (!form) return [];
  return Array.from(doc.querySelectorAll(`input[type=checkbox][name=names][form="${form.id}"]:checked`));
}

function mark(doc, row) {
  rows(doc).forEach((r) => {
    if (r === row) {
      r.dataset.current = '';
    } else {
      delete r.dataset.current;
    }
  });
  if (!row) return;
  currentName = row.dataset.name || '';
  if (!row.hasAttribute('tabindex')) row.setAttribute('tabindex', '-1');
  row.focus({ preventScroll: true });
  row.scrollIntoView({ block: 'nearest' });
}

function move(doc, step) {
  const all = rows(doc);
  if (!all.length) return;
  const i = all.indexOf(currentRow(doc));
  const next = i < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, i + step));
  mark(doc, all[next]);
}

function say(doc, text) {
  const out = doc.querySelector('[data-bulk-count]');
  if (out) out.textContent = text;
}

function updateCount(doc) {
  if (!doc.querySelector(FORM)) return;
  const n = ticked(doc).length;
  if (n === 0) {
    say(doc, 'Tick the pending requests to decide.');
  } else {
    say(doc, `${n} request${n === 1 ? '' : 's'} selected.`);
  }
}

// nameOf is the CSR name in a selection box's value, "<uid>/<name>".
function nameOf(box) {
  return box.value.slice(box.value.indexOf('/') + 1);
}

// confirmFor words the question behaviours.js asks before the form submits.
function confirmFor(action, names) {
  const verb = action === 'approve' ? 'Approve' : 'Deny';
  const what = names.length === 1 ? names[0] : `${names.length} requests`;
  const effect = action === 'approve'
    ? 'Each signer will issue a certificate.'
    : 'A decision cannot be undone.';
  return `${verb} ${what}? ${effect}`;
}

// prepare sets the confirmation for the chosen action, or refuses when
// nothing is ticked (the server would answer "Nothing selected").
function prepare(doc, form, action) {
  const names = ticked(doc).map(nameOf);
  if (!names.length) {
    say(doc, 'Tick a pending request first (x ticks the current row).');
    return false;
  }
  form.dataset.confirm = confirmFor(action, names);
  return true;
}

// actOnGroup opens the preview of a group action when the current row is a
// storm's and nothing is ticked; it reports whether it did.
function actOnGroup(doc, action) {
  const row = currentRow(doc);
  if (!row || !('csrGroup' in row.dataset) || ticked(doc).length) return false;
  const href = action === 'approve' ? row.dataset.approveHref : row.dataset.denyHref;
  if (!href && action === 'approve' && 'byRequester' in row.dataset && row.dataset.denyHref) {
    say(doc, 'These requests name different subjects: open the group (Enter) and tick the ones to approve.');
    return true;
  }
  if (!href) {
    say(doc, 'You may not decide requests of this signer.');
    return true;
  }
  window.location.assign(href);
  return true;
}

function act(doc, action) {
  if (actOnGroup(doc, action)) return;
  const form = doc.querySelector(FORM);
  if (!form) return;
  if (!ticked(doc).length) {
    // Acting on the current row is what a person pressing a/d on it means.
    const box = checkbox(currentRow(doc));
    if (box && !box.disabled) {
      box.checked = true;
      updateCount(doc);
    }
  }
  const button = form.querySelector(`button[data-bulk-action="${action}"]`);
  if (!button || !prepare(doc, form, action)) return;
  form.requestSubmit(button);
}

function onKeydown(doc, e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
  if (!doc.querySelector(QUEUE)) return;
  switch (e.key) {
    case 'j':
      move(doc, 1);
      break;
    case 'k':
      move(doc, -1);
      break;
    case 'x': {
      const box = checkbox(currentRow(doc));
      if (!box || box.disabled) return;
      box.checked = !box.checked;
      updateCount(doc);
      break;
    }
    case 'a':
      act(doc, 'approve');
      break;
    case 'd':
      act(doc, 'deny');
      break;
    case 'Enter': {
      const row = currentRow(doc);
      if (!row || e.target !== row) return;
      const link = row.querySelector('a[href]');
      if (link) link.click();
      break;
    }
    default:
      return;
  }
  e.preventDefault();
}

// The bulk result is the answer to a POST; the address bar should name the
// queue view it came from, so that a reload or a live refresh (which fetches
// the page's own URL) asks for the queue instead of repeating the POST.
function settleAddress(doc) {
  const results = doc.querySelector('[data-testid="bulk-results"][data-return-url]');
  const url = results && results.dataset.returnUrl;
  if (url && url.startsWith('/') && !url.startsWith('//')) window.history.replaceState(window.history.state, '', url);
}

export function installCSRQueue(doc) {
  settleAddress(doc);
  doc.addEventListener('keydown', (e) => onKeydown(doc, e));
  doc.addEventListener('change', (e) => {
    if (e.target.matches && e.target.matches('input[type=checkbox][name=names]')) updateCount(doc);
  });
  // A click on a row (not on its link or box) makes it the current row.
  doc.addEventListener('click', (e) => {
    const button = e.target.closest && e.target.closest(`${FORM} button[data-bulk-action]`);
    if (button) {
      if (!prepare(doc, button.form, button.dataset.bulkAction)) e.preventDefault();
      return;
    }
    const row = e.target.closest && e.target.closest(`${QUEUE} ${ROW}`);
    if (row && !e.target.closest('a, input, button, label')) mark(doc, row);
  });
  doc.addEventListener('htmx:afterSettle', () => {
    const row = currentRow(doc);
    if (row) row.dataset.current = '';
    updateCount(doc);
  });
  updateCount(doc);
}

installCSRQueue(document);
