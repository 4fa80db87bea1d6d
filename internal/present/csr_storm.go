package present

import (
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// groupRow lays out the row that stands for a storm (it.Storm): how many,
// since when, who asks, the checks once (those of it.ChecksOf), and the way
// to its requests and its actions.
func groupRow(it *csrqueue.Item, env CSRQueueEnv) *model.CSRRow {
	st := it.Storm
	g := groupModel(st, it, env)
	src := it.ChecksOf
	req, err := it.Request()
	subject, _, _ := csrSubject(req, err)
	if st.ByRequester {
		subject = strconv.Itoa(st.Subjects) + " different subjects"
	}
	oldest, _ := ageCell(metav1.NewTime(st.Oldest().Created), env.Now)
	newest, _ := ageCell(metav1.NewTime(st.Newest().Created), env.Now)
	dur, _ := requestedDuration(src.CSR)
	row := &model.CSRRow{State: CSRPending, Subject: subject, Group: g}
	row.Findings = findingModels(src.BaseFindings())
	row.Verdicts = verdictModels(it.Verdicts())
	row.Row = model.Row{
		ID:   "row-csrs-group-" + st.ID,
		Name: st.ID,
		Href: g.Href,
		Cells: []model.Cell{
			{Text: g.Title, Mono: true},
			{Badges: []model.Badge{pendingBadge}, Text: strconv.Itoa(g.Count) + " pending"},
			{},
			{Text: "oldest " + oldest.Text + ", newest " + newest.Text, Title: "oldest " + oldest.Title + "; newest " + newest.Title},
			{Text: st.Key.Signer, Mono: true},
			{Text: st.Key.Requester, Mono: true},
			{Text: dur},
			whyCell(it),
		},
	}
	return row
}

// groupModel describes a storm for its row and its filtered view; rep is the
// row's item (nil outside the row).
func groupModel(st *csrqueue.Storm, rep *csrqueue.Item, env CSRQueueEnv) *model.CSRGroup {
	g := &model.CSRGroup{
		ID:          st.ID,
		Count:       st.Size(),
		Title:       strconv.Itoa(st.Size()) + " requests from " + orDash(st.Key.Requester),
		Signer:      st.Key.Signer,
		Subject:     st.Key.Subject,
		Requester:   st.Key.Requester,
		ByRequester: st.ByRequester,
		Subjects:    st.Subjects,
		NewestName:  st.Newest().Name,
		OldestName:  st.Oldest().Name,
		Href:        urls.CSRQueueGroup(st.ID),
	}
	if rep != nil && rep.ChecksOf != nil {
		g.ChecksOf = rep.ChecksOf.CSR.Name
	}
	if env.MayDecide != nil && env.MayDecide(st.Key.Signer) {
		if !st.ByRequester {
			g.ApproveHref = urls.CSRGroup(st.ID, csrqueue.StormApproveNewest)
		}
		g.DenyHref = urls.CSRGroup(st.ID, csrqueue.StormDenyAll)
	}
	return g
}

// linkDuplicates points the duplicates finding at the queue filtered to the
// requests it counts.
func linkDuplicates(fs []model.CSRFinding, dupID string) {
	if dupID == "" {
		return
	}
	for i := range fs {
		if fs[i].Check == "duplicate" {
			fs[i].Href, fs[i].LinkText = urls.CSRQueueGroup(dupID), "Show them"
		}
	}
}

// CSRGroupPreviewPage lays out the plan of action on the storm
// (csrqueue.PlanStorm) for the person to confirm.
func CSRGroupPreviewPage(st *csrqueue.Storm, action string, limit int, now time.Time) (model.CSRGroupPreview, error) {
	plan, err := csrqueue.PlanStorm(st, action, limit)
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
	item := func(m csrqueue.Member, approve bool) model.CSRGroupDecision {
		a, _ := ageCell(metav1.NewTime(m.Created), now)
		d := model.CSRGroupDecision{Name: m.Name, UID: m.UID, Href: urls.CSR(m.Name), Age: a.Text, Approve: approve}
		if st.ByRequester {
			d.Subject = m.Subject // each its own: the person sees what each denial refuses
		}
		return d
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
	case csrqueue.StormApproveNewest:
		p.Title = "Approve the newest, deny the rest"
		if plan.Left > 0 {
			p.Note = fmt.Sprintf("The storm has %d requests; one step decides at most %d. This step denies the %d oldest and approves nothing; %d stay pending, the newest among them. Run this action again: its last step approves the newest then.",
				st.Size(), limit, len(plan.Deny), plan.Left)
		}
	default:
		p.Title = "Deny all"
		if plan.Left > 0 {
			p.Note = fmt.Sprintf("The storm has %d requests; one step decides at most %d. This step denies the %d oldest; %d stay pending. Run this action again for them.",
				st.Size(), limit, len(plan.Deny), plan.Left)
		}
	}
	return p, nil
}
