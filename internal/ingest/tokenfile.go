package ingest

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// MinTokenLength is the shortest bearer token a token file may hold.
const MinTokenLength = 16

// TokenFile is the bearer tokens the API server may send, one a line, read
// again when the file changes: a token is rotated without a restart by adding
// the new one as a second line, moving the API server's webhook kubeconfig to
// it, then removing the old line. (A single token swapped in both places at
// once would refuse the batches sent in between with 401, which the API
// server does not retry.)
//
// The file is read at each request, not watched: the API server sends a
// batch a second or so, and reading a small file is cheap beside storing the
// batch; a Secret's symlink swap is seen like any write. A file that does not
// parse (emptied, a token too short) leaves the last good tokens in force.
type TokenFile struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	raw     []byte     // what digests were read from
	digests [][32]byte // SHA-256 of each token
	failed  bool       // the file on disk did not parse (logged once per change)
}

// OpenTokenFile reads path; it fails unless the file holds at least one
// token and every token is MinTokenLength characters or more.
func OpenTokenFile(path string, log *slog.Logger) (*TokenFile, error) {
	if log == nil {
		log = slog.Default()
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	digests, err := parseTokens(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &TokenFile{path: path, log: log, raw: raw, digests: digests}, nil
}

func parseTokens(raw []byte) ([][32]byte, error) {
	var digests [][32]byte
	for line := range strings.Lines(string(raw)) {
		tok := strings.TrimSpace(line)
		if tok == "" {
			continue
		}
		if len(tok) < MinTokenLength {
			return nil, fmt.Errorf("a token is shorter than %d characters", MinTokenLength)
		}
		digests = append(digests, sha256.Sum256([]byte(tok)))
	}
	if len(digests) == 0 {
		return nil, errors.New("no token")
	}
	return digests, nil
}

// current returns the tokens' digests as the file holds them now, or the
// last ones that parsed.
func (f *TokenFile) current() [][32]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	raw, err := os.ReadFile(f.path)
	if err == nil && bytes.Equal(raw, f.raw) {
		f.failed = false
		return f.digests
	}
	if err == nil {
		var digests [][32]byte
		if digests, err = parseTokens(raw); err == nil {
			f.raw, f.digests, f.failed = raw, digests, false
			f.log.Info("audit webhook: the token file changed; accepting its tokens", "file", f.path, "tokens", len(digests))
			return f.digests
		}
	}
	if !f.failed {
		f.failed = true
		f.log.Warn("audit webhook: the token file changed but does not parse; keeping the previous tokens", "file", f.path, "err", err)
	}
	return f.digests
}

// matches compares got's digest with every token's in constant time, so
// neither a token's bytes nor its length nor which one matched leak through
// the time a refusal takes.
func (f *TokenFile) matches(got string) bool {
	d := sha256.Sum256([]byte(got))
	ok := 0
	for _, want := range f.current() {
		ok |= subtle.ConstantTimeCompare(d[:], want[:])
	}
	return ok == 1
}
