package present

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Group actions, as the preview's action parameter names them.
const (
	StormApproveNewest = "approve-newest" // approve the newest request, deny the others
	StormDenyAll       = "deny-all"
)

// validGroupID reports whether id has the shape csr.Storms gives IDs ("s-" or
// "d-" and 12 hex digits), so nothing else travels in the queue's links.
func validGroupID(id string) bool {
	if len(id) != 14 || (id[:2] != "s-" && id[:2] != "d-") {
		return false
	}
	for _, ch := range id[2:] {
		if (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
			return false
		}
	}
	return true
}

// ValidGroupID is validGroupID for the handlers' path parameter.
func ValidGroupID(id string) bool { return validGroupID(id) }

// collapseStorms keeps, of each storm's pending requests in kept (in order),
// the first, marked to stand for the storm's group row; the checks shown are
// those of the storm's newest request (the one "approve newest" approves)
// when it is in kept.
func collapseStorms(kept []*queueItem, storms *csr.Storms) []*queueItem {
	if storms.Len() == 0 {
		return kept
	}
	first := map[string]*queueItem{}
	out := kept[:0:0]
	for _, it := range kept {
		var st *csr.Storm
		if it.state == CSRPending && !it.bad {
			st = storms.Of(it.c.Name)
		}
		if st == nil {
			out = append(out, it)
			continue
		}
		rep, seen := first[st.ID]
		if !seen {
			rep = &queueItem{c: it.c, f: it.f, state: it.state, status: it.status, storm: st, checksOf: it}
			first[st.ID] = rep
			out = append(out, rep)
		}
		if it.c.Name == st.Newest().Name {
			rep.checksOf = it
		}
	}
	return out
}

// groupRow lays out the row that stands for a storm: how many, since when,
// who asks, the checks once, and the way to its requests and its actions.
func groupRow(it *queueItem, storms *csr.Storms, env CSRQueueEnv) *model.CSRRow {
	st := it.storm
	g := groupModel(st, it, env)
	src := it.checksOf
	base, _ := src.f.check(src.c, env.Checks)
	f := it.f.decoded(it.c, env.Checks)
	oldest, _ := ageCell(metav1.NewTime(st.Oldest().Created), env.Now)
	newest, _ := ageCell(metav1.NewTime(st.Newest().Created), env.Now)
	dur := f.dur
	if src != it {
		dur = src.f.decoded(src.c, env.Checks).dur
	}
	row := &model.CSRRow{State: CSRPending, Subject: f.subject, Group: g}
	row.Findings = findingModels(base)
	row.Row = model.Row{
		ID:   "row-csrs-group-" + st.ID,
		Name: st.ID,
		Href: g.Href,
		Cells: []model.Cell{
			{Text: g.Title, Mono: true},
			{Badges: []model.Badge{it.status}, Text: strconv.Itoa(g.Count) + " pending"},
			{},
			{Text: "oldest " + oldest.Text + ", newest " + newest.Text, Title: "oldest " + oldest.Title + "; newest " + newest.Title},
			{Text: st.Key.Signer, Mono: true},
			{Text: st.Key.Requester, Mono: true},
			{Text: dur},
		},
	}
	return row
}

// groupModel describes a storm for its row and its filtered view; rep is the
// row's item (nil outside the row).
func groupModel(st *csr.Storm, rep *queueItem, env CSRQueueEnv) *model.CSRGroup {
	g := &model.CSRGroup{
		ID:         st.ID,
		Count:      len(st.Members),
		Title:      strconv.Itoa(len(st.Members)) + " requests from " + orDash(st.Key.Requester),
		Signer:     st.Key.Signer,
		Subject:    st.Key.Subject,
		Requester:  st.Key.Requester,
		NewestName: st.Newest().Name,
		OldestName: st.Oldest().Name,
		Href:       urls.CSRQueueGroup(st.ID),
	}
	if rep != nil && rep.checksOf != nil {
		g.ChecksOf = rep.checksOf.c.Name
	}
	if env.MayDecide != nil && env.MayDecide(st.Key.Signer) {
		g.ApproveHref = urls.CSRGroup(st.ID, StormApproveNewest)
		g.DenyHref = urls.CSRGroup(st.ID, StormDenyAll)
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
