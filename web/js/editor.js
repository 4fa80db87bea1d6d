// Entry point bundled by esbuild into static/dist/editor.js, loaded only by the
// editor pages. It turns the plain <textarea name="yaml"> into a CodeMirror 6
// YAML editor (line numbers, highlighting, folding, search, error markers) and
// links the field documentation beside it to the text. The form works without
// it: the textarea stays in the form, hidden, and holds the editor's text at
// every change, so what is posted is always what the person sees.
import { EditorState } from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import {
  HighlightStyle, syntaxHighlighting, syntaxTree, foldGutter, foldKeymap, indentOnInput, bracketMatching,
} from '@codemirror/language';
import { search, searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { linter, lintGutter, setDiagnostics } from '@codemirror/lint';
import { yaml } from '@codemirror/lang-yaml';
import { tags } from '@lezer/highlight';
import { pathAt, findPath, docCandidates } from './editor-paths.js';

// The server refuses editor bodies over the form's data-max-bytes; the form
// also carries the starting version (compressed) and a few small fields, so
// count those and keep a margin for the multipart framing.
function maxText(form) {
  const limit = Number(form.dataset.maxBytes) || 1024 * 1024;
  const base = form.querySelector('input[name="base"]');
  return limit - (base ? base.value.length : 0) - 16 * 1024;
}

// Colours come from the page's own tokens, so dark mode follows.
const highlight = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: 'var(--color-accent)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--color-ok-fg)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--color-warning-fg)' },
  { tag: [tags.comment, tags.meta, tags.processingInstruction], color: 'var(--color-muted)', fontStyle: 'italic' },
  { tag: [tags.keyword, tags.typeName, tags.labelName], color: 'var(--color-error-fg)' },
]);

const theme = EditorView.theme({
  '&': {
    height: '36rem', border: '1px solid var(--color-line)', borderRadius: '6px',
    backgroundColor: 'var(--color-canvas)', color: 'var(--color-fg)', fontSize: '12.5px',
  },
  '&.cm-focused': { outline: '2px solid var(--color-accent)', outlineOffset: '-1px' },
  '.cm-scroller': { fontFamily: 'var(--font-mono)', lineHeight: '1.25rem' },
  '.cm-gutters': { backgroundColor: 'var(--color-subtle)', color: 'var(--color-muted)', borderRight: '1px solid var(--color-line-muted)' },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--color-hover)' },
  '.cm-cursor': { borderLeftColor: 'var(--color-fg)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--color-accent-subtle)' },
  '.cm-panels': { backgroundColor: 'var(--color-subtle)', color: 'var(--color-fg)' },
  '.cm-tooltip': { backgroundColor: 'var(--color-canvas)', border: '1px solid var(--color-line)' },
});

// YAML the parser could not read is marked where it breaks, before anything is sent.
function syntaxErrors(view) {
  const found = [];
  syntaxTree(view.state).iterate({
    enter(node) {
      if (node.type.isError && found.length < 20) {
        const line = view.state.doc.lineAt(node.from);
        found.push({ from: line.from, to: line.to, severity: 'error', source: 'YAML', message: 'The YAML cannot be read here.' });
      }
    },
  });
  return found;
}

// The editor's linter: YAML syntax errors, and the server's problems (given
// by server()) as long as they still apply to the text. A linter's result
// replaces every diagnostic, so the server's must be part of it, or its first
// run (300 ms after load) would wipe them out.
function lintWith(server) {
  return linter((view) => [...syntaxErrors(view), ...server()], { delay: 300 });
}

// serverDiagnostics turns the problems the server listed beside the editor
// (each with data-line) into markers on those lines.
function serverDiagnostics(doc, root) {
  const out = [];
  root.querySelectorAll('[data-testid="editor-problem"]').forEach((problem) => {
    const title = problem.querySelector('[data-testid="editor-problem-title"]')?.textContent.trim() || 'Error';
    problem.querySelectorAll('[data-line]').forEach((el) => {
      const n = Number(el.dataset.line);
      if (!n || n > doc.lines) return;
      const line = doc.line(n);
      const text = (el.closest('[data-testid="editor-cause"]') || problem.querySelector('[data-testid="editor-problem-message"]'))?.textContent;
      out.push({ from: line.from, to: line.to, severity: 'error', source: title, message: (text || title).replace(/\s+/g, ' ').trim() });
    });
  });
  // Fields a server-side apply would take from another field manager.
  root.querySelectorAll('[data-testid="apply-conflict-manager"]').forEach((m) => {
    m.querySelectorAll('[data-testid="apply-conflict-field"] [data-line]').forEach((el) => {
      const n = Number(el.dataset.line);
      if (!n || n > doc.lines) return;
      const line = doc.line(n);
      const field = el.closest('[data-testid="apply-conflict-field"]').textContent.replace(/\(line \d+\)/, '').trim();
      out.push({ from: line.from, to: line.to, severity: 'warning', source: 'Server-side apply',
        message: `${field} is owned by field manager ${m.dataset.manager}` });
    });
  });
  return out;
}

function goToLine(view, n) {
  if (!n || n > view.state.doc.lines) return;
  const line = view.state.doc.line(n);
  view.dispatch({ selection: { anchor: line.from }, effects: EditorView.scrollIntoView(line.from, { y: 'center' }) });
  view.focus();
}

// The docs panel: the entry of the field under the cursor is marked (and
// opened and scrolled to), and a click on a field's name moves the cursor to
// that field in the text.
function linkDocs(view, panel) {
  if (!panel) return () => {};
  let current = null;
  panel.addEventListener('click', (e) => {
    const name = e.target.closest && e.target.closest('.sf-name');
    const field = name && name.closest('[data-testid="schema-field"]');
    if (!field) return;
    const pos = findPath(view.state, syntaxTree(view.state), field.dataset.path);
    if (pos == null) {
      field.dataset.notInText = '';
      return;
    }
    view.dispatch({ selection: { anchor: pos }, effects: EditorView.scrollIntoView(pos, { y: 'center' }) });
    view.focus();
  });
  return (state) => {
    const path = pathAt(state, syntaxTree(state), state.selection.main.head);
    let entry = null;
    for (const p of path ? docCandidates(path) : []) {
      entry = panel.querySelector(`[data-testid="schema-field"][data-path="${CSS.escape(p)}"]`);
      if (entry) break;
    }
    panel.dataset.cursorPath = path;
    if (entry === current) return;
    if (current) current.removeAttribute('data-current');
    current = entry;
    if (!entry) return;
    entry.setAttribute('data-current', '');
    for (let d = entry.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
    const head = entry.querySelector(':scope > details > summary, :scope > .sf-leaf') || entry;
    // Scroll the panel only, never the page under the person typing.
    const box = panel.getBoundingClientRect();
    const r = head.getBoundingClientRect();
    if (r.top < box.top || r.bottom > box.bottom) panel.scrollTop += r.top - box.top - box.height / 3;
  };
}

function enhance(form) {
  const area = form.querySelector('textarea[name="yaml"]');
  if (!area || form.dataset.enhanced) return;
  form.dataset.enhanced = '';
  const root = document;
  const tooLarge = form.querySelector('[data-editor-too-large]');
  let onCursor = () => {};
  // What the server said about this text, shown until the text changes.
  let fromServer = [];
  let pristine = true;
  // CodeMirror mounts its styles as a <style> element into a document, which
  // the page's Content-Security-Policy (style-src 'self') blocks; into a shadow
  // root it adopts constructed style sheets instead, which CSP allows. The
  // page's colour variables still reach it: custom properties inherit.
  const host = document.createElement('div');
  host.dataset.testid = 'editor-host';
  const shadow = host.attachShadow({ mode: 'open' });
  const view = new EditorView({
    root: shadow,
    state: EditorState.create({
      doc: area.value,
      extensions: [
        lineNumbers(), highlightActiveLineGutter(), foldGutter(), lintGutter(), history(), drawSelection(),
        indentOnInput(), bracketMatching(), highlightActiveLine(), highlightSelectionMatches(), search({ top: true }),
        yaml(), syntaxHighlighting(highlight), lintWith(() => (pristine ? fromServer : [])), theme,
        EditorState.tabSize.of(2),
        // Tab indents; Escape then Tab leaves the editor (CodeMirror's rule for keyboard users).
        keymap.of([indentWithTab, ...defaultKeymap, ...historyKeymap, ...foldKeymap, ...searchKeymap]),
        EditorView.contentAttributes.of({ 'aria-label': 'YAML', 'data-testid': 'editor-code', spellcheck: 'false', autocapitalize: 'off' }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) {
            // The server's line numbers were for the text it saw.
            pristine = false;
            area.value = u.state.doc.toString();
            if (tooLarge) tooLarge.hidden = true;
          }
          if (u.docChanged || u.selectionSet) onCursor(u.state);
        }),
      ],
    }),
  });
  shadow.appendChild(view.dom);
  area.parentElement.insertBefore(host, area);
  area.hidden = true;
  onCursor = linkDocs(view, root.querySelector('[data-docs]'));
  form.dataset.editorReady = '';

  fromServer = serverDiagnostics(view.state.doc, root);
  view.dispatch(setDiagnostics(view.state, fromServer));
  root.querySelectorAll('[data-testid="editor-results"] [data-line], [data-testid="apply-conflict"] [data-line]').forEach((el) => {
    el.classList.add('cursor-pointer', 'underline');
    el.setAttribute('role', 'button');
    el.tabIndex = 0;
    const go = () => goToLine(view, Number(el.dataset.line));
    el.addEventListener('click', go);
    el.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); } });
  });

  // Before anything is sent: the textarea has the text, and it is not too large.
  form.addEventListener('submit', (e) => {
    area.value = view.state.doc.toString();
    if (new Blob([area.value]).size > maxText(form)) {
      e.preventDefault();
      e.stopImmediatePropagation();
      if (tooLarge) tooLarge.hidden = false;
      // behaviours.js disables the buttons of a submitted form on the next tick.
      setTimeout(() => form.querySelectorAll('button[data-busy]').forEach((b) => { b.disabled = false; delete b.dataset.busy; }), 0);
    }
  }, true);
}

document.querySelectorAll('form[data-editor]').forEach(enhance);
