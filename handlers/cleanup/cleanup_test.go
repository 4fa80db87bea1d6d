package cleanup

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/cleanup"
)

// The feature's own handlers, built from its ports alone: the tests that
// drive the cleanup through the whole console (handlers.New, the
// devcluster) stay in handlers (cleanup_test.go, cleanup_*_integration_test.go).

// statusOf is err's HTTP status, or 0 when it is no *echo.HTTPError.
func statusOf(err error) int {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	return 0
}

// TestParseFilterRefusesWhatTheTargetHasNot: the CSR filters on another kind,
// a ticked row with a namespace on a cluster-scoped kind, too many ticked
// rows and an unknown state are each a 400 in words; a confirmation of
// ticked rows that lost them keeps an empty selection, never "everything".
func TestParseFilterRefusesWhatTheTargetHasNot(t *testing.T) {
	flowSchemas := cleanupTarget{title: "FlowSchemas"}
	csrs := cleanupTarget{title: "CertificateSigningRequests", csr: true}
	tooMany := url.Values{}
	for i := range maxTicked + 1 {
		tooMany.Add("names", "uid-"+strconv.Itoa(i)+"/fs-"+strconv.Itoa(i))
	}
	for _, tt := range []struct {
		name   string
		target cleanupTarget
		form   url.Values
	}{
		{"state on FlowSchemas", flowSchemas, url.Values{"state": {"pending"}}},
		{"signer on FlowSchemas", flowSchemas, url.Values{"signer": {"example.com/x"}}},
		{"unknown state", csrs, url.Values{"state": {"sleeping"}}},
		{"namespace on a cluster-scoped kind", flowSchemas, url.Values{"names": {"uid-1/default/fs-1"}}},
		{"too many ticked rows", flowSchemas, tooMany},
		{"bad selector", flowSchemas, url.Values{"selector": {"app in (web"}}},
	} {
		if _, err := tt.target.parseFilter(tt.form); statusOf(err) != http.StatusBadRequest {
			t.Errorf("%s: %v, want a 400", tt.name, err)
		}
	}
	f, err := flowSchemas.parseFilter(url.Values{"picked": {"1"}})
	if err != nil || f.Picked == nil || len(f.Picked) != 0 {
		t.Errorf("picked without names: %#v, %v; want an empty, non-nil selection", f.Picked, err)
	}
	f, err = csrs.parseFilter(url.Values{"state": {cleanup.Decided}, "older": {"7d"}})
	if err != nil || f.State != cleanup.Decided || f.Picked != nil {
		t.Errorf("decided CSRs older than 7d: %#v, %v", f, err)
	}
}

// TestNoCleanupWithoutAnEditor: without a way to delete as the user every
// cleanup route answers 503 before it resolves its kind.
func TestNoCleanupWithoutAnEditor(t *testing.T) {
	h := New(Deps{})
	e := echo.New()
	for _, route := range []struct {
		method string
		handle echo.HandlerFunc
	}{
		{http.MethodGet, h.previewCleanup}, {http.MethodPost, h.previewTickedCleanup}, {http.MethodPost, h.confirmCleanup},
		{http.MethodGet, h.previewCRCleanup}, {http.MethodPost, h.previewTickedCRCleanup}, {http.MethodPost, h.confirmCRCleanup},
	} {
		c := e.NewContext(httptest.NewRequest(route.method, "/flowschemas/-/cleanup", nil), httptest.NewRecorder())
		if err := route.handle(c); statusOf(err) != http.StatusServiceUnavailable {
			t.Errorf("%s: %v, want a 503", route.method, err)
		}
	}
}
