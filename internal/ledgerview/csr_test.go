package ledgerview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

func TestStoryOfADeletedCSR(t *testing.T) {
	start := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	fx := testfixtures.LedgerCSRStory(t, "alice-laptop", "example.com/client", "alice", "bob", 200, start)
	s := StoryOfCSR(fx.Entries)
	if s.Request == nil {
		t.Fatalf("request not decoded: %s", s.RequestErr)
	}
	if s.Request.CommonName != "alice" || len(s.Request.DNSNames) != 200 || s.Requester != "alice" ||
		s.Signer != "example.com/client" || len(s.Usages) != 2 {
		t.Fatalf("story %+v", s)
	}
	if len(s.Decisions) != 1 || s.Decisions[0].User != "bob" || !strings.Contains(s.Decisions[0].Reason, "OPS-42") {
		t.Fatalf("decisions %+v", s.Decisions)
	}
	if len(s.Certificates) != 1 {
		t.Fatalf("certificates %+v", s.Certificates)
	}
	c := s.Certificates[0]
	if c.Err != "" || c.Serial != fx.Serial || !c.NotBefore.Equal(fx.Cert.NotBefore) || !c.NotAfter.Equal(fx.Cert.NotAfter) {
		t.Fatalf("certificate %+v, want serial %s", c, fx.Serial)
	}
}

// TestStoryNeverTrustsTheStoredObjects: status.certificate takes any bytes a
// signer writes, and an object may be missing, dropped or not JSON.
func TestStoryNeverTrustsTheStoredObjects(t *testing.T) {
	issue := func(obj string, dropped bool) ledger.Entry {
		e := ledger.Entry{Action: ledger.ActionIssue, Result: ledger.ResultOK, ObjectDropped: dropped}
		if obj != "" {
			e.Object = []byte(obj)
		}
		return e
	}
	garbage, _ := json.Marshal(map[string]any{"status": map[string]any{"certificate": []byte("-----BEGIN CERTIFICATE-----\nnope\n")}})
	notCert, _ := json.Marshal(map[string]any{"status": map[string]any{"certificate": []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")}})
	s := StoryOfCSR([]ledger.Entry{
		{Action: ledger.ActionCreate, Object: []byte(`{"spec":{"request":"bm90IGEgcmVxdWVzdA=="}}`)},
		issue("", false), issue("", true), issue("{", false), issue(string(garbage), false), issue(string(notCert), false),
		issue(`{"status":{}}`, false),
	})
	if s.Request != nil || s.RequestErr == "" {
		t.Errorf("a request that is not PEM: %+v", s)
	}
	if len(s.Certificates) != 6 {
		t.Fatalf("%d certificates", len(s.Certificates))
	}
	for i, c := range s.Certificates {
		if c.Err == "" || c.Serial != "" {
			t.Errorf("certificate %d: %+v, want an error and no serial", i, c)
		}
	}
	if s := StoryOfCSR(nil); s.RequestErr == "" {
		t.Errorf("no entries: the story must say the request is unknown")
	}
}
