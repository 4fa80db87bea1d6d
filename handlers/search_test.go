package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/PuerkitoBio/goquery"
)

// searchCluster adds one object of every other kind to liveCluster's CSRs.
type searchCluster struct{ *liveCluster }

func objMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func (searchCluster) FlowSchemas() ([]*flowcontrolv1.FlowSchema, error) {
	return []*flowcontrolv1.FlowSchema{{ObjectMeta: objMeta("leader-election")}, {ObjectMeta: objMeta("exempt")}}, nil
}
func (searchCluster) PriorityLevels() ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
	return []*flowcontrolv1.PriorityLevelConfiguration{{ObjectMeta: objMeta("leader-pl")}}, nil
}
func (searchCluster) CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return []*apiextensionsv1.CustomResourceDefinition{{ObjectMeta: objMeta("leaders.example.com")}}, nil
}
func (searchCluster) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, nil
}
func (searchCluster) CSIDrivers() ([]*storagev1.CSIDriver, error) {
	return []*storagev1.CSIDriver{{ObjectMeta: objMeta("other.csi")}}, nil
}
func (c searchCluster) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	var out []*certificatesv1.CertificateSigningRequest
	for _, o := range c.Requests {
		out = append(out, o)
	}
	return out, nil
}

func TestSearchHonoursListPermissions(t *testing.T) {
	ts := newConsole(t, Deps{
		Cluster: searchCluster{newLiveCluster("csr-leader-1", "csr-other")},
		// The user may list CSRs, FlowSchemas and CRDs, not PriorityLevelConfigurations.
		Access: allowKinds{"certificatesigningrequests": true, "flowschemas": true, "customresourcedefinitions": true, "csidrivers": true},
		User:   "tester",
	})
	srv := httptest.NewServer(ts.e)
	defer srv.Close()
	cookie := loginOver(t, srv.URL, ts.token)

	get := func(path string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := get("/search?q=LEADER")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	d := doc(t, []byte(body))
	groups := d.Find(`[data-testid^="search-group-"]`)
	var ids []string
	groups.Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-testid", "")) })
	if strings.Join(ids, ",") != "search-group-csrs,search-group-flowschemas,search-group-crds" {
		t.Errorf("groups = %v (prioritylevels must not be searched, csidrivers has no hit)", ids)
	}
	if strings.Contains(body, "leader-pl") {
		t.Error("the name of a kind the user may not list leaked into the results")
	}
	if !strings.Contains(d.Find(`[data-testid="search-notes"]`).Text(), "PriorityLevelConfigurations") {
		t.Error("the page should say PriorityLevelConfigurations were not searched")
	}
	hit := d.Find(`[data-testid="search-group-flowschemas"] [data-testid="search-hit"]`)
	if hit.Length() != 1 || hit.AttrOr("href", "") != "/flowschemas/leader-election" || hit.Find("mark").Text() != "leader" {
		t.Errorf("flowschema hit: %d, href %q, mark %q", hit.Length(), hit.AttrOr("href", ""), hit.Find("mark").Text())
	}
	if d.Find(`[data-testid="search"]`).AttrOr("value", "") != "LEADER" {
		t.Error("the top bar's search box keeps the query")
	}
	if d.Find(`[data-testid="search-count"]`).Text() != "3 objects found." {
		t.Errorf("count: %q", d.Find(`[data-testid="search-count"]`).Text())
	}

	_, body = get("/search?q=zz-nothing")
	if d := doc(t, []byte(body)); d.Find(`[data-testid="search-empty"]`).Length() != 1 {
		t.Error("no hits: an empty state")
	}
	_, body = get("/search")
	if d := doc(t, []byte(body)); d.Find(`[data-testid^="search-group-"]`).Length() != 0 || d.Find(`[data-testid="page-title"]`).Text() != "Search" {
		t.Error("no query: an explanation, no results")
	}
}
