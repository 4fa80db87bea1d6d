package csrqueue

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
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
// machine identity (machineRequester).
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
	// signers are the pending requests per signer (the home page's
	// attention items read them).
	signers []SignerPending
}

// SignerPending is one signer's pending requests: how many, and the oldest.
type SignerPending struct {
	Signer string
	Count  int
	Oldest Member
}

// GroupStorms groups pending requests: O(n) in their number, whatever the
// shape. A machine identity with RequesterStormMin or more pending requests
// for one signer, under two subjects or more, is one requester storm holding all of
// them (its retry storms included: one row for the runaway client, not one
// per name it tried); otherwise requests sharing signer, subject and requester
// are one retry storm.
func GroupStorms(pending []Member) *Storms {
	// The maps are sized for the worst case (every request its own subject,
	// as in a requester storm) once, not grown: growing them step by step
	// was half of this function's time at 8,000 pending requests, and it
	// runs after every change to the pending requests.
	n := len(pending)
	s := &Storms{
		storms:   map[string]*Storm{},
		byName:   make(map[string]*Storm, n),
		dupID:    make(map[string]string, n),
		uids:     make(map[string]string, n),
		dupCount: make(map[string]int, n),
		pending:  n,
	}
	dups := make(map[[2]string]string, n)
	byKey := make(map[StormKey]*Storm, n)
	// byRequester counts, per signer and requester, the requests and the
	// retry-storm keys (one per subject) they fall in.
	type requesterTally struct {
		requests int
		keys     []StormKey
	}
	byRequester := map[[2]string]*requesterTally{}
	signerAt := map[string]int{}
	for _, p := range pending {
		if i, ok := signerAt[p.Signer]; ok {
			sp := &s.signers[i]
			sp.Count++
			if p.Created.Before(sp.Oldest.Created) {
				sp.Oldest = p
			}
		} else {
			signerAt[p.Signer] = len(s.signers)
			s.signers = append(s.signers, SignerPending{Signer: p.Signer, Count: 1, Oldest: p})
		}
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
			// Its ID is hashed only if it is kept (two requests or more):
			// a requester storm of 3,000 subjects hashes none of them.
			st = &Storm{Key: k, Subjects: 1}
			byKey[k] = st
			r := [2]string{p.Signer, p.Requester}
			if byRequester[r] == nil {
				byRequester[r] = &requesterTally{}
			}
			byRequester[r].keys = append(byRequester[r].keys, k)
		}
		st.Members = append(st.Members, p)
		byRequester[[2]string{p.Signer, p.Requester}].requests++
	}
	// A requester storm takes the retry storms (and single requests) of its
	// requester and signer into one.
	for r, t := range byRequester {
		if t.requests < RequesterStormMin || len(t.keys) < 2 || !machineRequester(r[1]) {
			continue
		}
		k := StormKey{Signer: r[0], Requester: r[1]}
		rs := &Storm{Key: k, ByRequester: true, Subjects: len(t.keys), ID: RequesterStormID(r[0], r[1]),
			Members: make([]Member, 0, t.requests)}
		for _, sk := range t.keys {
			rs.Members = append(rs.Members, byKey[sk].Members...)
			delete(byKey, sk)
		}
		byKey[k] = rs
	}
	for _, st := range byKey {
		if len(st.Members) < 2 {
			continue
		}
		slices.SortFunc(st.Members, func(a, b Member) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Name, b.Name))
		})
		if st.ID == "" {
			st.ID = StormID(st.Key)
		}
		s.storms[st.ID] = st
		for _, m := range st.Members {
			s.byName[m.Name] = st
		}
	}
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

// Signers are the pending requests per signer, in the order their first
// request came in GroupStorms' input (requests whose spec.request does not decode are not
// counted: the storm index leaves them out). Shared: do not modify.
func (s *Storms) Signers() []SignerPending {
	if s == nil {
		return nil
	}
	return s.signers
}

// All returns the storms (in no particular order).
func (s *Storms) All() []*Storm {
	if s == nil {
		return nil
	}
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
