package csrqueue

import (
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// TestFindingTextInterned: the queue keeps the findings' text of every CSR
// (issue 27 point 3: 50,000 of them, most with the same findings); requests
// with the same findings share one copy of it.
func TestFindingTextInterned(t *testing.T) {
	// A request for longer than its signer issues: a finding that needs no
	// decodable request.
	checks := Checks{Decode: csr.Decode, Transient: csr.Decode, MaxDuration: map[string]time.Duration{"example.com/x": time.Hour}}
	twoDays := int32(2 * 24 * 3600)
	text := func(name string) (string, *facts) {
		c := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       certificatesv1.CertificateSigningRequestSpec{Request: []byte("not a request"), SignerName: "example.com/x", ExpirationSeconds: &twoDays},
		}
		f := &facts{state: Pending}
		got, _ := f.checkedText(c, checks, benchWords{})
		return got, f
	}
	a, fa := text("a")
	b, fb := text("b")
	if a == "" || a != b {
		t.Fatalf("findings' text %q and %q, want the same, not empty", a, b)
	}
	if fa.findingText != fb.findingText {
		t.Error("two requests with the same findings keep two copies of their text")
	}
}
