package editor

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// clusterScope stands for "no namespace" in the address of a cluster-scoped
// custom resource: "_" is no valid namespace name.
const clusterScope = urls.ClusterScoped

// instancesPerPage is how many custom resources the instances page asks the
// API server for at a time.
const instancesPerPage = 100

// maxInstancesPerPage bounds the page size a ?limit= may ask for.
const maxInstancesPerPage = 500

// crd reads the CRD of the :name parameter from the shared cache; the route's
// kindAccess has checked that the user may list CRDs.
func (h *Handlers) crd(c echo.Context) (*apiextensionsv1.CustomResourceDefinition, error) {
	return h.d.Cluster.CRD(c.Param("name"))
}

// crTarget is the editor target of a custom resource: the CRD of :name, the
// object :obj in namespace :ns ("_" when cluster-scoped); withObject false
// for the create routes, which have neither.
func (h *Handlers) crTarget(c echo.Context, withObject bool) (editTarget, error) {
	crd, err := h.crd(c)
	if err != nil {
		return editTarget{}, err
	}
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	ns, name := "", ""
	if withObject {
		ns, name = c.Param("ns"), c.Param("obj")
		switch {
		case ns == clusterScope && namespaced, ns != clusterScope && !namespaced:
			return editTarget{}, echo.NewHTTPError(http.StatusNotFound,
				fmt.Sprintf("%s objects are %s: there is no page at this address.", crd.Spec.Names.Kind, scopeWord(namespaced)))
		case ns == clusterScope:
			ns = ""
		}
	}
	k, err := page.CRKind(crd, ns)
	if err != nil {
		return editTarget{}, err
	}
	crdName := crd.Name
	list := urls.CRInstances(crdName)
	t := editTarget{
		kind: k, name: name, list: list, createURL: urls.CRCreate(crdName),
		crumbs: page.CRCrumbs(crdName),
		// The document of a CRD's group changes when a CRD does, not with the server.
		docsKey:    "crd " + crdName + " " + crd.ResourceVersion,
		namespaced: namespaced,
		nav:        kube.CRDs,
		pageOf:     func(ns, name string) string { return urls.CRInstance(crdName, ns, name) },
	}
	if name != "" {
		t.page = t.pageOf(ns, name)
	}
	return t, nil
}

func scopeWord(namespaced bool) string {
	if namespaced {
		return "namespaced"
	}
	return "cluster-scoped"
}

// crInstances lists a CRD's custom resources with the API server's Table
// format, read as the user, one page (limit + continue) at a time.
func (h *Handlers) crInstances(c echo.Context) error {
	t, err := h.crTarget(c, false)
	if err != nil {
		return err
	}
	crd, err := h.crd(c)
	if err != nil {
		return err
	}
	k := t.kind
	ns := c.QueryParam("namespace")
	if t.namespaced {
		k.Namespace = ns
	} else {
		ns = ""
	}
	p := model.InstancesPage{
		CRD: crd.Name, CRDHref: urls.Object(kube.CRDs, crd.Name), Kind: k.Singular,
		Resource: k.Resource + "." + k.Group + "/" + k.Version, Namespaced: t.namespaced, Namespace: ns, Limit: instancesPerPage,
	}
	p.Chrome = h.d.Chrome(c, k.Singular+" objects", kube.CRDs, t.crumbs[0], t.crumbs[1], model.Crumb{Label: "Objects"})
	if !h.d.ReadOnly {
		p.CleanupHref = urls.CRCleanup(crd.Name)
		if sel := c.QueryParam("selector"); sel != "" {
			p.CleanupHref = urls.WithQuery(p.CleanupHref, url.Values{"selector": {sel}})
		}
		p.NewHref = urls.CRNew(crd.Name)
		if ns != "" {
			p.NewHref = urls.WithQuery(p.NewHref, url.Values{"namespace": {ns}})
		}
	}
	cont := c.QueryParam("continue")
	p.Selector = strings.TrimSpace(c.QueryParam("selector"))
	if _, err := page.ParseSelector(p.Selector); err != nil {
		// Refused here with the parser the API server uses, so the message
		// is the same and no request is spent on it.
		p.SelectorError = err.Error()
		return page.Render(c, http.StatusBadRequest, pages.Instances(p))
	}
	if n, err := strconv.ParseInt(c.QueryParam("limit"), 10, 64); err == nil && n > 0 && n <= maxInstancesPerPage {
		p.Limit = n
	}
	list, err := h.editorCase(c).ListInstances(c.Request().Context(), k, page.CRDObject(crd), p.Limit, cont, p.Selector)
	if list.CountErr == nil {
		p.Count = page.CRCountText(list.Count)
	}
	table := list.Table
	status := http.StatusOK
	switch {
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		p.Problem = &model.Banner{Tone: model.ToneWarning, Title: "This page has expired", TestID: "instances-problem",
			Message: "The API server no longer holds the list this page continued. Start again from the first page."}
		p.FirstHref = instancesPage(t.list, ns, p.Selector, "", p.Limit)
		return page.Render(c, http.StatusGone, pages.Instances(p))
	case err != nil:
		var st apierrors.APIStatus
		if !errors.As(err, &st) {
			return err
		}
		status = int(st.Status().Code)
		p.Problem = &model.Banner{Tone: model.ToneError, Title: "The API server refused the list", Message: err.Error(), TestID: "instances-problem"}
		return page.Render(c, status, pages.Instances(p))
	}
	tickOf := h.tickOf(c, k, t.namespaced, table) // ticks.go
	if tickOf != nil {
		p.TickAction = urls.CRCleanup(crd.Name) // the ticked rows' cleanup preview (handlers/cleanup)
	}
	p.Columns, p.Rows, err = present.InstanceRows(table, t.namespaced && ns == "", t.pageOf, tickOf)
	if err != nil {
		return err
	}
	if table.Continue != "" {
		p.NextHref = instancesPage(t.list, ns, p.Selector, table.Continue, p.Limit)
	}
	if cont != "" {
		p.FirstHref = instancesPage(t.list, ns, p.Selector, "", p.Limit)
	}
	return page.Render(c, status, pages.Instances(p))
}

func instancesPage(list, ns, selector, cont string, limit int64) string {
	q := url.Values{}
	if selector != "" {
		q.Set("selector", selector)
	}
	if limit != instancesPerPage {
		q.Set("limit", strconv.FormatInt(limit, 10))
	}
	if ns != "" {
		q.Set("namespace", ns)
	}
	if cont != "" {
		q.Set("continue", cont)
	}
	return urls.WithQuery(list, q)
}

// crInstance shows one custom resource, read live as the user.
func (h *Handlers) crInstance(c echo.Context) error {
	t, err := h.crTarget(c, true)
	if err != nil {
		return err
	}
	obj, err := h.editorCase(c).Read(c.Request().Context(), t.kind, t.name)
	if err != nil {
		return err
	}
	text, err := edit.Text(obj, true)
	if err != nil {
		return err
	}
	p := model.InstancePage{Kind: t.kind.Singular, Name: t.name, Namespace: t.kind.Namespace, YAML: text}
	p.Fields = append(p.Fields, model.Field{Label: "API version", Value: obj.GetAPIVersion(), Mono: true})
	if t.kind.Namespace != "" {
		p.Fields = append(p.Fields, model.Field{Label: "Namespace", Value: t.kind.Namespace, Mono: true})
	}
	p.Fields = append(p.Fields,
		model.Field{Label: "Created", Value: obj.GetCreationTimestamp().UTC().Format(time.RFC3339)},
		model.Field{Label: "Resource version", Value: obj.GetResourceVersion(), Mono: true})
	if !h.d.ReadOnly {
		ed := urls.EditorOf(t.page)
		p.EditHref, p.DeleteHref = ed.Edit, ed.Delete
	}
	p.Chrome = h.d.Chrome(c, t.name, kube.CRDs, append(t.crumbs, model.Crumb{Label: t.name})...)
	return page.Render(c, http.StatusOK, pages.Instance(p))
}

// editCR, previewCR, applyCR and rebaseCR are the YAML editor's routes for a
// custom resource: the same editor, update or server-side apply, as the user.
func (h *Handlers) editCR(c echo.Context) error {
	t, err := h.crTarget(c, true)
	if err != nil {
		return err
	}
	return h.showEditor(c, t)
}

func (h *Handlers) previewCR(c echo.Context) error {
	t, err := h.crTarget(c, true)
	if err != nil {
		return err
	}
	return h.update(c, t, true)
}

func (h *Handlers) applyCR(c echo.Context) error {
	t, err := h.crTarget(c, true)
	if err != nil {
		return err
	}
	return h.update(c, t, false)
}

func (h *Handlers) rebaseCR(c echo.Context) error {
	t, err := h.crTarget(c, true)
	if err != nil {
		return err
	}
	return h.rebase(c, t)
}

// newCR shows the create page of a custom resource, with the kind's head
// filled in (and the namespace of the list it came from).
func (h *Handlers) newCR(c echo.Context) error {
	t, err := h.crTarget(c, false)
	if err != nil {
		return err
	}
	k := t.kind
	text := "apiVersion: " + page.APIVersion(k) + "\nkind: " + k.Singular + "\nmetadata:\n  name: \n"
	if t.namespaced {
		ns := c.QueryParam("namespace")
		if ns == "" {
			ns = "default"
		}
		text += "  namespace: " + ns + "\n"
	}
	p := h.targetPage(c, t, false)
	p.YAML = text
	return page.Render(c, http.StatusOK, pages.Edit(p))
}

func (h *Handlers) createCR(c echo.Context) error {
	t, err := h.crTarget(c, false)
	if err != nil {
		return err
	}
	return h.create(c, t)
}

// deleteCR and confirmDeleteCR are the delete confirmation of a custom
// resource: the same dry run, typed name and UID precondition as the
// console's own kinds, as the user.
func (h *Handlers) deleteCR(c echo.Context) error {
	t, err := h.crTarget(c, true)
	if err != nil {
		return err
	}
	return h.showDelete(c, t)
}

func (h *Handlers) confirmDeleteCR(c echo.Context) error {
	t, err := h.crTarget(c, true)
	if err != nil {
		return err
	}
	return h.confirmDeleteOf(c, t)
}
