package csrs

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/decide"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// followedPolicy is the :policy of the route, compiled, for a user who may
// read CSRs and list the policies; 404 for a policy they do not see, 400 for
// one that cannot run.
func (h *Handlers) followedPolicy(c echo.Context) (*csrpolicy.Compiled, *csrpolicy.Program, error) {
	if _, err := h.csrKind(); err != nil {
		return nil, nil, err
	}
	name := c.Param("policy")
	pol := h.policies(c)
	if pol == nil {
		return nil, nil, echo.NewHTTPError(http.StatusNotFound, "clusterdesk shows you no CSR approval policies: their CRD is not installed, or you may not list them.")
	}
	e, ok := pol.Lookup(name)
	if !ok {
		return nil, nil, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("There is no CSRApprovalPolicy %q.", name))
	}
	if e.Err != nil {
		return nil, nil, echo.NewHTTPError(http.StatusBadRequest, "The policy cannot run: "+e.Err.Error())
	}
	return pol, e.Program, nil
}

// csrPolicyApprovePreview lists the pending requests the policy approves
// that the user may approve (GET /csrs/-/policies/:policy/approve), at most
// maxBulk, in queue order, with the confirm form carrying each one's UID and
// resourceVersion.
func (h *Handlers) csrPolicyApprovePreview(c echo.Context) error {
	pol, prg, err := h.followedPolicy(c)
	if err != nil {
		return err
	}
	items, total, err := h.d.Queue.Matching(prg.Name, csrqueue.VerdictApprove, pol, h.csrMayDecide(c), maxBulk)
	if err != nil {
		return err
	}
	p := present.CSRPolicyApprovePage(prg.Version(), h.user(c), items, total, h.d.Queue.Decode)
	p.Chrome = h.d.Chrome(c, p.Title, "csrs", model.Crumb{Label: "CertificateSigningRequests", Href: urls.CSRs},
		model.Crumb{Label: "Policy " + prg.Name, Href: p.BackHref}, model.Crumb{Label: "Approve"})
	c.Response().Header().Set("Cache-Control", "no-store")
	return page.Render(c, http.StatusOK, pages.CSRPolicyApprove(p))
}

// csrPolicyApprove approves the confirmed preview (POST
// /csrs/-/policies/:policy/approve with r, each "<resourceVersion>/<uid>/<name>")
// as the signed-in user (decide.Decisions.FollowPolicy): each request still
// the object previewed, pending and approved by the policy now; the others
// are skipped and listed. It answers with the queue filtered to the policy
// and a result per request.
func (h *Handlers) csrPolicyApprove(c echo.Context) error {
	_, prg, err := h.followedPolicy(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	previewed, err := parsePreviewed(form["r"])
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	current := func(name string) (*certificatesv1.CertificateSigningRequest, bool) {
		obj, err := h.d.Cluster.CSR(name)
		return obj, err == nil && obj != nil
	}
	approves := func(obj *certificatesv1.CertificateSigningRequest) bool {
		in := csrpolicy.Input{CSR: obj}
		if req, err := h.d.Queue.Decode(obj.Spec.Request); err == nil {
			in.Request = req
		}
		// The policy as it is now: the policy cache may hold a newer one
		// than the preview's, and the newer one decides.
		pol := h.policies(c)
		if pol == nil {
			return false
		}
		e, ok := pol.Lookup(prg.Name)
		if !ok || e.Err != nil || !e.Policy.AppliesTo(obj.Spec.SignerName) || e.Program.Version() != prg.Version() {
			// Changed since this request began: the message names prg's
			// version, and only that version's approvals are written.
			return false
		}
		v := e.Program.Evaluate(c.Request().Context(), in)
		return v.Matched && v.Err == nil && v.Decision == csrpolicy.Approve
	}
	outcomes, skipped, err := h.decisions(c).FollowPolicy(c.Request().Context(), h.user(c), prg.Version(), previewed, current, approves)
	if err != nil {
		return invalidDecision(err)
	}
	result, _ := csrBulkResult("Approved", outcomes)
	for _, s := range skipped {
		result.Failed++
		result.Items = append(result.Items, model.CSRBulkItem{Name: s.Ref.Name, Href: urls.CSR(s.Ref.Name),
			Replaced: s.Why == decide.SkipReplaced, Message: "skipped: " + s.Why + "."})
	}
	qp, _, err := h.csrQueuePage(c, csrqueue.Query{Policy: prg.Name, Verdict: csrqueue.VerdictApprove}, nil)
	if err != nil {
		return err
	}
	qp.Bulk = &result
	status := http.StatusOK
	if len(outcomes) > 0 {
		status = bulkStatus(outcomes)
	}
	return page.Render(c, status, pages.CSRQueue(qp))
}

// parsePreviewed reads the confirm form's requests, each
// "<resourceVersion>/<uid>/<name>", without blanks and duplicates.
func parsePreviewed(values []string) ([]decide.Previewed, error) {
	var out []decide.Previewed
	seen := map[string]bool{}
	for _, v := range values {
		if strings.TrimSpace(v) == "" {
			continue
		}
		rv, rest, ok := strings.Cut(strings.TrimSpace(v), "/")
		if !ok || rv == "" || strings.Trim(rv, "0123456789") != "" {
			return nil, fmt.Errorf("The confirmation %.80q does not say which version of a request it is for; open the preview again.", v)
		}
		ref, err := parseCSRRef(rest)
		if err != nil {
			return nil, err
		}
		if seen[ref.Name] {
			return nil, fmt.Errorf("%s is listed twice; open the preview again.", ref.Name)
		}
		seen[ref.Name] = true
		out = append(out, decide.Previewed{Ref: ref, ResourceVersion: rv})
	}
	return out, nil
}
