// Keyboard shortcuts every page has: ? opens the list of all shortcuts (a
// <dialog> rendered by the server, views/layout/tools.templ), and "g" then a
// letter goes to a page. The letters are not here: every link that has one
// carries it as data-shortcut="g c" (views/layout/shortcuts.go), so the links,
// the dialog and this file cannot disagree.
//
// The listener runs in the capture phase, before the CSR queue's own keys
// (csr-queue.js, which honours defaultPrevented): after "g", "d" means
// "go to CSI drivers", not "deny".

const DIALOG = '#shortcuts-dialog';
const SEQUENCE_MS = 1500;

let pending = '';
let pendingTimer = 0;

// A focused checkbox or button takes no letters, so the keys still work there.
const NOT_TEXT = ['checkbox', 'radio', 'button', 'submit', 'reset'];

function isTyping(el) {
  if (!el) return false;
  const tag = el.tagName;
  if (tag === 'INPUT') return !NOT_TEXT.includes(el.type);
  return tag === 'TEXTAREA' || tag === 'SELECT' || el.isContentEditable;
}

function openDialog(doc) {
  const dialog = doc.querySelector(DIALOG);
  if (dialog && !dialog.open) dialog.showModal();
}

function onKeydown(doc, e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
  if (doc.querySelector('dialog[open]')) return; // the dialog's own keys (Esc, Tab)
  if (pending) {
    const seq = `${pending} ${e.key}`;
    pending = '';
    clearTimeout(pendingTimer);
    const link = Array.from(doc.querySelectorAll('a[data-shortcut]')).find((a) => a.dataset.shortcut === seq);
    if (link) {
      e.preventDefault();
      window.location.assign(link.href);
    }
    return;
  }
  if (e.key === '?') {
    e.preventDefault();
    openDialog(doc);
  } else if (e.key === 'g' && doc.querySelector('a[data-shortcut^="g "]')) {
    e.preventDefault();
    pending = 'g';
    pendingTimer = setTimeout(() => { pending = ''; }, SEQUENCE_MS);
  }
}

// A click on the backdrop (outside the dialog's box) closes it.
function onClick(doc, e) {
  const open = e.target.closest && e.target.closest('[data-shortcuts-open]');
  if (open) {
    openDialog(doc);
    return;
  }
  const dialog = doc.querySelector(DIALOG);
  if (dialog && e.target === dialog) {
    const r = dialog.getBoundingClientRect();
    const inside = e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
    if (!inside) dialog.close();
  }
}

export function installShortcuts(doc) {
  doc.addEventListener('keydown', (e) => onKeydown(doc, e), true);
  doc.addEventListener('click', (e) => onClick(doc, e));
  // The button works only with this file, so it shows only with it.
  doc.querySelectorAll('[data-shortcuts-open][hidden]').forEach((b) => { b.hidden = false; });
}
