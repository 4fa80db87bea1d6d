package kube

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Shared lists and field sets: interning (intern.go) shares the strings of a
// CSR's groups and usages, but each decoded object still gets its own slices
// of them (48 bytes for a kubelet's three usages, 32 for its two groups),
// and each managedFields entry its own FieldsV1 holding the interned set:
// at 53,000 CSRs about 5 MiB of identical small allocations. The informers'
// transform points them at one canonical copy per distinct value, as it does
// label maps (labels_shared.go), and for the same reason it is safe: nothing
// modifies a cached object; every writer works on a DeepCopy, which copies
// them, or a live GET.

const (
	// maxSharedLists bounds the canonical values kept per kind of value:
	// they are never dropped (an object gone may come back), so values past
	// the bound are left as decoded, and at most this many small ones kept.
	maxSharedLists = 4096
	// sharedListMaxBytes bounds a list shared: what repeats across objects
	// is a few short values.
	sharedListMaxBytes = 1024
)

// listSet keeps one canonical slice per distinct list of strings.
type listSet[T ~string] struct {
	mu    sync.Mutex
	lists map[string][]T // listKey → the canonical slice
}

func newListSet[T ~string]() *listSet[T] { return &listSet[T]{lists: map[string][]T{}} }

var (
	sharedGroups = newListSet[string]()
	sharedUsages = newListSet[certificatesv1.KeyUsage]()
)

// share returns the canonical slice equal to l (same values, same order),
// or l itself when it is the first of its value or not shared; either way
// its strings are interned. The canonical slice's capacity is its length,
// so that an append by a reader (none does: the cache's objects are
// read-only) could never write into it.
func (s *listSet[T]) share(l []T) []T {
	for i, v := range l {
		l[i] = T(intern(string(v)))
	}
	if len(l) == 0 {
		return l
	}
	key, ok := listKey(l)
	if !ok {
		return l
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.lists[key]; ok {
		return c
	}
	if len(s.lists) >= maxSharedLists {
		return l
	}
	c := slices.Clone(l)[:len(l):len(l)]
	s.lists[key] = c
	return c
}

// listKey spells l as one string, each value prefixed with its length:
// equal lists, equal keys, whatever bytes the values hold.
func listKey[T ~string](l []T) (string, bool) {
	n := 0
	for _, v := range l {
		n += len(v) + 4
	}
	if n > sharedListMaxBytes {
		return "", false
	}
	var b strings.Builder
	b.Grow(n + 8)
	for _, v := range l {
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(string(v))
	}
	return b.String(), true
}

// fieldSets keeps one canonical FieldsV1 per distinct (trimmed, interned)
// managedFields field set.
var fieldSets = struct {
	mu   sync.Mutex
	sets map[string]*metav1.FieldsV1
}{sets: map[string]*metav1.FieldsV1{}}

// shareFields returns the canonical FieldsV1 equal to f, f itself when it
// is the first of its set or past the bound. Call it after the set was
// interned (internManagedFields).
func shareFields(f *metav1.FieldsV1) *metav1.FieldsV1 {
	if f == nil || len(f.Raw) == 0 {
		return f
	}
	fieldSets.mu.Lock()
	defer fieldSets.mu.Unlock()
	if c, ok := fieldSets.sets[string(f.Raw)]; ok {
		return c
	}
	if len(fieldSets.sets) >= maxSharedLists {
		return f
	}
	fieldSets.sets[string(f.Raw)] = f
	return f
}
