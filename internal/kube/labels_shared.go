package kube

import (
	"slices"
	"strings"
	"sync"
)

// Shared label maps: a decoded object gets a map of its own for its labels
// even when thousands of objects carry the same few (a controller's or a
// chart's labels on every object it makes). A Go map of one entry takes
// ~340 bytes, more than the rest of a CSR's metadata, so 50,000 labelled CSRs
// held 17 MB of identical maps. The informers' transform points an object's
// labels at one canonical map per distinct set instead. Safe for the same
// reason interning is (intern.go): nothing modifies a cached object, every
// writer works on a DeepCopy (which copies the map) or a live GET.

const (
	// maxSharedLabelSets bounds the canonical maps kept: they are never
	// dropped (an object gone may come back), so a cluster whose every
	// object has labels of its own shares none past the bound, and keeps at
	// most this many small maps.
	maxSharedLabelSets = 4096
	// sharedLabelsMax bounds the sets shared: a few short labels, what
	// repeats across objects; anything larger is left as decoded.
	sharedLabelsMax      = 8
	sharedLabelsMaxBytes = 1024
)

type labelSets struct {
	mu   sync.Mutex
	sets map[string]map[string]string // the set's key (labelSetKey) → its canonical map
}

var sharedLabels = labelSets{sets: map[string]map[string]string{}}

// share returns the canonical map equal to m, m itself (its strings
// interned) when it is the first of its set or not shared.
func (s *labelSets) share(m map[string]string) map[string]string {
	if len(m) == 0 || len(m) > sharedLabelsMax {
		return m
	}
	key, ok := labelSetKey(m)
	if !ok {
		return m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.sets[key]; ok {
		return c
	}
	if len(s.sets) >= maxSharedLabelSets {
		return m
	}
	for k, v := range m {
		m[intern(k)] = intern(v)
	}
	s.sets[key] = m
	return m
}

// labelSetKey spells m as one string, its pairs sorted: equal sets, equal
// keys (a key or value holds no NUL: the API server validates label syntax).
func labelSetKey(m map[string]string) (string, bool) {
	keys := make([]string, 0, len(m))
	n := 0
	for k, v := range m {
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	if n > sharedLabelsMaxBytes {
		return "", false
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	return b.String(), true
}
