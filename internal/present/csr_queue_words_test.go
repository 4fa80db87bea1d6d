package present

import (
	"runtime"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
				age, wait := queueWords{}.Moment(c, state, d, now)
				ageC, _ := ageCell(cr, now)
				if st := stateCell(state, d, now); age != ageC.Text || wait != st.Text {
					t.Errorf("%s created %v decided %v: Moment %q, %q; cells %q, %q", state, cr, d, age, wait, ageC.Text, st.Text)
				}
			}
		}
	}
}
