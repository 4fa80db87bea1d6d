package replay

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// bindingsCluster is the shared cache's bindings, and nothing else.
type bindingsCluster struct {
	ports.Cluster
	bindings []runtime.Object
}

func (c bindingsCluster) List(kube.KindID) ([]runtime.Object, error) { return c.bindings, nil }

type allowAll struct{}

func (allowAll) Can(context.Context, string, string, string, string, string) (bool, error) {
	return true, nil
}

// heldWrites holds its first scan until release is closed, whatever the
// scan's context says; later scans read nothing.
type heldWrites struct {
	ledger.WriteStore
	started, release chan struct{}
	scans            int
}

func (h *heldWrites) ScanWrites(context.Context, ledger.WriteQuery, func(*ledger.Write) error) error {
	h.scans++
	if h.scans == 1 {
		close(h.started)
		<-h.release
	}
	return nil
}

// TestOneAgreementAtATime: a comparison reads the window's writes on every
// view of a policy's page, so the console runs one at a time; a view that
// cannot start within the replay's bound is told so, and runs nothing.
func TestOneAgreementAtATime(t *testing.T) {
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: &admissionregistrationv1.MatchResources{}}}
	bnd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}}}
	writes := &heldWrites{started: make(chan struct{}), release: make(chan struct{})}
	// The bound only ends the waiting view here: the held scan ignores it.
	h := New(Deps{Cluster: bindingsCluster{bindings: []runtime.Object{bnd}}, Access: allowAll{}, Writes: writes, RequestTimeout: 100 * time.Millisecond})
	a := newAgreement(h)
	view := func() string {
		c := echo.New().NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder())
		in := a.panel(c, pol)
		return in.Intro + " " + strings.Join(findingTitles(in.Findings), "; ")
	}
	first := make(chan string, 1)
	go func() { first <- view() }()
	testwait.Closed(t, writes.started, testwait.Within, "the first comparison to read the writes")
	if got := view(); !strings.Contains(got, "Another comparison kept the console busy") || writes.scans != 1 {
		t.Errorf("a second view while the first runs: %q, %d scans", got, writes.scans)
	}
	close(writes.release)
	testwait.Recv(t, first, testwait.Within, "the first comparison to end")
	if got := view(); strings.Contains(got, "busy") || writes.scans != 2 {
		t.Errorf("a view after the first ended: %q, %d scans", got, writes.scans)
	}
}

func findingTitles(fs []model.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Title)
	}
	return out
}
