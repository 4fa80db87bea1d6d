package signin

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/auth"
)

// Every OIDC failure gets its own page with a status that says whose fault
// it is, never a 500.
func TestOIDCFailurePages(t *testing.T) {
	for _, tc := range []struct {
		kind   auth.OIDCErrorKind
		status int
		title  string
	}{
		{auth.OIDCIssuerUnreachable, http.StatusServiceUnavailable, "cannot be reached"},
		{auth.OIDCDenied, http.StatusForbidden, "declined"},
		{auth.OIDCProviderError, http.StatusBadGateway, "reported an error"},
		{auth.OIDCStateMissing, http.StatusBadRequest, "no sign-in under way"},
		{auth.OIDCStateMismatch, http.StatusBadRequest, "not this browser's"},
		{auth.OIDCNonceMismatch, http.StatusBadRequest, "not this sign-in's"},
		{auth.OIDCExchangeFailed, http.StatusBadGateway, "refused the sign-in"},
		{auth.OIDCTokenInvalid, http.StatusBadGateway, "not valid"},
		{auth.OIDCRefreshFailed, http.StatusUnauthorized, "could not be renewed"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			err := &auth.OIDCError{Kind: tc.kind, Detail: "detail", Err: errors.New(`oidc: expected audience "clusterdesk" got ["other"]`)}
			status, p, ok := oidcFailurePage(err, "https://idp.example")
			if !ok || status != tc.status || !strings.Contains(p.Title, tc.title) || p.Message == "" {
				t.Errorf("%d %q (%v), want %d and a title saying %q", status, p.Title, ok, tc.status, tc.title)
			}
		})
	}
	_, p, _ := oidcFailurePage(&auth.OIDCError{Kind: auth.OIDCIssuerUnreachable}, "https://idp.example")
	if !strings.Contains(p.Message, "https://idp.example") {
		t.Errorf("issuer down: %q does not name the issuer", p.Message)
	}
	_, p, _ = oidcFailurePage(&auth.OIDCError{Kind: auth.OIDCTokenInvalid, Err: errors.New(`oidc: expected audience "clusterdesk" got ["other"]`)}, "")
	if !strings.Contains(p.Message, `expected audience "clusterdesk"`) {
		t.Errorf("invalid token: %q does not say why", p.Message)
	}
	if _, _, ok := oidcFailurePage(errors.New("disk full"), ""); ok {
		t.Error("an error that is no OIDC step's got an OIDC page")
	}
	if p := apiServerRefusedPage("alice", "not-a-kube-audience"); !strings.Contains(p.Message, "not-a-kube-audience") || !strings.Contains(p.Message, "audience") {
		t.Errorf("API server refusal: %q", p.Message)
	}
}
