package present

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The policy page's "Agreement with the API server" (issue 45): the replay
// of the deployed version against the API server's own validation_failure
// annotations of the same requests.
const (
	agreementTitle  = "Agreement with the API server"
	agreementTestID = "policy-agreement"
)

// AgreementPending is the section as the policy's page first shows it: the
// comparison reads the recorded writes, so the page fetches it once shown
// (Follow) rather than wait for it; without script, a link to it.
func AgreementPending(policy string) model.Insight {
	href := urls.PolicyAgreement(policy)
	return model.Insight{Title: agreementTitle, TestID: agreementTestID, Follow: href,
		Intro: "Comparing the replay of the deployed version with the API server's own audit annotations of the recorded writes…",
		Fields: []model.RichField{{Label: "Comparison", Value: model.Rich{Text: "Open the comparison", Href: href},
			Hint: "replays the deployed policy and its bindings over the recorded writes"}}}
}

// policyAgreement is the section on the policy's page: fetched once the
// page is shown, unless the policy's bindings are known and none audits,
// which says there is nothing to compare without reading a write.
func policyAgreement(policy string, using []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, unknown bool) model.Insight {
	if unknown || slices.ContainsFunc(using, replay.Audits) {
		return AgreementPending(policy)
	}
	var names []string
	for _, b := range using {
		names = append(names, b.Name)
	}
	return Agreement(replay.Agreement{NotAuditing: names}, "", nil)
}

// AgreementMessage is the section when no comparison ran, saying why.
func AgreementMessage(message string) model.Insight {
	return model.Insight{Title: agreementTitle, TestID: agreementTestID, Intro: message}
}

// Agreement words a comparison. stopped is set when it was stopped before
// the end of its window (its bound); the numbers then cover the oldest
// writes. namespacesErr is why today's namespaces could not be read, if so.
func Agreement(a replay.Agreement, stopped string, namespacesErr error) model.Insight {
	in := model.Insight{Title: agreementTitle, TestID: agreementTestID,
		Intro: "The deployed policy and bindings replayed over the recorded writes, request by request, against the API server's own " +
			"validation_failure audit annotations of the same requests: it writes them for the bindings with the Audit action. " +
			"You see only requests of resources you may list."}
	if len(a.Bindings) == 0 {
		msg := "The API server annotates a failed validation only under a binding with the Audit action; this policy has none"
		if len(a.NotAuditing) > 0 {
			msg += " (" + plural(len(a.NotAuditing), "binding", "bindings") + " without it)"
		}
		in.Findings = append(in.Findings, model.Finding{Code: "agreement-no-audit", Tone: model.ToneNeutral,
			Title: "No binding with Audit: nothing to compare", Message: msg + "."})
		return in
	}
	pct := "—"
	if a.Compared > 0 {
		pct = strconv.FormatFloat(a.Percent(), 'f', 1, 64) + "%"
	}
	num := func(n int64) model.Rich { return model.Rich{Text: strconv.FormatInt(n, 10), Mono: true} }
	var lines []string
	for _, b := range a.Bindings {
		line := fmt.Sprintf("%s: %d of %d agree, since %s (audited: %d by the API server, %d by the replay)",
			b.Binding, b.Agreed, b.Compared, b.Since.UTC().Format(time.DateTime), b.AuditedByAPIServer, b.AuditedByReplay)
		if !b.Done {
			line += "; not finished"
		}
		lines = append(lines, line)
	}
	in.Fields = []model.RichField{
		{Label: "Requests compared", Value: num(a.Compared), Hint: "per auditing binding: a request two bindings match counts twice"},
		{Label: "Agreeing", Value: num(a.Agreed)},
		{Label: "Agreement", Value: model.Rich{Text: pct, Mono: true}},
		{Label: "Disagreeing", Value: num(a.Compared - a.Agreed)},
		{Label: "Bindings compared", Value: model.Rich{Lines: lines, Mono: true},
			Hint: "each since its deployed version's last change (creation or managed fields), UTC"},
	}
	if len(a.NotAuditing) > 0 {
		in.Fields = append(in.Fields, model.RichField{Label: "Not compared", Value: model.Rich{Lines: a.NotAuditing, Mono: true},
			Hint: "bindings without the Audit action: the API server annotates nothing for them"})
	}
	in.Fields = append(in.Fields, model.RichField{Label: "Compared in", Value: model.Rich{Text: a.Elapsed.Round(time.Millisecond).String()}})
	if a.Compared == 0 {
		in.Findings = append(in.Findings, model.Finding{Code: "agreement-none", Tone: model.ToneNeutral, Title: "No request to compare",
			Message: "No recorded write of a resource you may list since the deployed version's last change."})
	}
	if stopped != "" {
		in.Findings = append(in.Findings, model.Finding{Code: "agreement-stopped", Tone: model.ToneWarning, Title: "Not finished", Message: stopped})
	}
	if namespacesErr != nil {
		// The selectors then meet no namespace's labels: say why.
		in.Findings = append(in.Findings, model.Finding{Code: "agreement-namespaces", Tone: model.ToneWarning, Title: "Namespaces not read",
			Message: "The namespaces could not be read as you (" + namespacesErr.Error() + "): namespace selectors matched no labels."})
	}
	if a.Unreadable > 0 {
		in.Findings = append(in.Findings, model.Finding{Code: "agreement-unreadable", Tone: model.ToneWarning, Title: "Unreadable annotations",
			Message: plural(int(a.Unreadable), "request's annotation was", "requests' annotations were") + " not the API server's JSON: not compared."})
	}
	in.Findings = append(in.Findings, model.Finding{Code: "agreement-limits", Tone: model.ToneNeutral, Title: "What the replay cannot know",
		Message: "Namespace labels and params are today's; a write in the moment after a change, before the API server applied it, met the version before; " +
			"a request refused before validating admission (a mutating webhook, the object's validation) carries no annotation."})
	rows := make([]model.RichRow, 0, len(a.Disagreements))
	for _, d := range a.Disagreements {
		ns := d.Namespace
		if ns != "" {
			ns += "/"
		}
		api := model.Rich{Text: "not audited"}
		if d.APIServer {
			api = model.Rich{Text: "audited", Lines: nonEmpty(d.APIServerMessage)}
		}
		rows = append(rows, model.RichRow{TestID: "agreement-disagreement", Cells: []model.Rich{
			{Text: d.Time.UTC().Format(time.DateTime), Href: ledgerHref(d.GroupKey, d.Name), Mono: true, Hint: "audit ID " + d.AuditID},
			{Lines: []string{d.Operation + " " + d.Resource + " " + ns + d.Name, "by " + d.User + ", HTTP " + strconv.Itoa(d.Code)}, Mono: true},
			{Text: d.Binding, Mono: true},
			{Text: d.Replay, Lines: nonEmpty(d.ReplayMessage)},
			api,
		}})
	}
	in.Table = &model.RichTable{Columns: []string{"Time (UTC)", "Request", "Binding", "Replay", "API server"}, Rows: rows,
		Empty: "No disagreement."}
	if a.DisagreementsLeftOut > 0 {
		in.Findings = append(in.Findings, model.Finding{Code: "agreement-left-out", Tone: model.ToneNeutral, Title: "More disagreements",
			Message: fmt.Sprintf("%d more disagreements are counted but not listed.", a.DisagreementsLeftOut)})
	}
	return in
}

// nonEmpty is s as one line, or none.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
