package auth

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MinKeyBytes is the least secret a session key may hold (AES-256's key size).
const MinKeyBytes = 32

// Keys are the secrets that seal cookies and sign CSRF tokens. Replicas that
// share them accept each other's cookies and forms. The first key seals and
// signs; every key opens and verifies, so a key can be rotated without
// signing anyone out:
//
//  1. add the new key as a later line and roll the replicas (all open it);
//  2. move it to the first line and roll again (it seals from now on);
//  3. after the session lifetime (8 h), drop the old key.
//
// Each key's secret is never used directly: HKDF derives one key for sealing
// and one for CSRF tokens (so the two uses cannot be confused) and a public key
// id that tells a sealed cookie's key without trying each.
type Keys struct {
	keys []derivedKey
}

type derivedKey struct {
	id   string // public: names the key in a sealed cookie's header
	seal []byte // AES-256-GCM
	csrf []byte // HMAC-SHA256
}

// RandomKeys returns one fresh random key: what one process without
// --session-keys uses (restarting it signs everyone out, as local mode wants).
func RandomKeys() *Keys {
	k, err := newKeys([][]byte{randomKey(MinKeyBytes)})
	if err != nil {
		panic(err) // HKDF of a 32-byte secret cannot fail
	}
	return k
}

// ParseKeys reads keys from text: one base64 secret (standard or URL
// alphabet, padded or not) of at least MinKeyBytes per line, the first line
// sealing. Blank lines and lines starting with # are skipped. Generate one
// with `head -c 32 /dev/urandom | base64`.
func ParseKeys(text []byte) (*Keys, error) {
	var secrets [][]byte
	for i, line := range bytes.Split(text, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		b, err := decodeBase64(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: not base64: %w", i+1, err)
		}
		if len(b) < MinKeyBytes {
			return nil, fmt.Errorf("line %d: a key needs at least %d random bytes, this one has %d", i+1, MinKeyBytes, len(b))
		}
		secrets = append(secrets, b)
	}
	if len(secrets) == 0 {
		return nil, errors.New("no key in it")
	}
	return newKeys(secrets)
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// LoadKeys reads keys from path: a file (ParseKeys), or a directory such as
// a mounted Secret, whose files are read in name order as one text (so the
// first line of the first file seals). Hidden entries are skipped: a mounted
// Secret keeps its data under ..data and timestamped ..<date> directories
// next to the symlinks named by its keys.
func LoadKeys(path string) (*Keys, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		k, err := ParseKeys(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var all []byte
	for _, n := range names {
		p := filepath.Join(path, n)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue // a dangling link or a subdirectory holds no key
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		all = append(append(all, b...), '\n')
	}
	k, err := ParseKeys(all)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

func newKeys(secrets [][]byte) (*Keys, error) {
	k := &Keys{}
	seen := map[string]bool{}
	for _, s := range secrets {
		id, err := hkdf.Key(sha256.New, s, nil, "clusterdesk key id v1", 8)
		if err != nil {
			return nil, err
		}
		seal, err := hkdf.Key(sha256.New, s, nil, "clusterdesk cookie seal v1 A256GCM", 32)
		if err != nil {
			return nil, err
		}
		csrf, err := hkdf.Key(sha256.New, s, nil, "clusterdesk csrf v1 HS256", 32)
		if err != nil {
			return nil, err
		}
		d := derivedKey{id: hex.EncodeToString(id), seal: seal, csrf: csrf}
		if seen[d.id] {
			continue // the same key twice
		}
		seen[d.id] = true
		k.keys = append(k.keys, d)
	}
	return k, nil
}

// Len is the number of keys.
func (k *Keys) Len() int { return len(k.keys) }

// ID is the public id of the sealing key (for logs: which key replicas seal with).
func (k *Keys) ID() string { return k.keys[0].id }

func (k *Keys) byID(id string) (derivedKey, bool) {
	for _, d := range k.keys {
		if d.id == id {
			return d, true
		}
	}
	return derivedKey{}, false
}
