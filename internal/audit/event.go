package audit

import (
	"fmt"
	"strings"
	"time"
)

// Event is the Kubernetes Event a Record becomes (events.k8s.io/v1 fields),
// described without client-go so it can be tested here; Object is the API
// object kube.EventWriter creates (through KubeEvents).
type Event struct {
	Namespace string
	Regarding Ref
	Type      string // Normal or Warning
	Reason    string // ClusterdeskUpdate, ClusterdeskApprove…
	Action    string // what was done: Update, DryRunUpdate…
	Note      string // one line for `kubectl get events`
	Time      time.Time
}

// Ref names the object an Event is about.
type Ref struct {
	APIVersion string
	Kind       string
	Name       string
	UID        string
}

// maxNote is the API server's limit on an Event's note (1 kB).
const maxNote = 1024

// EventNamespace is where an Event about an object of namespace objNS goes.
// The API server accepts Events about cluster-scoped objects only in "default"
// or "kube-system" (or no namespace), so another configured namespace is used
// only for namespaced objects; cluster-scoped ones go to "default", as kubectl's.
func EventNamespace(configured, objNS string) string {
	if objNS != "" {
		return objNS
	}
	if configured == "kube-system" {
		return configured
	}
	return "default"
}

// EventFor describes the Event of a record: Warning for a refusal, with the
// user, verb, result, versions and the approver's reason in the note. The diff
// stays in the JSON line: a note holds 1 kB.
func EventFor(r Record, configuredNS string) Event {
	verb := title(r.Verb)
	ev := Event{
		Namespace: EventNamespace(configuredNS, ""),
		Regarding: Ref{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID},
		Type:      "Normal",
		Reason:    "Clusterdesk" + verb,
		Action:    verb,
		Time:      r.Time,
	}
	if r.DryRun {
		ev.Action = "DryRun" + verb
	}
	if r.Result != ResultOK {
		ev.Type = "Warning"
		ev.Reason += strings.ToUpper(r.Result[:1]) + r.Result[1:] // ClusterdeskUpdateDenied
	}
	var b strings.Builder
	// "alice approved", "alice dry-ran update of", "alice tried to approve".
	what := pastTense(r.Verb)
	switch {
	case r.Result != ResultOK:
		what = "tried to " + r.Verb
	case r.DryRun:
		what = "dry-ran " + r.Verb + " of"
	}
	fmt.Fprintf(&b, "%s %s %s %s via clusterdesk", r.User, what, r.Kind, r.Name)
	if r.DryRun {
		b.WriteString(" (dry run)")
	}
	switch r.Result {
	case ResultOK:
		b.WriteString(": ok")
	default:
		fmt.Fprintf(&b, ": %s", r.Result)
		if r.ErrorReason != "" {
			fmt.Fprintf(&b, " (%s)", r.ErrorReason)
		}
	}
	if r.RVBefore != "" || r.RVAfter != "" {
		fmt.Fprintf(&b, "; resourceVersion %s → %s", orDash(r.RVBefore), orDash(r.RVAfter))
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "; reason: %s", r.Reason)
	}
	if r.Error != "" && r.Result != ResultOK {
		fmt.Fprintf(&b, "; %s", r.Error)
	}
	ev.Note = truncate(b.String(), maxNote)
	return ev
}

// title is a verb in CamelCase for Event reasons and actions: "apply-force"
// is "ApplyForce".
func title(s string) string {
	if s == "" {
		return "Write"
	}
	var b strings.Builder
	for _, part := range strings.Split(s, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func pastTense(verb string) string {
	switch verb {
	case "approve":
		return "approved"
	case "deny":
		return "denied"
	case "issue":
		return "issued" // a certificate uploaded for a custom signer's CSR
	case "create":
		return "created"
	case "update":
		return "updated"
	case "delete":
		return "deleted"
	case "apply":
		return "applied"
	case "apply-force":
		return "force-applied"
	}
	return verb
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !validStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func validStart(b byte) bool { return b&0xC0 != 0x80 }
