package present

import (
	"net/url"
	"strconv"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// NewClassifyForm is the form shown before anything is submitted.
func NewClassifyForm() model.ClassifyForm {
	return model.ClassifyForm{Verb: "get"}
}

// ClassifyRequest turns the form into the identity and request the apiserver
// would see, or field errors. A service account "ns/name" sets the user to
// system:serviceaccount:ns:name and adds its two groups; system:authenticated
// is added as the apiserver adds it, unless ExactGroups.
func ClassifyRequest(f model.ClassifyForm) (apf.Request, map[string]string) {
	errs := map[string]string{}
	var req apf.Request
	req.User = f.User
	groups := strings.FieldsFunc(f.Groups, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
	if f.ServiceAccount != "" {
		ns, name, ok := strings.Cut(f.ServiceAccount, "/")
		if !ok || ns == "" || name == "" || strings.ContainsAny(name, "/:") || strings.Contains(ns, ":") {
			errs["serviceaccount"] = "Write the service account as namespace/name, e.g. kube-system/default."
		} else {
			user, saGroups := apf.ServiceAccountUser(ns, name)
			if f.User != "" && f.User != user {
				errs["user"] = "The service account " + f.ServiceAccount + " is the user " + user + ": leave the user empty or write that."
			}
			req.User = user
			groups = append(saGroups, groups...)
		}
	}
	if req.User == "" && errs["serviceaccount"] == "" {
		errs["user"] = "Give a user name or a service account."
	}
	groups = dedupe(groups)
	if !f.ExactGroups {
		groups = apf.WithAuthGroup(req.User, groups)
	}
	req.Groups = groups
	req.Verb = f.Verb
	if req.Verb == "" {
		errs["verb"] = "Give a verb, e.g. get, list, watch, create, update, patch, delete."
	}
	if f.NonResource {
		req.Path = f.Path
		if !strings.HasPrefix(f.Path, "/") {
			errs["path"] = "Give a URL path starting with /, e.g. /healthz or /version."
		}
		return req, errs
	}
	req.IsResourceRequest = true
	req.APIGroup, req.Namespace = f.APIGroup, f.Namespace
	req.Resource, req.Subresource, _ = strings.Cut(f.Resource, "/")
	if req.Resource == "" || strings.Contains(req.Subresource, "/") {
		errs["resource"] = "Give a resource, or resource/subresource: pods, pods/status, leases."
	}
	if req.APIGroup == "core" || req.APIGroup == "v1" {
		errs["apigroup"] = "The core group is written as an empty API group."
	}
	return req, errs
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// ClassifyExamples are ready-made requests, one per common path through the
// default FlowSchemas.
func ClassifyExamples() []model.ClassifyExample {
	ex := func(label string, kv ...string) model.ClassifyExample {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return model.ClassifyExample{Label: label, Href: urls.WithQuery(urls.Classify, v)}
	}
	return []model.ClassifyExample{
		ex("A cluster admin lists pods", "user", "alice", "groups", "system:masters", "verb", "list", "resource", "pods"),
		ex("The controller manager renews its lease", "user", "system:kube-controller-manager", "verb", "update",
			"apigroup", "coordination.k8s.io", "resource", "leases", "namespace", "kube-system"),
		ex("A node reports its status", "user", "system:node:worker-1", "groups", "system:nodes", "verb", "patch", "resource", "nodes/status"),
		ex("A service account watches config maps", "serviceaccount", "default/app", "verb", "watch", "resource", "configmaps", "namespace", "default"),
		ex("An anonymous health probe", "user", apf.UserAnonymous, "kind", "nonresource", "verb", "get", "path", "/readyz"),
		ex("A user reads /version", "user", "bob", "kind", "nonresource", "verb", "get", "path", "/version"),
	}
}

// ClassifyResultView lays out a classification for the result panel.
func ClassifyResultView(res apf.Result, req apf.Request, total int) model.ClassifyResult {
	fs := res.FlowSchema
	out := model.ClassifyResult{
		Identity:      identityText(req),
		Request:       requestText(req),
		FlowSchema:    fs.Name,
		Position:      strconv.Itoa(res.Position) + " of " + strconv.Itoa(total),
		Precedence:    strconv.Itoa(int(fs.Spec.MatchingPrecedence)),
		PriorityLevel: res.PriorityLevelName,
		Distinguisher: "none",
	}
	if !res.Builtin {
		out.FlowSchemaHref = urls.Object(flowSchemasKind, fs.Name)
		out.Badges = MaintenanceBadges(fs)
	} else {
		out.Badges = []model.Badge{{Text: "Built in", Tone: model.ToneWarning, Hint: "the cluster lacks this mandatory FlowSchema; the apiserver uses its own copy"}}
	}
	if res.Fallback {
		out.MatchedRule = res.Why
		out.Badges = append(out.Badges, model.Badge{Text: "Fallback", Tone: model.ToneWarning, Hint: res.Why})
	} else {
		out.MatchedRule = "rule " + strconv.Itoa(res.Rule+1) + ": " + res.Why
	}
	switch pl := res.PriorityLevel; {
	case pl == nil:
		out.PriorityLevelType = "unknown (priority levels could not be read)"
		out.PriorityLevelHref = urls.Object(priorityLevelsKind, res.PriorityLevelName)
	default:
		out.PriorityLevelType = levelText(pl)
		if pl.UID != "" {
			out.PriorityLevelHref = urls.Object(priorityLevelsKind, pl.Name)
		} else {
			out.PriorityLevelBadge = []model.Badge{{Text: "Built in", Tone: model.ToneWarning, Hint: "the cluster lacks this mandatory priority level; the apiserver uses its own copy"}}
		}
	}
	d := res.Distinguisher
	if d.Method != "" {
		out.Distinguisher, out.DistinguisherValue = d.Method, d.Value
	}
	out.DistinguisherNote = distinguisherNote(d)
	for _, s := range res.Trace {
		out.Trace = append(out.Trace, stepView(s))
	}
	return out
}

func distinguisherNote(d apf.Distinguisher) string {
	switch {
	case !d.Known:
		return "Whether the priority level queues is unknown, so whether this value is used is too."
	case !d.Used:
		return "Not used: the priority level does not queue (exempt, reject, or a single queue), so every request of this FlowSchema is one flow."
	case d.Method == "":
		return "No distinguisher: every request of this FlowSchema is one flow."
	case d.Value == "":
		return "Empty (a cluster-scoped or non-resource request has no namespace): all such requests of this FlowSchema share one flow."
	}
	return "Requests with this value form one flow; flows are queued fairly against each other."
}

func stepView(s apf.Step) model.ClassifyStep {
	fs := s.FlowSchema
	v := model.ClassifyStep{
		Position:   strconv.Itoa(s.Position),
		FlowSchema: fs.Name,
		Precedence: strconv.Itoa(int(fs.Spec.MatchingPrecedence)),
		Matched:    s.Outcome == apf.Matched,
	}
	if !s.Builtin {
		v.Href = urls.Object(flowSchemasKind, fs.Name)
	}
	switch s.Outcome {
	case apf.Matched:
		v.Outcome = model.Badge{Text: "Matched", Tone: model.ToneOK}
	case apf.Skipped:
		v.Outcome = model.Badge{Text: "Skipped", Tone: model.ToneWarning, Hint: "dangling: its priority level does not exist"}
		v.Reasons = []string{"Skipped: priority level " + strconv.Quote(fs.Spec.PriorityLevelConfiguration.Name) + " does not exist."}
	default:
		v.Outcome = model.Badge{Text: "No match", Tone: model.ToneNeutral}
	}
	if len(fs.Spec.Rules) == 0 && s.Outcome == apf.NoMatch {
		v.Reasons = []string{"It has no rules."}
	}
	for _, r := range s.Rules {
		v.Reasons = append(v.Reasons, "rule "+strconv.Itoa(r.Index+1)+": "+r.Why)
	}
	return v
}

func identityText(req apf.Request) string {
	if len(req.Groups) == 0 {
		return "user " + req.User + ", in no group"
	}
	return "user " + req.User + " in groups " + strings.Join(req.Groups, ", ")
}

func requestText(req apf.Request) string {
	if !req.IsResourceRequest {
		return req.Verb + " " + req.Path + " (non-resource)"
	}
	res := req.Resource
	if req.Subresource != "" {
		res += "/" + req.Subresource
	}
	group := "core group"
	if req.APIGroup != "" {
		group = "group " + req.APIGroup
	}
	where := "cluster-scoped"
	if req.Namespace != "" {
		where = "in namespace " + req.Namespace
	}
	return req.Verb + " " + res + " (" + group + "), " + where
}

func levelText(pl *flowcontrolv1.PriorityLevelConfiguration) string {
	if pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt {
		return "Exempt: not limited"
	}
	lim := pl.Spec.Limited
	if lim == nil {
		return string(pl.Spec.Type)
	}
	shares := int32Ptr(lim.NominalConcurrencyShares)
	if lim.LimitResponse.Type == flowcontrolv1.LimitResponseTypeReject || lim.LimitResponse.Queuing == nil {
		return "Limited (" + shares + " shares), rejects when busy"
	}
	q := lim.LimitResponse.Queuing
	return "Limited (" + shares + " shares), queues: " + strconv.Itoa(int(q.Queues)) + " queues, hand size " +
		strconv.Itoa(int(q.HandSize)) + ", " + strconv.Itoa(int(q.QueueLengthLimit)) + " per queue"
}
