package auth

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func keyLine(b byte) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(rune('a'+b%26)), 32)))
}

func mustKeys(t *testing.T, lines ...string) *Keys {
	t.Helper()
	k, err := ParseKeys([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseKeysRefusesWeakOrMissingKeys(t *testing.T) {
	for name, text := range map[string]string{
		"empty":         "",
		"comments only": "# a comment\n\n",
		"short key":     base64.StdEncoding.EncodeToString([]byte("only-sixteen-byt")),
		"not base64":    "this is not base64 at all!!!",
	} {
		if _, err := ParseKeys([]byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	url := base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("\xff", 40)))
	k := mustKeys(t, "# rotation: newest first", keyLine(1), "", url, keyLine(1))
	if k.Len() != 2 {
		t.Fatalf("%d keys, want 2 (the duplicate counted once)", k.Len())
	}
}

// A mounted Secret: one file per key, the data behind ..data symlinks and a
// timestamped directory, all of which must be skipped.
func TestLoadKeysReadsAMountedSecret(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "..2026_01_01_00_00_00.000000001")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, line := range map[string]string{"1-new": keyLine(2), "2-old": keyLine(1)} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"1-new", "2-old"} {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	k, err := LoadKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k.Len() != 2 || k.ID() != mustKeys(t, keyLine(2)).ID() {
		t.Fatalf("%d keys sealing with %s: want 2, the first file's key sealing", k.Len(), k.ID())
	}
	if _, err := LoadKeys(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path was accepted")
	}
	single := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(single, []byte(keyLine(3)+"\n"+keyLine(2)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := LoadKeys(single); err != nil || k.Len() != 2 || k.ID() != mustKeys(t, keyLine(3)).ID() {
		t.Fatalf("a key file: %v", err)
	}
}

// Rotation: a cookie sealed under the old key opens once the new key seals,
// cookies sealed under the new key do not open where only the old key is
// known, and the same holds for CSRF tokens.
func TestRotationOldKeyOpensNewKeySeals(t *testing.T) {
	old := NewSessionsWithKeys(mustKeys(t, keyLine(1)))
	rotated := NewSessionsWithKeys(mustKeys(t, keyLine(2), keyLine(1)))
	newOnly := NewSessionsWithKeys(mustKeys(t, keyLine(2)))

	oldCookie, oldSess := startSession(t, old, "alice")
	if sess, err := rotated.Check(httptest.NewRecorder(), requestWith(oldCookie)); err != nil || sess.ID != oldSess.ID {
		t.Fatalf("the old key no longer opens: %v", err)
	}
	newCookie, newSess := startSession(t, rotated, "bob")
	if _, err := newOnly.Check(httptest.NewRecorder(), requestWith(newCookie)); err != nil {
		t.Fatalf("the new key did not seal: %v", err)
	}
	if _, err := old.Check(httptest.NewRecorder(), requestWith(newCookie)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a replica without the new key opened its cookie: %v", err)
	}
	if _, err := newOnly.Check(httptest.NewRecorder(), requestWith(oldCookie)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a dropped key still opens: %v", err)
	}

	oldForm := old.CSRFToken(SessionBinding(oldSess))
	if !rotated.ValidCSRF(SessionBinding(oldSess), oldForm) {
		t.Error("a form signed under the old key is refused after rotation")
	}
	if tok := rotated.CSRFToken(SessionBinding(newSess)); tok != newOnly.CSRFToken(SessionBinding(newSess)) || !newOnly.ValidCSRF(SessionBinding(newSess), tok) {
		t.Error("the rotated set does not sign forms with its first key")
	}
	if newOnly.ValidCSRF(SessionBinding(oldSess), oldForm) {
		t.Error("a form signed under a dropped key is accepted")
	}
}

// Replicas sharing keys accept each other's sessions, forms, pre-sessions
// and flash messages.
func TestReplicasSharingKeysAcceptEachOther(t *testing.T) {
	a := NewSessionsWithKeys(mustKeys(t, keyLine(4)))
	b := NewSessionsWithKeys(mustKeys(t, keyLine(4)))
	cookie, sess := startSession(t, a, "alice")
	if got, err := b.Check(httptest.NewRecorder(), requestWith(cookie)); err != nil || got.ID != sess.ID {
		t.Fatalf("replica B refused A's session: %v", err)
	}
	if !b.ValidCSRF(SessionBinding(sess), a.CSRFToken(SessionBinding(sess))) {
		t.Error("replica B refused A's form")
	}
	rec := httptest.NewRecorder()
	binding, err := a.PreSession(rec, httptest.NewRequest("GET", "/login", nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := b.PreSessionBinding(requestWith(rec.Result().Cookies()[0])); !ok || got != binding {
		t.Error("replica B refused A's pre-session")
	}
	rec = httptest.NewRecorder()
	if err := a.SetFlash(rec, SessionBinding(sess), map[string]string{"m": "Approved"}); err != nil {
		t.Fatal(err)
	}
	var flash map[string]string
	if !b.TakeFlash(httptest.NewRecorder(), requestWith(rec.Result().Cookies()[0]), SessionBinding(sess), &flash) || flash["m"] != "Approved" {
		t.Error("replica B lost A's flash message")
	}
}

// Sealed values: a flipped byte anywhere, a value sealed for another purpose,
// or an expired session are refused.
func TestSealedSessionsRefuseTamperingReuseAndAge(t *testing.T) {
	s := NewSessionsWithKeys(mustKeys(t, keyLine(5)))
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	rec := httptest.NewRecorder()
	if _, err := s.StartWith(rec, nil, Session{User: "alice", Creds: Credentials{Token: "tok"}}); err != nil {
		t.Fatal(err)
	}
	c := cookieFrom(t, rec)
	for i := 0; i < len(c.Value); i += 7 {
		if c.Value[i] == '.' || i+1 == len(c.Value) || c.Value[i+1] == '.' {
			continue // a segment's last character may hold unused bits
		}
		bad := *c
		flip := byte('A')
		if c.Value[i] == 'A' {
			flip = 'B'
		}
		bad.Value = c.Value[:i] + string(flip) + c.Value[i+1:]
		if _, err := s.Peek(requestWith(&bad)); !errors.Is(err, ErrNoSession) {
			t.Fatalf("byte %d changed: the cookie still opens (%v)", i, err)
		}
	}
	// A flash message cannot pass for a session, though both are sealed by s.
	frec := httptest.NewRecorder()
	if err := s.SetFlash(frec, "session\x00forged", Session{ID: "forged", User: "admin"}); err != nil {
		t.Fatal(err)
	}
	forged := &http.Cookie{Name: CookieName, Value: frec.Result().Cookies()[0].Value}
	if _, err := s.Peek(requestWith(forged)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a flash cookie opened as a session: %v", err)
	}
	clock = clock.Add(s.Absolute + time.Second)
	if _, err := s.Check(httptest.NewRecorder(), requestWith(c)); !errors.Is(err, ErrExpired) {
		t.Fatalf("a session past its absolute lifetime: %v", err)
	}
}

// A session larger than one cookie is split and opens whole; one larger than
// all parts can hold is refused; leftover parts of a larger session are
// cleared when a smaller one replaces it.
func TestLargeSessionsSplitAcrossCookies(t *testing.T) {
	s := NewSessionsWithKeys(mustKeys(t, keyLine(6)))
	s.Secure = true
	// Random-looking text, so compression cannot shrink it below one part.
	big := base64.RawURLEncoding.EncodeToString(randomKey(5000))
	rec := httptest.NewRecorder()
	if _, err := s.StartWith(rec, nil, Session{User: "oidc-user", Creds: Credentials{IDToken: big[:3500], RefreshToken: big[3500:]}}); err != nil {
		t.Fatal(err)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) < 2 {
		t.Fatalf("%d cookies for a %d-byte session, want it split", len(cookies), len(big))
	}
	r := httptest.NewRequest("GET", "/", nil)
	for _, c := range cookies {
		if len(c.Name)+len(c.Value) > 4096 || !c.Secure || !c.HttpOnly || !strings.HasPrefix(c.Name, "__Host-") {
			t.Fatalf("cookie %s: %d bytes, %+v", c.Name, len(c.Name)+len(c.Value), c)
		}
		r.AddCookie(c)
	}
	sess, err := s.Peek(r)
	if err != nil || sess.Creds.IDToken+sess.Creds.RefreshToken != big {
		t.Fatalf("the split session did not open whole: %v", err)
	}

	// Replaced by a small session: the extra parts are cleared.
	small := httptest.NewRecorder()
	if _, err := s.StartWith(small, r, Session{User: "alice"}); err != nil {
		t.Fatal(err)
	}
	cleared := 0
	for _, c := range small.Result().Cookies() {
		if c.Name != SecureCookieName && c.MaxAge < 0 {
			cleared++
		}
	}
	if cleared != len(cookies)-1 {
		t.Errorf("%d leftover parts cleared, want %d", cleared, len(cookies)-1)
	}

	huge := base64.RawURLEncoding.EncodeToString(randomKey(12000))
	_, err = s.StartWith(httptest.NewRecorder(), nil, Session{User: "x", Creds: Credentials{IDToken: huge}})
	var tooLarge SessionTooLarge
	if !errors.Is(err, ErrSessionTooLarge) || !errors.As(err, &tooLarge) || tooLarge.Bytes <= tooLarge.Limit {
		t.Fatalf("a %d-byte session: %v, want ErrSessionTooLarge", len(huge), err)
	}
}
