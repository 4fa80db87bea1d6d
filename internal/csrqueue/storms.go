package csrqueue

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"
)

// Member is a pending CSR whose request decodes, as GroupStorms indexes it.
type Member struct {
	Name      string
	UID       string
	Signer    string
	Subject   string // Request.Subject
	Requester string // spec.username
	Created   time.Time
}

// StormKey is what a retrying client repeats: the signer, the subject and who
// asks. Pending requests that share it are one storm (a kubelet that asks
// again every few minutes because nothing approves it).
type StormKey struct {
	Signer, Subject, Requester string
}

// Storm is the pending requests of one StormKey, two or more.
type Storm struct {
	Key StormKey
	// ID names the storm in URLs ("s-" and a hash of the key): stable while
	// the key is, short whatever the subject's length.
	ID string
	// Members are oldest first (the name breaks ties), so the newest is last.
	Members []Member
}

// Newest is the most recent request of the storm.
func (s *Storm) Newest() Member { return s.Members[len(s.Members)-1] }

// Oldest is the first request of the storm.
func (s *Storm) Oldest() Member { return s.Members[0] }

// Storms indexes pending requests by what they share with others: the storm
// (same signer, subject and requester) and the duplicates (same signer and
// subject, whoever asks). It is built once per change of the CSRs and read by
// every view, so that what a row says about other requests costs a map
// lookup, never a scan; it holds each pending request once, never a list of
// names per request. Read-only after GroupStorms; safe for concurrent reads.
type Storms struct {
	storms   map[string]*Storm // by ID
	byName   map[string]*Storm // member name → its storm (only storms of two or more)
	dupID    map[string]string // pending name → its duplicate set's ID ("d-…")
	uids     map[string]string // pending name → metadata.uid
	dupCount map[string]int    // duplicate set ID → pending requests in it
	pending  int
}

// GroupStorms groups pending requests: O(n) in their number, whatever the shape.
func GroupStorms(pending []Member) *Storms {
	s := &Storms{
		storms:   map[string]*Storm{},
		byName:   map[string]*Storm{},
		dupID:    make(map[string]string, len(pending)),
		uids:     make(map[string]string, len(pending)),
		dupCount: map[string]int{},
		pending:  len(pending),
	}
	// Hash each distinct key once: a storm of 5,000 shares one.
	ids := map[StormKey]string{}
	dups := map[[2]string]string{}
	byKey := map[StormKey]*Storm{}
	for _, p := range pending {
		k := StormKey{p.Signer, p.Subject, p.Requester}
		d := [2]string{p.Signer, p.Subject}
		did, ok := dups[d]
		if !ok {
			did = "d-" + keyHash(p.Signer, p.Subject)
			dups[d] = did
		}
		s.dupID[p.Name] = did
		s.uids[p.Name] = p.UID
		s.dupCount[did]++
		st := byKey[k]
		if st == nil {
			id, ok := ids[k]
			if !ok {
				id = StormID(k)
				ids[k] = id
			}
			st = &Storm{Key: k, ID: id}
			byKey[k] = st
		}
		st.Members = append(st.Members, p)
	}
	for _, st := range byKey {
		if len(st.Members) < 2 {
			continue
		}
		slices.SortFunc(st.Members, func(a, b Member) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Name, b.Name))
		})
		s.storms[st.ID] = st
		for _, m := range st.Members {
			s.byName[m.Name] = st
		}
	}
	return s
}

// StormID is the ID of the storm with the key.
func StormID(k StormKey) string { return "s-" + keyHash(k.Signer, k.Subject, k.Requester) }

// keyHash is 12 hex digits of SHA-256 over the parts: 48 bits, so two keys in
// one cluster collide with odds far below one in a million; a collision would
// only merge two filtered views, and every decision still names each request.
func keyHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// Of returns the storm the pending request name belongs to, or nil when it is
// alone (or not pending).
func (s *Storms) Of(name string) *Storm {
	if s == nil {
		return nil
	}
	return s.byName[name]
}

// ByID returns the storm with the ID, or nil.
func (s *Storms) ByID(id string) *Storm {
	if s == nil {
		return nil
	}
	return s.storms[id]
}

// Duplicates returns how many other pending requests share the signer and
// subject of the pending request name, and the ID of that set ("" for none).
func (s *Storms) Duplicates(name string) (int, string) {
	if s == nil {
		return 0, ""
	}
	id, ok := s.dupID[name]
	if !ok || s.dupCount[id] < 2 {
		return 0, ""
	}
	return s.dupCount[id] - 1, id
}

// InSet reports whether the pending request name is in the storm or the
// duplicate set with the ID (a "group=" filter of the queue).
func (s *Storms) InSet(id, name string) bool {
	if s == nil || id == "" {
		return false
	}
	if st := s.byName[name]; st != nil && st.ID == id {
		return true
	}
	return s.dupID[name] == id && s.dupCount[id] > 1
}

// UID returns the UID of the pending request name as indexed ("" when it
// was not pending): callers holding an object compare it before trusting
// what the index says of that name.
func (s *Storms) UID(name string) string {
	if s == nil {
		return ""
	}
	return s.uids[name]
}

// Len returns how many storms there are.
func (s *Storms) Len() int {
	if s == nil {
		return 0
	}
	return len(s.storms)
}

// collapsed is how many rows fewer the storms make when each is one row.
func (s *Storms) collapsed() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, st := range s.storms {
		n += len(st.Members) - 1
	}
	return n
}
