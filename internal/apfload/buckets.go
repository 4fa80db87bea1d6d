package apfload

import (
	"bytes"
	"strconv"
)

// bucketSums adds up the webhook latency histogram's bucket lines as they are
// read. They are most of the kept text (500 webhooks × 4 operations × 2
// outcomes × 9 bounds); buffering them for expfmt cost ~100 MB of
// allocations per scrape at that shape. Only lines of the simplest shape
// take this path; any other (an escaped label value, an unusual number, no
// # TYPE histogram line before it) goes to expfmt with the rest, so results
// and errors stay expfmt's (TestBucketSumsAgreeWithExpfmt).
type bucketSums struct {
	typed bool // the # TYPE line saying the family is a histogram was seen
	hooks map[WebhookKey]*[]Bucket
	// last is the webhook of the previous line: consecutive lines are the
	// same webhook's bounds, so its key's strings are made once per run.
	last    WebhookKey
	lastSum *[]Bucket
}

var (
	bucketPrefix  = []byte(webhookDuration + "_bucket{")
	histogramType = []byte("# TYPE " + webhookDuration + " histogram")
)

// add takes line if it is a bucket line of the simple shape, and reports
// whether it did.
func (s *bucketSums) add(line []byte) bool {
	if !s.typed || !bytes.HasPrefix(line, bucketPrefix) {
		return false
	}
	name, typ, le, rest, ok := bucketLabels(line[len(bucketPrefix):])
	if !ok || len(name) == 0 {
		return false // expfmt decides (and an unnamed series is skipped there)
	}
	count, ok := sampleValue(rest)
	if !ok {
		return false
	}
	bound, err := parseBound(le)
	if err != nil {
		return false
	}
	if s.lastSum == nil || string(name) != s.last.Name || string(typ) != s.last.Type {
		s.last = WebhookKey{Type: string(typ), Name: string(name)}
		s.lastSum = s.hooks[s.last]
		if s.lastSum == nil {
			s.lastSum = new([]Bucket)
			s.hooks[s.last] = s.lastSum
		}
	}
	*s.lastSum = addBucket(*s.lastSum, bound, count)
	return true
}

// bucketLabels reads `k="v",...}` and returns the name, type and le values
// and what follows the closing brace. Label names must be plain identifiers
// and values free of backslashes, or ok is false.
func bucketLabels(b []byte) (name, typ, le, rest []byte, ok bool) {
	seenLe := false
	for {
		if len(b) > 0 && b[0] == '}' {
			return name, typ, le, b[1:], seenLe
		}
		i := 0
		for i < len(b) && isLabelByte(b[i], i == 0) {
			i++
		}
		if i == 0 || i+1 >= len(b) || b[i] != '=' || b[i+1] != '"' {
			return nil, nil, nil, nil, false
		}
		key := b[:i]
		b = b[i+2:]
		j := bytes.IndexByte(b, '"')
		if j < 0 || bytes.IndexByte(b[:j], '\\') >= 0 {
			return nil, nil, nil, nil, false
		}
		val := b[:j]
		switch string(key) {
		case "name":
			if name != nil {
				return nil, nil, nil, nil, false // a repeated label is expfmt's to refuse
			}
			name = val
		case "type":
			if typ != nil {
				return nil, nil, nil, nil, false
			}
			typ = val
		case "le":
			if seenLe {
				return nil, nil, nil, nil, false
			}
			le, seenLe = val, true
		}
		b = b[j+1:]
		if len(b) > 0 && b[0] == ',' {
			b = b[1:]
		}
	}
}

func isLabelByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

// sampleValue reads " <count>" (a timestamp after it is left to expfmt): a
// non-negative number as expfmt's text parser reads it.
func sampleValue(b []byte) (float64, bool) {
	if len(b) < 2 || b[0] != ' ' || bytes.IndexAny(b[1:], " \t") >= 0 {
		return 0, false
	}
	v, err := parseBound(b[1:])
	if err != nil || !(v >= 0) {
		return 0, false
	}
	return v, true
}

// parseBound parses a number as expfmt does (strconv.ParseFloat, no hex
// floats or underscores), without allocating.
func parseBound(b []byte) (float64, error) {
	if bytes.ContainsAny(b, "pP_") {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(string(b), 64)
}
