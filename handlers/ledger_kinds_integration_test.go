//go:build integration

package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// impostorCRD is a cluster-scoped CRD, in a group of its own, whose kind
// and plural are a CSR's, with a spec.password.
func impostorCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "certificatesigningrequests." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "certificatesigningrequests", Singular: "certificatesigningrequest",
				Kind: "CertificateSigningRequest", ListKind: "CertificateSigningRequestList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"password": {Type: "string"},
						}},
					},
				}},
			}},
		},
	}
}

// TestLedgerKeepsKindsByGroupAndResource (issue 43): a CRD of another group
// calls its kind CertificateSigningRequest, and one of its objects carries a
// real CSR's name and a spec.password. Edited through the console's CR
// editor, it must not join the real CSR's ledger history, and its diff (the
// passwords) must be stored nowhere: not in the ledger (no page shows a
// custom resource's entries) and not in the console's audit line (the API
// server's policy keeps custom resources at Metadata). The console's record
// of it names its own group and resource.
func TestLedgerKeepsKindsByGroupAndResource(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	lines := &syncBuffer{}
	rec := audit.New(audit.Options{Log: log, Lines: lines})
	feed := ingest.NewConsoleFeed(store, 0, log)
	rec.OnRecord(feed.Record)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go feed.Run(ctx)
	editor, err := kube.NewEditor(admin)
	if err != nil {
		t.Fatal(err)
	}
	openAPI, err := kube.NewOpenAPI(admin)
	if err != nil {
		t.Fatal(err)
	}
	ls := newLiveServerWith(t, admin, testcluster.Admin, false, func(d *Deps) {
		d.Editor, d.Docs, d.Audit, d.Ledger = editor, edit.NewDocs(openAPI, present.DocTree), rec, store
	})
	sess := ls.login(t)

	group := fmt.Sprintf("impostor%d.clusterdesk.test", time.Now().UnixNano())
	crd := impostorCRD(group)
	installCRD(t, crd)
	waitFor(t, "the cache to see the CRD", 20*time.Second, func() bool { _, err := ls.cache.CRD(crd.Name); return err == nil })
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "real"})
	ls.waitCached(t, name)

	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	crs := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "certificatesigningrequests"})
	old, secret := "old-password-"+group, "new-password-"+group
	impostor := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "CertificateSigningRequest",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"password": old},
	}}
	if _, err := crs.Create(ctx, impostor, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crs.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	// The attack: an ordinary edit through the console's CR editor.
	var mine *audit.Record
	rec.OnRecord(func(r audit.Record) {
		if r.Name == name && r.Verb == "update" && !r.DryRun && mine == nil {
			mine = &r
		}
	})
	obj := urls.CRInstance(crd.Name, "", name)
	code, doc, _ := ls.get(t, sess, obj+"/edit")
	if code != http.StatusOK {
		t.Fatalf("the CR's editor: status %d", code)
	}
	e := editorOf(doc)
	if !strings.Contains(e.text, old) {
		t.Fatalf("the editor does not hold the CR:\n%s", e.text)
	}
	if r := ls.post(t, sess, obj+"/apply", e.form(strings.Replace(e.text, old, secret, 1))); r.Code != http.StatusSeeOther {
		t.Fatalf("apply: status %d: %s", r.Code, r.Body.String())
	}
	// Then a write the ledger keeps, after it in the feed's queue: once it is
	// stored, the CR's record has been handled.
	if r := ls.post(t, sess, urls.CSR(name)+"/approve", url.Values{"uid": {ls.uid(t, name)}, "message": {"ticket OPS-43"}}); r.Code != http.StatusSeeOther {
		t.Fatalf("approve: status %d", r.Code)
	}
	var history []ledger.Entry
	waitFor(t, "the approval in the ledger", 20*time.Second, func() bool {
		page, err := store.Query(ctx, ledger.Query{Kind: string(kube.CSRs), Name: name, Oldest: true})
		if err != nil {
			t.Fatal(err)
		}
		history = page.Entries
		for _, en := range history {
			if en.Action == ledger.ActionApprove {
				return true
			}
		}
		return false
	})

	if mine == nil {
		t.Fatal("the console recorded no update of the CR")
	}
	if mine.APIGroup != group || mine.Resource != "certificatesigningrequests" || mine.Diff != "" {
		t.Errorf("the CR's record: group %q resource %q, diff %q", mine.APIGroup, mine.Resource, mine.Diff)
	}
	for _, en := range history {
		if en.Action != ledger.ActionApprove || en.APIGroup != "certificates.k8s.io" {
			t.Errorf("the real CSR's history holds %s %s of %s/%s: %q", en.Verb, en.Action, en.APIGroup, en.Resource, en.Diff)
		}
	}
	// Nothing of the CR's edit is stored anywhere in the ledger, under any kind.
	err = store.Export(ctx, ledger.Query{}, func(en ledger.Entry) error {
		if en.APIGroup == group || strings.Contains(en.Diff, "password") {
			t.Errorf("the ledger holds %s of %s/%s %s (kind %q): %q", en.Verb, en.APIGroup, en.Resource, en.Name, en.Kind, en.Diff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(lines.String(), secret) || strings.Contains(lines.String(), old) {
		t.Errorf("the console's audit line holds the CR's password")
	}
	// And the real CSR's history page shows only its approval.
	code, doc, _ = ls.get(t, sess, urls.LedgerObject(kube.CSRs, name, ""))
	if steps := doc.Find(`[data-testid="ledger-step"]`).Length(); code != http.StatusOK || steps != 1 {
		t.Errorf("the CSR's history page: status %d, %d steps, want 1", code, steps)
	}
}
