package ingest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// A token is rotated without a restart: the new one added as a second line
// is accepted at once beside the old, the old one removed is refused at
// once, and a file emptied or holding a short token (half-written) keeps the
// last good tokens in force.
func TestWebhookTokenFileRotatesWithoutRestart(t *testing.T) {
	const oldToken, newToken = "old-token-of-the-api-server", "new-token-of-the-api-server"
	path := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := OpenTokenFile(path, nil); err == nil {
		t.Fatal("a missing token file opened")
	}
	for _, bad := range []string{"", "\n\n", "short\n", oldToken + "\nshort\n"} {
		write(bad)
		if _, err := OpenTokenFile(path, nil); err == nil {
			t.Fatalf("token file %q opened: want no token, or every token %d characters or more", bad, MinTokenLength)
		}
	}
	write(oldToken + "\n")
	tf, err := OpenTokenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := NewReceiver(Options{Store: newMemStore(), Senders: Senders{TokenFile: tf}})
	if err != nil {
		t.Fatal(err)
	}
	body := eventsBody(t)
	expect := func(step, token string, code int) {
		t.Helper()
		if w := post(rc, token, body); w.Code != code {
			t.Fatalf("%s: token %q… answered %d, want %d", step, token[:min(3, len(token))], w.Code, code)
		}
	}
	expect("at start", oldToken, http.StatusOK)
	expect("at start", newToken, http.StatusUnauthorized)

	write(oldToken + "\n" + newToken + "\n")
	expect("both in the file", oldToken, http.StatusOK)
	expect("both in the file", newToken, http.StatusOK)

	write(newToken + "\n")
	expect("the old one removed", newToken, http.StatusOK)
	expect("the old one removed", oldToken, http.StatusUnauthorized)

	for _, bad := range []string{"", "short\n"} {
		write(bad)
		expect("a file that does not parse", newToken, http.StatusOK)
		expect("a file that does not parse", "short", http.StatusUnauthorized)
	}
	expect("no token", "", http.StatusUnauthorized)
}
