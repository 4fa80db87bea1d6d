package present

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/durationtext"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/ledgerview"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// LedgerAbout words the ledger's Stats for the pages' header.
func LedgerAbout(s ledger.Stats) model.LedgerAbout {
	a := model.LedgerAbout{Backend: s.Backend, Entries: thousands(int(s.Entries)) + " entries", Oldest: "none yet",
		Retention: "kept forever"}
	switch s.Backend {
	case "sqlite":
		a.Backend = "SQLite (embedded)"
	case "postgres":
		a.Backend = "PostgreSQL"
	}
	if s.Entries == 1 {
		a.Entries = "1 entry"
	}
	if !s.Oldest.IsZero() {
		a.Oldest = LedgerTime(s.Oldest)
	}
	if s.Retention > 0 {
		a.Retention = "kept " + retention(s.Retention)
	}
	if s.MaxEntries > 0 {
		a.Retention += ", at most " + thousands(int(s.MaxEntries)) + " entries"
	}
	if s.PrunedForSize > 0 {
		a.Retention += " (" + thousands(int(s.PrunedForSize)) + " oldest pruned for size since the console started)"
	}
	return a
}

// retention words a retention period in whole days, or hours below a day.
func retention(d time.Duration) string {
	if d < 24*time.Hour {
		h := int(d.Hours())
		if h <= 1 {
			return "1 hour"
		}
		return strconv.Itoa(h) + " hours"
	}
	days := int(d / (24 * time.Hour))
	if days == 1 {
		return "1 day"
	}
	return thousands(days) + " days"
}

// LedgerRow presents one entry. kind is the kind's singular title ("" when
// the console does not know the kind: the resource is shown).
func LedgerRow(e ledger.Entry, kind string) model.LedgerRow {
	r := model.LedgerRow{
		Time: LedgerTime(e.Time), User: e.User, Impersonator: e.Impersonator, Action: e.Action, DryRun: e.DryRun,
		KindID: e.Kind, Kind: kind, Name: e.Name, Signer: e.Signer, Reason: e.Reason,
		Result: strings.TrimSpace(e.Result + " " + code(e.Code)),
	}
	if r.Kind == "" {
		r.Kind = e.Resource
	}
	if r.Action == "" {
		r.Action = e.Verb
	}
	if !e.Time.IsZero() {
		r.TimeISO = e.Time.UTC().Format(time.RFC3339Nano)
	}
	if e.User != "" {
		r.UserHref = urls.LedgerUser(e.User)
	}
	if e.Signer != "" {
		r.SignerHref = urls.LedgerSigner(e.Signer)
	}
	if e.Kind != "" && e.Name != "" {
		r.HistoryHref = urls.LedgerObject(e.Kind, e.Name, "")
	}
	switch e.Source {
	case ledger.SourceAPIServer:
		r.Source = "API server"
	case ledger.SourceConsole:
		r.Source = "console"
	case ledger.SourceWatch:
		// What the watch observed says what changed, not who: the field
		// managers it credits stand where a user would, named as such.
		r.Source, r.Manager = "observed", e.Manager
	default:
		r.Source = e.Source
	}
	switch e.Result {
	case ledger.ResultOK:
		r.ResultTone = model.ToneOK
	case ledger.ResultDenied:
		r.ResultTone = model.ToneError
	case ledger.ResultFailed:
		r.ResultTone = model.ToneWarning
	default:
		r.ResultTone = model.ToneNeutral
	}
	r.ActionTone = actionTone(e.Action)
	return r
}

func code(c int) string {
	if c == 0 {
		return ""
	}
	return strconv.Itoa(c)
}

func actionTone(a string) model.Tone {
	switch a {
	case ledger.ActionCreate, ledger.ActionApprove, ledger.ActionIssue:
		return model.ToneOK
	case ledger.ActionDelete, ledger.ActionDeny:
		return model.ToneError
	case ledger.ActionUpdate, ledger.ActionStatus:
		return model.TonePending
	}
	return model.ToneNeutral
}

// ObservedDisclaimer says what the versions the watch observed can and
// cannot tell.
const ObservedDisclaimer = "Every version of the console's kinds its watch observed while it ran, with the diff " +
	"from the version observed before and the field managers credited (a field manager is not a person). Changes " +
	"while no console ran, or between two observed versions, are not seen. The API server's audit log is the authority."

// LedgerHeading is the ledger page's heading and introduction: a page of one
// user or one signer says so.
func LedgerHeading(f ledgerview.Filter) (heading, intro string) {
	switch {
	case f.User != "" && f.Signer != "":
		return "What " + f.User + " did to requests for " + f.Signer, "Every change this user made, or tried, to the signer's requests."
	case f.User != "":
		return "What " + f.User + " did", "Every change this user made or tried, through the console or any other client."
	case f.Signer != "":
		return "Decisions for signer " + f.Signer, "Every request for this signer: created, approved, denied, issued, deleted."
	case f.Source == ledger.SourceWatch:
		return "Observed versions", ObservedDisclaimer
	}
	return "Ledger", "Every change to the kinds clusterdesk shows, from every client, kept in the console's database."
}

// LedgerFold is the line saying the list leaves out the control plane's
// housekeeping (ledger.HousekeepingSQL) and the link that shows it, or that
// it is shown and the link that folds it again; nil when the filter folds
// nothing. It gives no count: counting what is hidden reads every entry of
// the window, the cost the fold's index exists to avoid.
func LedgerFold(f ledgerview.Filter) *model.LedgerFold {
	if !f.MayFold() {
		return nil
	}
	v := f.Values()
	if f.Folds() {
		v.Set("housekeeping", ledgerview.HousekeepingShow)
		return &model.LedgerFold{Hidden: true,
			Text: "Housekeeping by the control plane is hidden: status writes and updates by the API server, " +
				"the controller manager, the scheduler and kube-system's service accounts. " +
				"Their creates, deletes, refused writes and anything of a CSR are listed.",
			Link: "Show housekeeping", Href: urls.WithQuery(urls.Ledger, v)}
	}
	v.Del("housekeeping")
	return &model.LedgerFold{Text: "Housekeeping by the control plane is shown.", Link: "Hide housekeeping",
		Href: urls.WithQuery(urls.Ledger, v)}
}

// LedgerOptions are the filter form's choices with the filter's ticked.
func LedgerOptions(f ledgerview.Filter) (actions, results, sources []model.Option) {
	for _, a := range ledgerview.Actions {
		actions = append(actions, model.Option{Value: a, Label: a, Selected: slices.Contains(f.Actions, a)})
	}
	results = []model.Option{{Value: "", Label: "Any result", Selected: f.Result == ""}}
	for _, r := range ledgerview.Results {
		results = append(results, model.Option{Value: r, Label: r, Selected: f.Result == r})
	}
	sources = []model.Option{{Value: "", Label: "Every client", Selected: f.Source == ""},
		{Value: ledger.SourceAPIServer, Label: "API server audit", Selected: f.Source == ledger.SourceAPIServer},
		{Value: ledger.SourceConsole, Label: "The console's writes", Selected: f.Source == ledger.SourceConsole},
		{Value: ledger.SourceWatch, Label: "Observed by the watch", Selected: f.Source == ledger.SourceWatch}}
	return actions, results, sources
}

// LedgerStep presents one step of an object's history, with its diff when
// the console or the watch recorded one (StepDiff).
func LedgerStep(e ledger.Entry, kind string) model.LedgerStep {
	return model.LedgerStep{Row: LedgerRow(e, kind), Diff: StepDiff(e)}
}

// LedgerCSR words a CSR's story: the request decoded, the decisions, the
// certificates issued.
func LedgerCSR(s ledgerview.CSRStory) *model.LedgerCSR {
	out := &model.LedgerCSR{RequestErr: s.RequestErr}
	if r := s.Request; r != nil {
		out.Request = []model.Field{{Label: "Subject", Value: orDash(r.Subject), Mono: true}}
		sans := append(append(append(append([]string{}, r.DNSNames...), r.IPAddresses...), r.EmailAddresses...), r.URIs...)
		out.Request = append(out.Request, listField("Subject alternative names", sans))
		out.Request = append(out.Request, model.Field{Label: "Key", Value: orDash(r.PublicKey)})
	}
	out.Request = append(out.Request, listField("Usages", s.Usages),
		model.Field{Label: "Signer", Value: orDash(s.Signer), Mono: true},
		model.Field{Label: "Requester", Value: orDash(s.Requester), Mono: true})
	if s.ExpirationSeconds > 0 {
		out.Request = append(out.Request, model.Field{Label: "Requested validity",
			Value: durationtext.Short(time.Duration(s.ExpirationSeconds) * time.Second)})
	}
	for _, d := range s.Decisions {
		out.Decisions = append(out.Decisions, LedgerRow(d, ""))
	}
	for _, c := range s.Certificates {
		lc := model.LedgerCertificate{Time: LedgerTime(c.Entry.Time), Serial: c.Serial, Subject: c.Subject,
			Issuer: c.Issuer, Err: c.Err}
		if c.Err == "" {
			lc.NotBefore, lc.NotAfter = LedgerTime(c.NotBefore), LedgerTime(c.NotAfter)
		}
		out.Issued = append(out.Issued, lc)
	}
	return out
}

// maxListed is how many values a field lists before "N more" (a request may
// carry hundreds of SANs).
const maxListed = 10

func listField(label string, vals []string) model.Field {
	f := model.Field{Label: label, Value: "—", Mono: true}
	if len(vals) == 0 {
		return f
	}
	shown := vals
	if len(shown) > maxListed {
		shown, f.More = vals[:maxListed], vals[maxListed:]
	}
	f.Value = strings.Join(shown, ", ")
	return f
}
