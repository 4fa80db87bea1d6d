package edit

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Locate returns the 1-based line in text of the field the API server names in
// an error ("spec.rules[0].subjects[0].kind", ".spec.foo", "metadata.labels[app]"),
// or of its deepest ancestor that exists; 0 when text does not parse or not even
// the first segment is found. It parses text: to place many fields, use one
// Locator.
func Locate(text, path string) int {
	return NewLocator(text).Line(path)
}

// Locator places fields in one text, parsed once: an answer with a thousand
// field causes costs one parse of a multi-megabyte document, not a thousand.
type Locator struct {
	text   string
	root   *yaml.Node
	parsed bool
}

// NewLocator returns a Locator of text; the text is parsed at the first Line.
func NewLocator(text string) *Locator { return &Locator{text: text} }

// parseYAML is yaml.Unmarshal into a node tree; a variable so that a test can
// count the parses.
var parseYAML = func(text string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil || len(doc.Content) == 0 {
		return nil, err
	}
	return doc.Content[0], nil
}

// Line is Locate(text, path) for the Locator's text.
func (l *Locator) Line(path string) int {
	if !l.parsed {
		l.root, _ = parseYAML(l.text)
		l.parsed = true
	}
	if l.root == nil {
		return 0
	}
	node, line := l.root, 0
	for _, seg := range splitPath(path) {
		next, at := child(node, seg)
		if next == nil {
			break
		}
		node, line = next, at
	}
	return line
}

// child finds seg in a mapping (by key) or sequence (by index) and returns the
// value node and the line to point at (the key's line for mappings).
func child(n *yaml.Node, seg string) (*yaml.Node, int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	case yaml.SequenceNode:
		i, err := strconv.Atoi(seg)
		if err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i], n.Content[i].Line
		}
	}
	return nil, 0
}

// splitPath splits a field path into keys and indexes: dots separate keys,
// brackets hold an index or a map key (which may itself contain dots).
func splitPath(path string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				cur.WriteString(path[i+1:])
				i = len(path)
				break
			}
			out = append(out, strings.Trim(path[i+1:i+end], `"'`))
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}
