package present

import (
	"net/url"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// verdictModels words the policies' verdicts on a pending request as chips,
// each linking to the queue filtered to that policy's verdict.
func verdictModels(vs []csrpolicy.Verdict) []model.CSRVerdict {
	if len(vs) == 0 {
		return nil
	}
	out := make([]model.CSRVerdict, 0, len(vs))
	for _, v := range vs {
		key := csrqueue.VerdictKey(v)
		m := model.CSRVerdict{Policy: v.Policy, Verdict: key, Label: key + ": " + v.Policy,
			Href: urls.CSRs + "?" + url.Values{"policy": {v.Policy}, "verdict": {key}}.Encode()}
		switch key {
		case csrqueue.VerdictApprove:
			m.Tone, m.Reason = model.ToneOK, verdictReason(v)
		case csrqueue.VerdictDeny:
			m.Tone, m.Reason = model.ToneWarning, verdictReason(v)
		default:
			m.Tone, m.Reason = model.ToneError, "cannot run: "+v.Err.Error()
		}
		out = append(out, m)
	}
	return out
}

func verdictReason(v csrpolicy.Verdict) string {
	r := string(v.Decision) + " (" + v.Reason + ")"
	if v.Message != "" {
		r += ": " + v.Message
	}
	return r
}
