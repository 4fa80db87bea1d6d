package apfload

import (
	"bytes"
	"testing"
)

// bucketText is the latency histogram of one webhook in one operation.
const bucketText = `# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
`

// The summing path is taken for the real capture's buckets, not skipped.
func TestBucketSumsTakeTheRealLines(t *testing.T) {
	s := bucketSums{typed: true, hooks: map[WebhookKey]*[]Bucket{}}
	n := 0
	for line := range bytes.SplitSeq(readFixture(t), []byte("\n")) {
		if bytes.HasPrefix(line, bucketPrefix) {
			if !s.add(line) {
				t.Fatalf("line left to expfmt: %s", line)
			}
			n++
		}
	}
	if n == 0 || len(s.hooks) == 0 {
		t.Fatalf("%d bucket lines, %d webhooks", n, len(s.hooks))
	}
}
