package replay

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestEditorReplayRefusedWithoutTheLedgerGrant: the YAML editor's "Replay
// against recorded writes" embeds the recorded writes in the editor page, so
// a user without the ledger's grant (--ledger-readers granted) gets the
// missing grant in its place and no replay runs; a user with it is not
// refused by the gate.
func TestEditorReplayRefusedWithoutTheLedgerGrant(t *testing.T) {
	refusal := page.LedgerRefusalFunc(func(c echo.Context) string {
		if id, _ := kube.IdentityFrom(c.Request().Context()); id.User == "frank" {
			return ""
		}
		return page.LedgerGrantWords
	})
	h := New(Deps{Refusal: refusal})
	as := func(user string) echo.Context {
		req := httptest.NewRequest("POST", "/validatingwebhookconfigurations/-/replay", nil)
		req = req.WithContext(kube.WithIdentity(req.Context(), kube.Identity{User: user}))
		return echo.New().NewContext(req, httptest.NewRecorder())
	}
	for _, kind := range []kube.KindID{kube.Webhooks, kube.MutatingWebhooks, kube.AdmissionPolicies, kube.AdmissionPolicyBindings} {
		p := h.ReplayEditorText(as("erin"), kind, "kind: Whatever", "", model.Chrome{})
		if p.Error != page.LedgerGrantWords || p.Result != nil || p.Job != nil {
			t.Errorf("%s: the viewer's replay: error %q, result %v, job %v; want the missing grant and nothing run", kind, p.Error, p.Result, p.Job)
		}
		// The auditor passes the gate; this console records no writes.
		if p := h.ReplayEditorText(as("frank"), kind, "kind: Whatever", "", model.Chrome{}); !strings.Contains(p.Error, "records no writes") {
			t.Errorf("%s: the auditor's replay: %q, want past the gate to the recorded writes", kind, p.Error)
		}
	}
}
