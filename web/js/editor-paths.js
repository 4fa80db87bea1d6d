// Field paths in a YAML syntax tree (@lezer/yaml): which field the cursor is
// in, and where a field is. Paths are the docs panel's (internal/crd): keys
// joined by dots, "[]" after a list ("spec.rules[].subjects[].kind"), "{}"
// for the values of a map.

function keyText(state, pair) {
  const key = pair.getChild('Key');
  if (!key) return null;
  return state.sliceDoc(key.from, key.to).trim().replace(/^(["'])(.*)\1$/, '$2');
}

/** pathAt returns the path of the field at pos, or '' outside any field. */
export function pathAt(state, tree, pos) {
  const keys = [];
  let inItem = false;
  for (let n = tree.resolveInner(pos, -1); n; n = n.parent) {
    if (n.name === 'Item') inItem = true;
    if (n.name === 'Pair') {
      const k = keyText(state, n);
      if (k != null) keys.unshift(inItem ? `${k}[]` : k);
      inItem = false;
    }
  }
  return keys.join('.');
}

// value is the node a Pair maps its key to (null for "key:" with nothing).
function value(pair) {
  let last = null;
  for (let c = pair.firstChild; c; c = c.nextSibling) {
    if (c.name !== 'Key' && c.name !== ':' && c.name !== 'Comment') last = c;
  }
  return last;
}

function find(state, node, segs) {
  for (let c = node.firstChild; c; c = c.nextSibling) {
    if (c.name === 'Pair') {
      if (keyText(state, c) !== segs[0]) continue;
      if (segs.length === 1) return c.from;
      const v = value(c);
      const found = v ? find(state, v, segs.slice(1)) : null;
      return found == null ? c.from : found;
    }
    // Documents, mappings, sequences and their items, tags and anchors: look inside.
    if (c.firstChild && c.name !== 'Key') {
      const found = find(state, c, segs);
      if (found != null) return found;
    }
  }
  return null;
}

/** findPath returns the position of the field at path (or of its deepest
 * ancestor in the text), or null when not even its first key is there. The
 * first list item that has the field is taken. */
export function findPath(state, tree, path) {
  const segs = (path || '').split('.').map((s) => s.replace(/(\[\]|\{\})+$/, '')).filter((s) => s !== '');
  if (!segs.length) return null;
  return find(state, tree.topNode, segs);
}

/** docCandidates lists, best first, the docs paths that may describe path:
 * itself, then as the value of a map ("metadata.labels.app" → "metadata.labels{}"),
 * then its ancestors. */
export function docCandidates(path) {
  const out = [];
  const segs = path.split('.');
  for (let i = segs.length; i > 0; i--) {
    const head = segs.slice(0, i);
    out.push(head.join('.'));
    if (i > 1) out.push([...head.slice(0, i - 1)].join('.') + '{}');
  }
  return out;
}
