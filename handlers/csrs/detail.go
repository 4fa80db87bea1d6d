package csrs

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrKind resolves the CSR kind (404 when the console has no CSR pages); the
// route's access check has checked that the user may read CSRs.
func (h *Handlers) csrKind() (kube.Kind, error) {
	kind, known := h.d.Cluster.Kind(kube.CSRs)
	if !known {
		return kube.Kind{}, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", kube.CSRs))
	}
	return kind, nil
}

// csrShown is the CSR name as the cache holds it, once the user may read CSRs
// (csrKind), with its kind.
func (h *Handlers) csrShown(c echo.Context, name string) (kube.Kind, *certificatesv1.CertificateSigningRequest, error) {
	kind, err := h.csrKind()
	if err != nil {
		return kube.Kind{}, nil, err
	}
	obj, err := h.d.Cluster.CSR(name)
	if err != nil {
		return kube.Kind{}, nil, err
	}
	return kind, obj, nil
}

// Detail shows one CSR (GET /csrs/:name) with the checks' findings beside
// the request, the decision the user may take, and the issued certificate.
// The kind registry's CSR entry serves it as the CSRs' detail page.
func (h *Handlers) Detail(c echo.Context) error {
	name := c.Param("name")
	if h.d.MarkLive != nil {
		// The chrome's live cursor and version are read before the object
		// (handlers/live's Chrome keeps them for the request): a change in
		// between then resyncs the page instead of being lost to it.
		h.d.MarkLive(c, kube.CSRs)
	}
	kind, obj, err := h.csrShown(c, name)
	if err != nil {
		return err
	}
	raw, err := h.d.Cluster.Object(kind.ID, name)
	if err != nil {
		return err
	}
	p, err := h.csrDetailPage(c, kind, h.detailWithCertificate(c, obj), raw) // certificate.go
	if err != nil {
		return err
	}
	return page.Render(c, http.StatusOK, pages.CSRDetail(p))
}

// csrDetailPage lays out obj, with raw as its YAML, and the decisions the user
// may take on that very object (its UID travels with them).
func (h *Handlers) csrDetailPage(c echo.Context, kind kube.Kind, obj *certificatesv1.CertificateSigningRequest, raw runtime.Object) (model.CSRDetailPage, error) {
	// The page costs about a GET of the CSR: the duplicates finding reads the
	// storm index, built once per change of the CSRs (csrqueue.Queue.Storms), and the Node comparison, a GET as the user,
	// loads after the page (node.go).
	p := present.CSRDetailPage(obj, h.d.Queue.Storms(), h.d.Queue.Checks(), time.Now())
	h.whyLine(c, obj, &p)
	if node := h.kubeletServingNode(obj); node != "" && h.d.Lookup != nil {
		p.Findings = slices.DeleteFunc(p.Findings, func(f model.CSRFinding) bool { return f.Check == nodeUnknownCheck })
		p.NodeCheck = model.CSRNodeCheck{Href: urls.CSRNodeCheck(obj.Name), Node: node}
	}
	return h.csrDetailLayout(c, kind, obj, raw, p)
}

// csrDetailLayout adds the chrome, YAML and actions to a CSR's page.
func (h *Handlers) csrDetailLayout(c echo.Context, kind kube.Kind, obj *certificatesv1.CertificateSigningRequest, raw runtime.Object, p model.CSRDetailPage) (model.CSRDetailPage, error) {
	if err := page.SetYAML(&p.DetailPage, kind.ID, obj.Name, raw); err != nil {
		return model.CSRDetailPage{}, err
	}
	p.Chrome = h.d.Chrome(c, obj.Name, kind.ID,
		model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: obj.Name})
	p.Actions = h.csrActions(c, obj)
	p.Issue = h.csrIssueForm(c, obj)
	// Edit YAML and Delete, like every other kind's page (handlers' pages.go
	// detail): offered only where the user may, never in read-only mode.
	p.MayUpdate, p.MayDelete = h.d.MayChange(c, kind, obj.Name)
	return p, nil
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
	obj, ok, err := h.withCertificate(c, obj) // the cache leaves it out (certificate.go)
	if !ok {
		return certificateUnread(name, err)
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
	req, err := h.d.Queue.Decode(obj.Spec.Request)
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
// it names, read with one GET as the user (the Node check, node.go). If
// the Node cannot be read (forbidden, unreachable) the check says the Node is
// unknown rather than missing.
func (h *Handlers) csrDetailChecksEnv(c echo.Context, obj *certificatesv1.CertificateSigningRequest) csrqueue.Checks {
	env := h.d.Queue.Checks()
	node := h.kubeletServingNode(obj)
	if h.d.Lookup == nil || node == "" {
		return env
	}
	addrs, found, err := h.d.Lookup.NodeAddresses(c.Request().Context(), node)
	if err != nil {
		h.d.Log.Debug("node lookup for a kubelet-serving CSR failed", "node", node, "err", err)
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
