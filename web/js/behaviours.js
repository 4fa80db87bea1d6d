// Small progressive enhancements. No inline handlers exist in the markup
// (the CSP forbids them); everything hangs off data-* attributes here.

const FILTER = '[data-filter-input]';

function isTyping(el) {
  if (!el) return false;
  const tag = el.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || el.isContentEditable;
}

// "/" focuses the filter box, as on GitHub; Escape leaves it.
function onKeydown(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === '/' && !isTyping(e.target)) {
    const input = document.querySelector(FILTER);
    if (input) {
      e.preventDefault();
      input.focus();
      input.select();
    }
  } else if (e.key === 'Escape' && e.target.matches && e.target.matches(FILTER)) {
    e.target.blur();
  }
}

// <form data-confirm="Deny this request?"> asks before it submits. Without
// JavaScript the form simply submits.
function onSubmit(e) {
  const form = e.target;
  if (!(form instanceof HTMLFormElement)) return;
  const question = form.dataset.confirm;
  if (question && !window.confirm(question)) {
    e.preventDefault();
    e.stopImmediatePropagation();
    return;
  }
  if (form.method.toLowerCase() === 'post') {
    // Stop double submits; after the event so the browser still sends the form.
    const buttons = form.querySelectorAll('button[type=submit], button:not([type])');
    setTimeout(() => buttons.forEach((b) => { b.disabled = true; b.dataset.busy = ''; }), 0);
  }
}

// <button data-copy-target="#id" hidden> copies the text of #id. The button
// is hidden in the HTML and revealed here, so it never shows when it cannot work.
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'sr-only';
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('copy refused');
}

function onClick(e) {
  const button = e.target.closest && e.target.closest('[data-copy-target]');
  if (!button) return;
  const source = document.querySelector(button.dataset.copyTarget);
  if (!source) return;
  const label = button.querySelector('[data-copy-label]') || button;
  const idle = label.dataset.idle || (label.dataset.idle = label.textContent);
  copyText(source.textContent).then(
    () => { label.textContent = 'Copied'; },
    () => { label.textContent = 'Copy failed'; },
  ).finally(() => {
    clearTimeout(button._copyTimer);
    button._copyTimer = setTimeout(() => { label.textContent = idle; }, 1500);
  });
}

function reveal(root) {
  root.querySelectorAll('[data-copy-target][hidden]').forEach((b) => { b.hidden = false; });
}

export function install(doc, htmx) {
  doc.addEventListener('keydown', onKeydown);
  doc.addEventListener('submit', onSubmit, true);
  doc.addEventListener('click', onClick);
  // A page restored from the back/forward cache must not keep disabled buttons.
  window.addEventListener('pageshow', (e) => {
    if (e.persisted) doc.querySelectorAll('button[data-busy]').forEach((b) => { b.disabled = false; delete b.dataset.busy; });
  });
  // Runs for the initial page and for every fragment htmx swaps in.
  htmx.onLoad(reveal);
  htmx.onLoad((root) => {
    const table = root.id === 'list-table' ? root : root.querySelector && root.querySelector('#list-table');
    // The same function twice on one element is one listener.
    if (table) table.addEventListener('htmx:beforeSwap', dropAnswerForReplacedTable);
  });
  // htmx does not swap an error answer (a 403, a 500, an expired session's
  // login page), which would leave the page silently stale: load the same URL
  // as a page instead, so the server's error page shows.
  doc.addEventListener('htmx:responseError', (e) => {
    const d = e.detail;
    if (d.requestConfig && d.requestConfig.verb === 'get' && d.pathInfo) {
      window.location.assign(d.pathInfo.finalRequestPath || d.pathInfo.requestPath);
    }
  });
  // Requests htmx sends other than GET carry the CSRF token from the <meta>.
  doc.addEventListener('htmx:configRequest', (e) => {
    if (e.detail.verb === 'get') return;
    const meta = doc.querySelector('meta[name="csrf-token"]');
    if (meta) e.detail.headers['X-CSRF-Token'] = meta.content;
  });
}

// A list asked for with a label selector that does not parse answers 400 with
// the list fragment saying why (handlers/list_selector.go); htmx swaps no
// error response by default, so let this one in.
document.addEventListener('htmx:beforeSwap', (e) => {
  const { xhr, target } = e.detail;
  if (xhr && xhr.status === 400 && target && target.id === 'list-table') {
    e.detail.shouldSwap = true;
    e.detail.isError = false;
  }
});
// Two requests for the list can be in flight at once (a live refetch,
// web/js/live.js, and the filter form's): the first answer replaces the
// table, and the second then fires its events on the detached old one, where
// no listener of the document hears them, so a 400 there was reported as an
// error (CI saw it: a refetch of a selector that does not parse). Each table
// carries its own listener that drops an answer for a table no longer shown
// (swapping into a detached table would show nothing anyway).
function dropAnswerForReplacedTable(e) {
  const { target } = e.detail;
  if (target && !target.isConnected) {
    e.detail.shouldSwap = false;
    e.detail.isError = false;
  }
}

