package present

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// TestLowerLinesKeepsExactBytes: the queue keeps one search text per CSR
// (issue 27 point 3: 50,000 of them), so the text is allocated once at its
// length. A strings.Builder grown by doubling allocated 8+16+…+512 bytes for
// these 326 and kept the last 512; the shapes' heap profile showed 24 MiB of
// them after 100 views.
func TestLowerLinesKeepsExactBytes(t *testing.T) {
	lines := []string{strings.Repeat("x", 253), "cn=bench-user-00001", "example.com/clusterdesk-bench", "system:admin", "approved"}
	want := 0
	for _, l := range lines {
		want += len(l) + 1
	}
	if got := lowerLines(append([]string(nil), lines...)...); len(got) != want || got != strings.Join(lines, "\n")+"\n" {
		t.Fatalf("lowerLines = %q", got)
	}
	const n = 1000
	args := make([][]string, n)
	for i := range args {
		args[i] = append([]string(nil), lines...)
	}
	kept := make([]string, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		kept[i] = lowerLines(args[i]...)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	// 352 is the Go allocator's size class that holds the 326 bytes.
	if perCall := (after.TotalAlloc - before.TotalAlloc) / n; perCall > 352 {
		t.Errorf("lowerLines allocated %d bytes a call for %d bytes of text, want at most 352", perCall, want)
	}
}

// TestMomentIsTheCellsText holds the filter's text of the age and state
// cells (Moment, built without the cells) equal to the cells' own text.
func TestMomentIsTheCellsText(t *testing.T) {
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	created := []metav1.Time{{}, metav1.NewTime(now.Add(-90 * time.Second)), metav1.NewTime(now.Add(-50 * time.Hour))}
	decided := []time.Time{{}, now.Add(-5 * time.Minute), now.Add(-400 * 24 * time.Hour)}
	for _, state := range []string{CSRPending, CSRApproved, CSRDenied, CSRIssued, CSRFailed} {
		for _, cr := range created {
			for _, d := range decided {
				c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: cr}}
				age, wait := CSRQueueWords{}.Moment(c, state, d, now)
				ageC, _ := ageCell(cr, now)
				if st := stateCell(state, d, now); age != ageC.Text || wait != st.Text {
					t.Errorf("%s created %v decided %v: Moment %q, %q; cells %q, %q", state, cr, d, age, wait, ageC.Text, st.Text)
				}
			}
		}
	}
}

// TestStaticIsTheRowsText: the queue searches a row's name line, then
// Static's own and shared lines; together they are the lines the row shows
// (subject, signer, requester, duration, status), lower-cased, as the one
// text the queue kept per CSR before it kept the shared lines once.
func TestStaticIsTheRowsText(t *testing.T) {
	secs := int32(3600)
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "Example.com/Signer", Username: "Alice@Example.com", ExpirationSeconds: &secs},
	}
	for _, tc := range []struct {
		req *csr.Request
		err error
	}{{&csr.Request{Subject: "CN=Alice,O=Team"}, nil}, {nil, errors.New("no PEM block")}} {
		subject, _, _ := csrSubject(tc.req, tc.err)
		dur, _ := requestedDuration(c)
		for _, state := range []string{CSRPending, CSRApproved, CSRIssued} {
			own, shared := CSRQueueWords{}.Static(c, state, tc.req, tc.err)
			want := strings.ToLower(strings.Join([]string{subject, c.Spec.SignerName, c.Spec.Username, dur, stateBadge(state).Text}, "\n") + "\n")
			if own+shared != want || own != strings.ToLower(subject)+"\n" {
				t.Errorf("%s: Static = %q + %q, want %q (own: the subject's line)", state, own, shared, want)
			}
		}
	}
}
