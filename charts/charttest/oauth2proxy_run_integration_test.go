//go:build integration

package charttest

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestChartOAuth2ProxyValuesRun runs both containers of the pod the chart
// renders for examples/oauth2-proxy.yaml (pod_integration_test.go): the
// console in proxy mode, and oauth2-proxy (make oauth2-proxy's, the version
// the chart's image names) with its rendered args and its rendered alpha
// configuration from the ConfigMap, the mount paths and its two addresses
// (bindAddress, the console upstream on loopback) its only changes. --set
// points the issuer, the client id and the public URL (https on loopback,
// where a TLS front stands for the example's Gateway) at the devcluster;
// the Secrets are the ones the example tells people to create. Carol signs
// in through oauth2-proxy at the devcluster's provider and lists CSRs as
// oidc:carol. The console, reached directly from loopback, takes a request
// carrying the shared secret and user headers as that user and refuses the
// same headers without the secret. oauth2-proxy and the console trust the
// provider's CA through SSL_CERT_FILE, the system trust store.
func TestChartOAuth2ProxyValuesRun(t *testing.T) {
	testcluster.Require(t)
	idp := testcluster.OIDC(t)
	o2p, err := filepath.Abs("../../.cache/bin/oauth2-proxy")
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	const release = "clusterdesk-chart"
	restrictedNamespace(t, cs, chartNamespace)
	front := newTLSFront(t)
	client, ok := idp.Clients["oauth2-proxy"]
	if !ok {
		t.Fatal("the devcluster's provider has no client oauth2-proxy")
	}
	objs := render(t, release, chartNamespace, []string{filepath.Join(chartDir, "examples", "oauth2-proxy.yaml")},
		"--set", "auth.proxy.oauth2Proxy.issuerURL="+idp.Issuer,
		"--set", "auth.proxy.oauth2Proxy.clientID="+client.ID,
		"--set", "publicURL="+front.URL)

	// The example's two Secrets, as its comment creates them.
	proxySecret := randomHex(t, 24)
	createSecret(t, cs, chartNamespace, "clusterdesk-oauth2-proxy", map[string][]byte{
		"client-secret": []byte(client.Secret), "cookie-secret": []byte(randomHex(t, 16))})
	createSecret(t, cs, chartNamespace, "clusterdesk-proxy", map[string][]byte{"secret": []byte(proxySecret)})
	applyRendered(t, cs, objs)
	pod := preparePod(t, cs, objs, chartNamespace, release)
	console := pod.startConsole(t, nil)

	port := freePort(t)
	pod.rewriteFile(t, "oauth2-proxy", "/etc/oauth2-proxy/config/alpha.yaml",
		"bindAddress: 0.0.0.0:4180", "bindAddress: 127.0.0.1:"+port,
		"uri: http://127.0.0.1:8080", "uri: "+console.Origin)
	args, env := pod.command(t, "oauth2-proxy", nil)
	proxy := testcluster.StartProcess(t, o2p, args, append(env, "SSL_CERT_FILE="+idp.CAFile))
	// Its rendered readiness probe.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("oauth2-proxy's /ping not 200 within 30 s (%v)\n%s", err, proxy.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	front.forwardTo(t, "http://127.0.0.1:"+port)

	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "chart-oauth2-proxy"})
	browser := front.browser(t, idp)
	doc, resp := signInAtProvider(t, browser, idp, front.URL+"/", "carol")
	if who := signedInAs(doc); resp.StatusCode != http.StatusOK || resp.Request.URL.String() != front.URL+"/" || who != "oidc:carol" {
		t.Fatalf("back from the provider at %s: %s, the page names %q; want the console's home as oidc:carol\n%s\n%s",
			resp.Request.URL, resp.Status, who, proxy.Logs(), console.Logs())
	}
	doc, code := getPage(t, browser, front.URL+"/csrs?state=all&q="+name)
	if code != http.StatusOK || doc.Find(`a[href="/csrs/`+name+`"]`).Length() == 0 {
		t.Errorf("carol's CSR list through oauth2-proxy (%d) does not list %s\n%s", code, name, console.Logs())
	}

	// The console itself, from loopback: the shared secret and user headers
	// sign a request in; the same headers without the secret do not.
	direct := func(secret string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, console.Origin+"/", nil)
		req.Header.Set("X-Forwarded-User", "carol")
		req.Header.Set("X-Forwarded-Groups", "clusterdesk-auditors")
		if secret != "" {
			req.Header.Set("X-Clusterdesk-Proxy-Secret", secret)
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		doc, err := goqueryDoc(resp)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, signedInAs(doc)
	}
	if code, who := direct(proxySecret); code != http.StatusOK || who != "oidc:carol" {
		t.Errorf("the console with the proxy's secret and user headers: %d as %q; want 200 as oidc:carol", code, who)
	}
	for _, secret := range []string{"", proxySecret[1:] + "x"} {
		if code, who := direct(secret); code == http.StatusOK || who != "" {
			t.Errorf("the console with user headers and secret %q: %d as %q; want refused", secret, code, who)
		}
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
