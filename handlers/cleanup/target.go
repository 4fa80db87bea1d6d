package cleanup

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// cleanupTarget is what a cleanup deletes, where its pages are, and how its
// candidates are found: a writable kind of the registry (from the shared
// cache) or a CRD's custom resources (a metadata LIST as the user).
type cleanupTarget struct {
	target     cleanup.Target
	scope      string // the fingerprint's scope: which kind (and CRD)
	title      string
	csr        bool // the CSR filters (state, signer) apply
	list       string
	preview    string
	confirm    string
	crumbs     []model.Crumb
	nav        kube.KindID
	href       func(cleanup.Candidate) string
	candidates func(ctx context.Context, selector string) ([]cleanup.Candidate, error)
}

// builtinCleanup is the cleanup of the :kind list: every kind of the registry
// with candidates (not the read-only ones, see Kind.ReadOnly in handlers/kinds).
func (h *Handlers) builtinCleanup(c echo.Context) (cleanupTarget, error) {
	k, err := page.EditableKindFor(c, h.d.Cluster)
	if err != nil {
		return cleanupTarget{}, err
	}
	candidates, ok := kinds.Candidates(h.d.Cluster, k.ID)
	if !ok {
		return cleanupTarget{}, echo.NewHTTPError(http.StatusNotFound, "clusterdesk offers no cleanup of "+k.Title+".")
	}
	list := urls.List(k.ID)
	return cleanupTarget{
		target: cleanup.Target{Kind: k}, scope: string(k.ID), title: k.Title, csr: k.ID == kube.CSRs,
		list: list, preview: urls.Cleanup(k.ID), confirm: urls.CleanupConfirm(k.ID),
		crumbs: []model.Crumb{{Label: k.Title, Href: list}}, nav: k.ID,
		href: func(cand cleanup.Candidate) string { return urls.Object(k.ID, cand.Name) },
		candidates: func(context.Context, string) ([]cleanup.Candidate, error) {
			return candidates()
		},
	}, nil
}

// crCleanup is the cleanup of the custom resources of the CRD :name, in every
// namespace, listed as the user (no informer watches custom resources).
func (h *Handlers) crCleanup(c echo.Context) (cleanupTarget, error) {
	def, err := h.d.Cluster.CRD(c.Param("name"))
	if err != nil {
		return cleanupTarget{}, err
	}
	// No namespace: list in every namespace; each deletion takes its object's.
	k, err := page.CRKind(def, "")
	if err != nil {
		return cleanupTarget{}, err
	}
	crd := def.Name
	return cleanupTarget{
		target: cleanup.Target{Kind: k, Namespaced: def.Spec.Scope == apiextensionsv1.NamespaceScoped}, scope: "cr " + crd, title: k.Singular + " objects",
		list: urls.CRInstances(crd), preview: urls.CRCleanup(crd), confirm: urls.CRCleanupConfirm(crd),
		crumbs: page.CRCrumbs(crd), nav: kube.CRDs,
		href: func(cand cleanup.Candidate) string {
			ns := cand.Namespace
			if ns == "" {
				ns = urls.ClusterScoped
			}
			return urls.CRInstance(crd, ns, cand.Name)
		},
		candidates: func(ctx context.Context, selector string) ([]cleanup.Candidate, error) {
			items, err := h.d.Editor.ListMetadata(ctx, k, selector)
			if err != nil {
				return nil, err
			}
			out := make([]cleanup.Candidate, len(items))
			for i := range items {
				out[i] = cleanup.CandidateOf(&items[i])
			}
			return out, nil
		},
	}, nil
}
