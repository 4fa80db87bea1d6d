// The global search box in the top bar (a plain GET form to /search; this
// file only adds keys): s or Ctrl K (Cmd K) focus it from anywhere, and / does
// too on pages without a list filter (there / belongs to the filter, see
// behaviours.js). Escape leaves the box.

const INPUT = '[data-search-input]';
const FILTER = '[data-filter-input]';

// A focused checkbox or button takes no letters, so the keys still work there.
const NOT_TEXT = ['checkbox', 'radio', 'button', 'submit', 'reset'];

function isTyping(el) {
  if (!el) return false;
  const tag = el.tagName;
  if (tag === 'INPUT') return !NOT_TEXT.includes(el.type);
  return tag === 'TEXTAREA' || tag === 'SELECT' || el.isContentEditable;
}

function focusSearch(doc, e) {
  const input = doc.querySelector(INPUT);
  if (!input) return;
  e.preventDefault();
  input.focus();
  input.select();
}

function onKeydown(doc, e) {
  if (e.defaultPrevented || e.altKey) return;
  if ((e.ctrlKey || e.metaKey) && !e.shiftKey && (e.key === 'k' || e.key === 'K')) {
    // Also while typing elsewhere, as in most consoles; but not in the editor,
    // whose own Ctrl K bindings win.
    if (e.target.closest && e.target.closest('.cm-editor')) return;
    focusSearch(doc, e);
    return;
  }
  if (e.ctrlKey || e.metaKey) return;
  if (e.key === 'Escape' && e.target.matches && e.target.matches(INPUT)) {
    e.target.blur();
    return;
  }
  if (isTyping(e.target) || doc.querySelector('dialog[open]')) return;
  if (e.key === 's' || (e.key === '/' && !doc.querySelector(FILTER))) focusSearch(doc, e);
}

export function installSearch(doc) {
  doc.addEventListener('keydown', (e) => onKeydown(doc, e), true);
}
