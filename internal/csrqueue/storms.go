package csrqueue

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"
)

// Member is a pending CSR as GroupStorms indexes it (Subject empty for one
// whose request does not decode: addUnparsed).
type Member struct {
	Name      string
	UID       string
	Signer    string
	Subject   string // Request.Subject
	Requester string // spec.username
	Created   time.Time
	// Usages are spec.usages, sorted and joined: a newer request of the
	// storm's key supersedes only one asking for the same usages (NewerTwin).
	Usages string
}

// StormKey is what a retrying client repeats: the signer, the subject and who
// asks. Pending requests that share it are one storm (a kubelet that asks
// again every few minutes because nothing approves it).
type StormKey struct {
	Signer, Subject, Requester string
}

// RequesterStormMin is how many pending requests one machine identity must
// have for one signer, with two or more subjects, to be one requester storm:
// automation gone wrong (a controller asking for a new name on every retry, a
// bootstrap token shared by a fleet) makes thousands. Below it each request
// keeps its own row: a handful of different certificates asked by one client
// (an operator issuing for several services, a few nodes joining with one
// token) is ordinary work a person decides request by request.
const RequesterStormMin = 10

// machineRequester reports whether username is an identity the API server
// gives to software: a service account, a node, a bootstrap token (their
// authenticators fix these prefixes). Only those make requester storms: a
// person (an administrator with kubectl, a user signed in through an IdP) who
// asks for fifty client certificates for fifty colleagues asked for each on
// purpose, and each stays a row of its own. A retry storm is anyone's.
func machineRequester(username string) bool {
	return strings.HasPrefix(username, "system:serviceaccount:") || strings.HasPrefix(username, "system:node:") ||
		strings.HasPrefix(username, "system:bootstrap:")
}

// Storm is the pending requests of one StormKey, two or more; or, for a
// requester storm (ByRequester), every pending request of one requester for
// one signer, RequesterStormMin or more with two subjects or more, from a
// machine identity (machineRequester). A Storm is one version of the storm,
// never modified: a change of its requests makes a new Storm (sharing all but
// O(log n) of its members), so a page may hold one while the index moves on.
type Storm struct {
	// Key is the storm's signer, subject and requester; Subject is "" in a
	// requester storm (its requests differ in it).
	Key StormKey
	// ByRequester marks a requester storm: one requester, one signer, many
	// subjects. A retry storm's requests share the subject as well.
	ByRequester bool
	// Subjects is how many different subjects the requests name (1 for a
	// retry storm).
	Subjects int
	// ID names the storm in URLs ("s-" for a retry storm, "r-" for a
	// requester storm, and a hash of the key): stable while the key is,
	// short whatever the subject's length.
	ID string
	// members are oldest first (the name breaks ties), so the newest is last.
	members *mnode
	n       int
}

// Size is how many requests the storm holds.
func (s *Storm) Size() int { return s.n }

// Newest is the most recent request of the storm: O(log n).
func (s *Storm) Newest() Member { return last(s.members) }

// Oldest is the first request of the storm: O(log n).
func (s *Storm) Oldest() Member { return first(s.members) }

// First are the k oldest requests of the storm, oldest first: O(k + log n).
func (s *Storm) First(k int) []Member {
	k = min(k, s.n)
	return appendFirst(make([]Member, 0, k), s.members, k)
}

// Members are the storm's requests, oldest first: O(n), for what shows or
// decides them all.
func (s *Storm) Members() []Member { return s.First(s.n) }

// Storms indexes pending requests by what they share with others: the storm
// (same signer, subject and requester) and the duplicates (same signer and
// subject, whoever asks). It is kept per change of a pending request
// (storms_kept.go: O(log n) each) and read by every view, so that what a row
// says about other requests costs a map lookup, never a scan, and a view
// after a change walks no pending requests; it holds each pending request
// once, never a list of names per request.
//
// Safe for concurrent use: the changes of one batch (a view's catch-up) are
// made under the write lock and become visible together; the Storms it hands
// out are versions that do not change.
type Storms struct {
	mu      sync.RWMutex
	members map[string]*stormMember
	keys    map[StormKey]*keyGroup
	reqs    map[[2]string]*reqGroup // machine requesters' (signer, requester)
	dups    map[[2]string]*dupSet   // (signer, subject)
	signers map[string]*memberTree  // pending requests per signer, oldest first
	// unparsed are the pending requests whose spec.request does not decode:
	// counted per signer (signers), in no storm (addUnparsed).
	unparsed map[string]*stormMember
	storms   map[string]*Storm // by ID, the current versions
	// collapsed is how many rows fewer the storms make when each is one row.
	collapsed int
	// signerList are the signers' counts with their oldest, in the order of
	// the oldest (as of the last batch).
	signerList []SignerPending
	pending    batchState
	was        wasState
	gen        uint64 // the last memberTree generation given out
	slab       slab   // bulk builds (GroupStorms) allocate in chunks
	bulk       bool   // a bulk build: nothing was before it
	version    uint64 // batches that changed a group (Version)
}

// SignerPending is one signer's pending requests: how many, and the oldest.
type SignerPending struct {
	Signer string
	Count  int
	Oldest Member
}

// GroupStorms groups pending requests from scratch, as the kept index holds
// them after adding each: O(n log n) in their number, whatever the shape. A
// machine identity with RequesterStormMin or more pending requests for one
// signer, under two subjects or more, is one requester storm holding all of
// them (its retry storms included: one row for the runaway client, not one
// per name it tried); otherwise requests sharing signer, subject and
// requester are one retry storm.
func GroupStorms(pending []Member) *Storms {
	s := newStorms(len(pending))
	for _, p := range pending {
		s.add(p)
	}
	s.publish()
	return s
}

// StormID is the ID of the retry storm with the key.
func StormID(k StormKey) string { return "s-" + keyHash(k.Signer, k.Subject, k.Requester) }

// RequesterStormID is the ID of the requester storm of requester for signer.
func RequesterStormID(signer, requester string) string {
	return "r-" + keyHash(signer, requester)
}

// IDsOf are the IDs of the storms a pending request with signer, subject and
// requester can be in: its requester's storm and its retry storm (the live
// renderer looks both up, before and after a change: a request moves from
// one to the other when its requester crosses RequesterStormMin).
func IDsOf(signer, subject, requester string) [2]string {
	return [2]string{RequesterStormID(signer, requester), StormID(StormKey{signer, subject, requester})}
}

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
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.of(s.members[name])
}

// of is the current storm of the pending request m (nil: none).
func (s *Storms) of(m *stormMember) *Storm {
	if m == nil {
		return nil
	}
	if r := m.key.req; r != nil && r.pub != nil {
		return r.pub
	}
	return m.key.pub
}

// ByID returns the storm with the ID, or nil.
func (s *Storms) ByID(id string) *Storm {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.storms[id]
}

// Duplicates returns how many other pending requests share the signer and
// subject of the pending request name, and the ID of that set ("" for none).
func (s *Storms) Duplicates(name string) (int, string) {
	if s == nil {
		return 0, ""
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.members[name]
	if m == nil || m.dup.n < 2 {
		return 0, ""
	}
	return m.dup.n - 1, m.dup.id
}

// NewerTwin names the newest pending request of the same signer, subject
// and requester as the pending request name, when it is another one asking
// for the same usages (csrwhy.Superseded): O(log n), from the kept index,
// never a scan of the storm. "" when name is its key's newest, alone, or
// the newest asks for other usages.
func (s *Storms) NewerTwin(name string) string {
	if s == nil {
		return ""
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.members[name]
	if m == nil || m.key == nil || m.key.tree.n < 2 {
		return ""
	}
	n := last(m.key.tree.root)
	if n.Name == name || n.Usages != m.m.Usages {
		return ""
	}
	return n.Name
}

// InSet reports whether the pending request name is in the storm or the
// duplicate set with the ID (a "group=" filter of the queue).
func (s *Storms) InSet(id, name string) bool {
	if s == nil || id == "" {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.members[name]
	if m == nil {
		return false
	}
	if st := s.of(m); st != nil && st.ID == id {
		return true
	}
	return m.dup.id == id && m.dup.n > 1
}

// UID returns the UID of the pending request name as indexed ("" when it
// was not pending): callers holding an object compare it before trusting
// what the index says of that name.
func (s *Storms) UID(name string) string {
	if s == nil {
		return ""
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if m := s.members[name]; m != nil {
		return m.m.UID
	}
	return ""
}

// Signers are the pending requests per signer, the signer whose oldest
// request is oldest first (requests whose spec.request does not decode
// included: they are in no storm, but they wait for a decision as the
// others do). Shared: do not modify.
func (s *Storms) Signers() []SignerPending {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.signerList
}

// All returns the storms (in no particular order): O(storms).
func (s *Storms) All() []*Storm {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Storm, 0, len(s.storms))
	for _, st := range s.storms {
		out = append(out, st)
	}
	return out
}

// Len returns how many storms there are.
func (s *Storms) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.storms)
}

// rowsSaved is how many rows fewer the storms make when each is one row.
func (s *Storms) rowsSaved() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.collapsed
}
