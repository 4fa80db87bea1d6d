package csr

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"
)

// Memo remembers Decode results by the request's content, so a queue page over
// thousands of CSRs does not parse and verify every PKCS#10 signature on every
// view (an ECDSA or RSA verification costs tens of microseconds). spec.request
// is immutable, and Decode is a pure function of it, so an entry never goes
// stale; the memo only bounds its size. Safe for concurrent use.
//
// Requests that decode to the same content share one Request: a kubelet that
// retries keeps its key and subject, but every PKCS#10 it sends is signed
// anew (an ECDSA signature is random), so a storm of 5,000 requests is 5,000
// PEMs of one content, and the queue keeps each pending one decoded (~450
// bytes each: TestMemoSharesRequestsOfOneContent).
type Memo struct {
	max int

	mu      sync.Mutex
	entries map[[sha256.Size]byte]memoEntry
	// byContent is each content's Request (contentKey), cleared with
	// entries.
	byContent map[[sha256.Size]byte]*Request
}

type memoEntry struct {
	req *Request
	err error
}

// NewMemo returns a Memo holding at most size results (at least 1).
func NewMemo(size int) *Memo {
	return &Memo{max: max(size, 1), entries: map[[sha256.Size]byte]memoEntry{}, byContent: map[[sha256.Size]byte]*Request{}}
}

// Decode is Decode(pemBytes), remembered. The returned Request is shared: callers
// must not modify it.
func (m *Memo) Decode(pemBytes []byte) (*Request, error) {
	key := sha256.Sum256(pemBytes)
	m.mu.Lock()
	e, ok := m.entries[key]
	m.mu.Unlock()
	if ok {
		return e.req, e.err
	}
	req, err := Decode(pemBytes)
	var content [sha256.Size]byte
	if req != nil {
		content = contentKey(req)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Dropping everything when full is crude but bounded; a cluster with more
	// distinct requests than max pays the decoding again, nothing else.
	if len(m.entries) >= m.max {
		clear(m.entries)
		clear(m.byContent)
	}
	if req != nil {
		if same, ok := m.byContent[content]; ok {
			req = same
		} else {
			m.byContent[content] = req
		}
	}
	m.entries[key] = memoEntry{req, err}
	return req, err
}

// contentKey is a digest of every field of r, each length-prefixed (a nil
// list apart from an empty one), so that two Requests with one key are equal
// field for field (TestContentKeyCoversEveryField holds the field count).
func contentKey(r *Request) [sha256.Size]byte {
	h := sha256.New()
	str := func(s string) {
		writeLen(h, len(s))
		h.Write([]byte(s))
	}
	list := func(ss []string) {
		if ss == nil {
			writeLen(h, -1)
			return
		}
		writeLen(h, len(ss))
		for _, s := range ss {
			str(s)
		}
	}
	str(r.Subject)
	str(r.CommonName)
	list(r.Organizations)
	list(r.OrganizationalUnit)
	list(r.DNSNames)
	list(r.IPAddresses)
	list(r.EmailAddresses)
	list(r.URIs)
	str(r.PublicKey)
	str(r.KeyAlgorithm)
	writeLen(h, r.KeyBits)
	str(r.SignatureAlgorithm)
	if r.Extensions == nil {
		writeLen(h, -1)
	} else {
		writeLen(h, len(r.Extensions))
	}
	for _, e := range r.Extensions {
		str(e.Name)
		str(e.OID)
		writeBool(h, e.Critical)
	}
	writeBool(h, r.RequestsCA)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

func writeLen(h hash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

func writeBool(h hash.Hash, v bool) {
	if v {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
}

// Len returns how many results the memo holds.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
