package csr

import (
	"crypto/sha256"
	"sync"
)

// Memo remembers Decode results by the request's content, so a queue page over
// thousands of CSRs does not parse and verify every PKCS#10 signature on every
// view (an ECDSA or RSA verification costs tens of microseconds). spec.request
// is immutable, and Decode is a pure function of it, so an entry never goes
// stale; the memo only bounds its size. Safe for concurrent use.
type Memo struct {
	max int

	mu      sync.Mutex
	entries map[[sha256.Size]byte]memoEntry
}

type memoEntry struct {
	req *Request
	err error
}

// NewMemo returns a Memo holding at most size results (at least 1).
func NewMemo(size int) *Memo {
	return &Memo{max: max(size, 1), entries: map[[sha256.Size]byte]memoEntry{}}
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
	m.mu.Lock()
	defer m.mu.Unlock()
	// Dropping everything when full is crude but bounded; a cluster with more
	// distinct requests than max pays the decoding again, nothing else.
	if len(m.entries) >= m.max {
		clear(m.entries)
	}
	m.entries[key] = memoEntry{req, err}
	return req, err
}

// Len returns how many results the memo holds.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
