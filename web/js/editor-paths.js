// Field paths in a YAML syntax tree (@lezer/yaml): which field the cursor is
// in, and where a field is. Paths are the docs panel's: keys joined by dots,
// list positions left out ("spec.rules.subjects.kind").

function keyText(state, pair) {
  const key = pair.getChild('Key');
  if (!key) return null;
  return state.sliceDoc(key.from, key.to).trim().replace(/^(["'])(.*)\1$/, '$2');
}

/** pathAt returns the path of the field at pos, or '' outside any field. */
export function pathAt(state, tree, pos) {
  const keys = [];
  for (let n = tree.resolveInner(pos, -1); n; n = n.parent) {
    if (n.name === 'Pair') {
      const k = keyText(state, n);
      if (k != null) keys.unshift(k);
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
      const found = v && find(state, v.name === 'BlockMapping' || v.name === 'FlowMapping' || v.name.endsWith('Sequence') ? v : c, segs.slice(1));
      return found == null ? c.from : found;
    }
    // Documents, sequences and their items, tags and anchors: look inside.
    if (c.firstChild && c.name !== 'Key') {
      const found = find(state, c, segs);
      if (found != null) return found;
    }
  }
  return null;
}

/** findPath returns the position of the field path (or its deepest present
 * ancestor) in the text, or null when not even its first key is there. */
export function findPath(state, tree, path) {
  if (!path) return null;
  return find(state, tree.topNode, path.split('.'));
}
