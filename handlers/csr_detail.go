package handlers

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrKind resolves the CSR kind; the route's kindAccess has checked that the
// user may read CSRs.
func (h *Handlers) csrKind(_ echo.Context, _ string) (kube.Kind, error) {
	kind, known := h.deps.Cluster.Kind(kube.CSRs)
	if !known {
		return kube.Kind{}, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", kube.CSRs))
	}
	return kind, nil
}

// csrShown is the CSR name as the cache holds it, once the user may read CSRs
// (csrKind), with its kind.
func (h *Handlers) csrShown(c echo.Context, name string) (kube.Kind, *certificatesv1.CertificateSigningRequest, error) {
	kind, err := h.csrKind(c, name)
	if err != nil {
		return kube.Kind{}, nil, err
	}
	obj, err := h.deps.Cluster.CSR(name)
	if err != nil {
		return kube.Kind{}, nil, err
	}
	return kind, obj, nil
}

// csrDetail shows one CSR (GET /csrs/:name) with the checks' findings beside
// the request, the decision the user may take, and the issued certificate.
func (h *Handlers) csrDetail(c echo.Context) error {
	name := c.Param("name")
	kind, obj, err := h.csrShown(c, name)
	if err != nil {
		return err
	}
	raw, err := h.deps.Cluster.Object(kind.ID, name)
	if err != nil {
		return err
	}
	page, err := h.csrDetailPage(c, kind, obj, raw)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, pages.CSRDetail(page))
}

// csrDetailPage lays out obj, with raw as its YAML, and the decisions the user
// may take on that very object (its UID travels with them).
func (h *Handlers) csrDetailPage(c echo.Context, kind kube.Kind, obj *certificatesv1.CertificateSigningRequest, raw runtime.Object) (model.CSRDetailPage, error) {
	// The page costs about a GET of the CSR: the duplicates finding reads the
	// storm index, built once per change of the CSRs (csrqueue.Queue.Storms), and the Node comparison, a GET as the user,
	// loads after the page (csr_node.go).
	page := present.CSRDetailPage(obj, h.queue.Storms(), h.queue.Checks(), time.Now())
	if node := h.kubeletServingNode(obj); node != "" && h.deps.Lookup != nil {
		page.Findings = slices.DeleteFunc(page.Findings, func(f model.CSRFinding) bool { return f.Check == nodeUnknownCheck })
		page.NodeCheck = model.CSRNodeCheck{Href: urls.CSRNodeCheck(obj.Name), Node: node}
	}
	return h.csrDetailLayout(c, kind, obj, raw, page)
}

// csrDetailLayout adds the chrome, YAML and actions to a CSR's page.
func (h *Handlers) csrDetailLayout(c echo.Context, kind kube.Kind, obj *certificatesv1.CertificateSigningRequest, raw runtime.Object, page model.CSRDetailPage) (model.CSRDetailPage, error) {
	if err := setYAML(&page.DetailPage, kind.ID, obj.Name, raw); err != nil {
		return model.CSRDetailPage{}, err
	}
	page.Chrome = h.chrome(c, obj.Name, kind.ID,
		model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: obj.Name})
	page.Actions = h.csrActions(c, obj)
	page.Issue = h.csrIssueForm(c, obj)
	// Edit YAML and Delete, like every other kind's page (pages.go detail):
	// offered only where the user may, never in read-only mode.
	page.MayUpdate, page.MayDelete = h.mayChange(c, kind, obj.Name)
	return page, nil
}

// csrCertificate downloads the issued certificate (status.certificate) as a
// PEM file (GET /csrs/:name/certificate); 404 until the signer has issued one.
func (h *Handlers) csrCertificate(c echo.Context) error {
	name := c.Param("name")
	_, obj, err := h.csrShown(c, name)
	if err != nil {
		return err
	}
	if len(obj.Status.Certificate) == 0 {
		return echo.NewHTTPError(http.StatusNotFound, name+" has no issued certificate (yet): the signer fills status.certificate after approval.")
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+present.CSRCertificateFile(name)+`"`)
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "application/pem-certificate-chain", obj.Status.Certificate)
}

// nodeUnknownCheck is the finding of a kubelet-serving CSR whose Node was
// not looked up; on the detail page the deferred Node check replaces it.
const nodeUnknownCheck = "node-unknown"

// kubeletServingNode names the Node a kubelet-serving CSR asks a certificate
// for ("" for other CSRs, or a request that names no node).
func (h *Handlers) kubeletServingNode(obj *certificatesv1.CertificateSigningRequest) string {
	if obj.Spec.SignerName != certificatesv1.KubeletServingSignerName {
		return ""
	}
	req, err := h.queue.Decode(obj.Spec.Request)
	if err != nil || len(req.DNSNames)+len(req.IPAddresses) == 0 {
		return ""
	}
	node, isNode := strings.CutPrefix(req.CommonName, "system:node:")
	if !isNode {
		return ""
	}
	return node
}

// csrDetailChecksEnv adds, for a kubelet-serving CSR, the addresses of the Node
// it names, read with one GET as the user (the Node check, csr_node.go). If
// the Node cannot be read (forbidden, unreachable) the check says the Node is
// unknown rather than missing.
func (h *Handlers) csrDetailChecksEnv(c echo.Context, obj *certificatesv1.CertificateSigningRequest) csrqueue.Checks {
	env := h.queue.Checks()
	node := h.kubeletServingNode(obj)
	if h.deps.Lookup == nil || node == "" {
		return env
	}
	addrs, found, err := h.deps.Lookup.NodeAddresses(c.Request().Context(), node)
	if err != nil {
		h.deps.Log.Debug("node lookup for a kubelet-serving CSR failed", "node", node, "err", err)
		return env
	}
	env.NodeAddresses = func(name string) ([]string, bool) {
		if name != node {
			return nil, false
		}
		return addrs, found
	}
	return env
}
