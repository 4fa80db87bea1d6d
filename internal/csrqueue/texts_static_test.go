package csrqueue

import (
	"testing"
	"unsafe"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStaticMatchesTheWholeText: the filter finds in the kept parts of a
// request's text (its name's line, Static's own and shared lines) exactly
// what it found in the one text they make, a needle across lines included;
// and requests with the same shared lines keep one copy of them.
func TestStaticMatchesTheWholeText(t *testing.T) {
	mk := func(name string) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/signer", Username: "Alice"},
		}
	}
	a, b := mk("csr-a"), mk("csr-b")
	env := Checks{}
	fa, fb := &facts{slot: uint8(slotOf(Approved))}, &facts{slot: uint8(slotOf(Approved))}
	fa.staticMatches(a, env, benchWords{}, "x")
	// the text the queue kept as one string before
	whole := "csr-a\n" + fa.own + fa.shared
	if want := "example.com/signer\nalice\napproved\n"; fa.own == "" || fa.shared != want {
		t.Fatalf("kept %q + %q; want the subject's line (a decoding error here) and %q", fa.own, fa.shared, want)
	}
	for i := range whole {
		for j := i + 1; j <= len(whole); j++ {
			needle := whole[i:j]
			if !fa.staticMatches(a, env, benchWords{}, needle) {
				t.Fatalf("%q is in the text but did not match", needle)
			}
		}
	}
	for _, needle := range []string{"csr-b", "a\n" + fa.own + "example.com/signer\nbob", "signer\nalice\ndenied", "csr-a\nx"} {
		if fa.staticMatches(a, env, benchWords{}, needle) {
			t.Errorf("%q is not in the text but matched", needle)
		}
	}
	fb.staticMatches(b, env, benchWords{}, "x")
	if fa.shared != fb.shared || unsafeData(fa.shared) != unsafeData(fb.shared) {
		t.Errorf("shared lines %q and %q are not one copy", fa.shared, fb.shared)
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// TestEntrySize: the queue keeps one entry, its facts inside, per CSR
// (53,000 at the page benchmark's shapes); 112 bytes is an allocator size
// class, the next is 128 (an entry and its facts apart were 48 + 128).
func TestEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 112 {
		t.Errorf("an entry takes %d bytes, more than 112", n)
	}
}
