package live

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
)

// The home tabs of one access share one attention view: a batch that
// changes the section renders it once for them, on their topic, as a
// "status" event replacing the section by its id; a batch that does not
// change it sends nothing; users of another access get their own rendering.
func TestLiveAttentionRendersOncePerAccess(t *testing.T) {
	cl := queueCluster(t, 3)
	lv := newUpdates(cl)
	csrsOnly := page.AttentionAccess{Kinds: []kube.KindID{kube.CSRs}}
	topic, release, ok := lv.OpenAttention(csrsOnly)
	if !ok {
		t.Fatal("no view opened")
	}
	topic2, release2, _ := lv.OpenAttention(csrsOnly)
	if topic2 != topic || len(lv.attentionViews) != 1 {
		t.Fatalf("two tabs of one access: topics %s and %s, %d views", topic, topic2, len(lv.attentionViews))
	}
	nothing := page.AttentionAccess{Kinds: []kube.KindID{kube.CSIDrivers}}
	other, releaseOther, _ := lv.OpenAttention(nothing)
	if other == topic {
		t.Fatal("two accesses share a topic")
	}

	attentionOf := func(msgs []live.Message) map[string]live.Message {
		out := map[string]live.Message{}
		for _, m := range msgs {
			if strings.HasPrefix(m.Topic, "attention-") {
				out[m.Topic] = m
			}
		}
		return out
	}
	cl.Mu.Lock()
	cl.Requests["csr-new"] = fakeCSR(t, "csr-new", "example.com/attention", "user-new", time.Now())
	cl.Mu.Unlock()
	got := attentionOf(lv.Render(kube.CSRs, []string{"csr-new"}, false))
	m, ok := got[topic]
	if !ok || len(got) != 1 || m.Event != StatusTopic || !bytes.Contains(m.Data, []byte(`id="attention"`)) ||
		!bytes.Contains(m.Data, []byte("4 pending CertificateSigningRequests")) || !bytes.Contains(m.Data, []byte("example.com/attention")) {
		t.Fatalf("the CSR readers' section: %d messages, %s", len(got), m.Data)
	}
	// Nothing changed for those who may list no CSR, nor since for anyone.
	if got := attentionOf(lv.Render(kube.CSRs, []string{"csr-new"}, false)); len(got) != 0 {
		t.Errorf("an unchanged section was sent again: %v", got)
	}

	release()
	release2()
	releaseOther()
	if len(lv.attentionViews) != 0 {
		t.Errorf("%d views left after every tab closed", len(lv.attentionViews))
	}
	if got := attentionOf(lv.Render(kube.CSRs, []string{"csr-new"}, false)); len(got) != 0 {
		t.Errorf("sections rendered with no tab open: %v", got)
	}
}
