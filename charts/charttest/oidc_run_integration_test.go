//go:build integration

package charttest

import (
	"net/http"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestChartOIDCValuesRun starts the console as the chart renders it for
// examples/oidc.yaml (pod_integration_test.go), pointed at the devcluster:
// --set only the issuer, the client id, the public URL (https on loopback,
// where a TLS front stands for the example's Ingress) and the viewer role's
// group (the devcluster provider's oidc:clusterdesk-role-viewer, which
// nothing else binds). The client secret is the Secret the example tells
// people to create. Erin signs in through the provider's login page and
// lists CertificateSigningRequests with no right but the rendered viewer
// role's. The console trusts the provider's CA through SSL_CERT_FILE, the
// system trust store a real provider's certificate would be in.
func TestChartOIDCValuesRun(t *testing.T) {
	testcluster.Require(t)
	idp := testcluster.OIDC(t)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	const release = "clusterdesk-chart"
	restrictedNamespace(t, cs, chartNamespace)
	front := newTLSFront(t)
	client, ok := idp.Clients[testcluster.OIDCClientConsole]
	if !ok {
		t.Fatalf("the devcluster's provider has no client %s", testcluster.OIDCClientConsole)
	}
	objs := render(t, release, chartNamespace, []string{filepath.Join(chartDir, "examples", "oidc.yaml")},
		"--set", "auth.oidc.issuerURL="+idp.Issuer,
		"--set", "auth.oidc.clientID="+client.ID,
		"--set", "publicURL="+front.URL,
		"--set", "roles.viewer.groups[0]=oidc:clusterdesk-role-viewer")

	// kubectl -n clusterdesk create secret generic clusterdesk-oidc --from-file=client-secret=./client-secret
	createSecret(t, cs, chartNamespace, "clusterdesk-oidc", map[string][]byte{"client-secret": []byte(client.Secret)})
	applyRendered(t, cs, objs)
	console := preparePod(t, cs, objs, chartNamespace, release).startConsole(t, nil, "SSL_CERT_FILE="+idp.CAFile)
	if console.PublicURL != front.URL {
		t.Fatalf("the console's public URL %s, want the rendered %s", console.PublicURL, front.URL)
	}
	front.forwardTo(t, console.Origin)

	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "chart-oidc"})
	browser := front.browser(t, idp)
	_, resp := signInAtProvider(t, browser, idp, front.URL+"/login/oidc", "erin")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/login/oidc/callback" || resp.Header.Get("Refresh") == "" {
		t.Fatalf("back from the provider at %s: %s, Refresh %q; want the callback's 200 sending home\n%s",
			resp.Request.URL, resp.Status, resp.Header.Get("Refresh"), console.Logs())
	}
	doc, code := getPage(t, browser, front.URL+"/")
	if who := signedInAs(doc); code != http.StatusOK || who != "oidc:erin" {
		t.Fatalf("GET / after signing in as erin: %d, the page names %q; want oidc:erin\n%s", code, who, console.Logs())
	}
	doc, code = getPage(t, browser, front.URL+"/csrs?state=all&q="+name)
	if code != http.StatusOK || doc.Find(`a[href="/csrs/`+name+`"]`).Length() == 0 {
		t.Errorf("erin's CSR list (%d) does not list %s\n%s", code, name, console.Logs())
	}
}
