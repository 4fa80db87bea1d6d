package auth

import (
	"encoding/json"
	"errors"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
)

// Cookies are sealed as compact JWE (RFC 7516) with go-jose: direct
// encryption with AES-256-GCM (authenticated: a changed byte anywhere,
// header included, fails to open), the key named by its public id ("kid") so
// opening picks it at once, and what the cookie is for ("cdp") in the
// protected header, so a cookie sealed for one purpose (a flash message)
// cannot be replayed as another (a session). go-jose rather than
// gorilla/securecookie: its compact form base64-encodes once where
// securecookie encodes twice (a bearer token fits in a third less cookie),
// GCM is one pass, and go-oidc (the OIDC sign-in) is built on it.
var (
	sealAlgs = []jose.KeyAlgorithm{jose.DIRECT}
	sealEncs = []jose.ContentEncryption{jose.A256GCM}
)

const purposeHeader jose.HeaderKey = "cdp"

// errUnsealed: a value that is not sealed by one of our keys for this purpose.
var errUnsealed = errors.New("not a cookie sealed by this console")

// Seal encrypts v (as JSON) for purpose under the first key. compress
// deflates the JSON first: only for values whose every byte comes from their
// owner (a session), never ones mixing someone else's choice with a secret,
// whose sealed length could then leak the secret (CRIME).
func (k *Keys) Seal(purpose string, v any, compress bool) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	d := k.keys[0]
	opts := (&jose.EncrypterOptions{}).WithHeader(purposeHeader, purpose)
	if compress {
		opts.Compression = jose.DEFLATE
	}
	enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: d.seal, KeyID: d.id}, opts)
	if err != nil {
		return "", err
	}
	obj, err := enc.Encrypt(plain)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

// Open decrypts sealed into v if one of the keys sealed it for purpose.
func (k *Keys) Open(purpose, sealed string, v any) error {
	obj, err := jose.ParseEncryptedCompact(sealed, sealAlgs, sealEncs)
	if err != nil {
		return errUnsealed
	}
	d, ok := k.byID(obj.Header.KeyID)
	if !ok {
		return errUnsealed
	}
	if p, _ := obj.Header.ExtraHeaders[purposeHeader].(string); p != purpose {
		return errUnsealed
	}
	plain, err := obj.Decrypt(d.seal)
	if err != nil {
		return errUnsealed
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return fmt.Errorf("%w: %v", errUnsealed, err)
	}
	return nil
}
