package present

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// StormPlan is what one step of a group action decides: at most one request
// to approve (the storm's newest) and the requests to deny, oldest first.
type StormPlan struct {
	Approve *csr.Pending
	Deny    []csr.Pending
	Left    int // requests of the storm this step leaves pending
}

// PlanStorm plans one step of action on the storm, deciding at most limit
// requests. A storm larger than limit is decided in steps that deny the
// oldest first and approve the newest only in the last, so that repeating
// "approve newest, deny the rest" converges and never approves two.
func PlanStorm(st *csr.Storm, action string, limit int) (StormPlan, error) {
	n := len(st.Members)
	limit = max(limit, 1)
	switch action {
	case StormApproveNewest:
		if n <= limit {
			newest := st.Newest()
			return StormPlan{Approve: &newest, Deny: st.Members[:n-1]}, nil
		}
		return StormPlan{Deny: st.Members[:limit], Left: n - limit}, nil
	case StormDenyAll:
		k := min(n, limit)
		return StormPlan{Deny: st.Members[:k], Left: n - k}, nil
	}
	return StormPlan{}, fmt.Errorf("unknown group action %q", action)
}

// CSRGroupPreviewPage lays out the plan of action on the storm for the person
// to confirm.
func CSRGroupPreviewPage(st *csr.Storm, action string, limit int, now time.Time) (model.CSRGroupPreview, error) {
	plan, err := PlanStorm(st, action, limit)
	if err != nil {
		return model.CSRGroupPreview{}, err
	}
	p := model.CSRGroupPreview{
		Group:     *groupModel(st, nil, CSRQueueEnv{}),
		Action:    action,
		DecideURL: urls.CSRGroupDecide(st.ID),
		Back:      urls.CSRQueueGroup(st.ID),
		Left:      plan.Left,
	}
	item := func(m csr.Pending, approve bool) model.CSRGroupDecision {
		a, _ := ageCell(metav1.NewTime(m.Created), now)
		return model.CSRGroupDecision{Name: m.Name, UID: m.UID, Href: urls.CSR(m.Name), Age: a.Text, Approve: approve}
	}
	if plan.Approve != nil {
		p.Items = append(p.Items, item(*plan.Approve, true))
		p.Approve = 1
	}
	for _, m := range plan.Deny {
		p.Items = append(p.Items, item(m, false))
	}
	p.Deny = len(plan.Deny)
	switch action {
	case StormApproveNewest:
		p.Title = "Approve the newest, deny the rest"
		if plan.Left > 0 {
			p.Note = fmt.Sprintf("The storm has %d requests; one step decides at most %d. This step denies the %d oldest and approves nothing; %d stay pending, the newest among them. Run this action again: its last step approves the newest then.",
				len(st.Members), limit, len(plan.Deny), plan.Left)
		}
	default:
		p.Title = "Deny all"
		if plan.Left > 0 {
			p.Note = fmt.Sprintf("The storm has %d requests; one step decides at most %d. This step denies the %d oldest; %d stay pending. Run this action again for them.",
				len(st.Members), limit, len(plan.Deny), plan.Left)
		}
	}
	return p, nil
}
