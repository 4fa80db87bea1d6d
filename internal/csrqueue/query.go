package csrqueue

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// Query is what the browser asked of the queue.
type Query struct {
	Filter    string // q: free text over the visible columns
	State     string // state: "" for all, or a state key
	Signer    string // signer: exact
	Requester string // requester: part of the username or a group
	Age       string // age: one of Ages' keys
	Group     string // group: a storm's or a duplicate set's ID (Storms), its members one row each
	Sort      string // sort: a Sort key; "" is queue order
	Desc      bool   // dir=desc
	Page      int    // page: 1-based; 0 is the first page
	// Selector is the label selector as typed (selector=, kubectl -l syntax);
	// the handler parses it into Env.Labels.
	Selector string
	// Policy keeps the pending requests a CSR approval policy matches
	// (policy=, its name), Verdict those with that verdict (verdict=:
	// approve, deny or error; alone: of any policy).
	Policy, Verdict string
	// Why keeps the pending requests pending for that reason (why=, a
	// csrwhy code: issue 47).
	Why string
}

// Sort keys: the queue's columns, in order. SortQueue, the first, is the
// queue order.
const (
	SortQueue     = "queue"
	SortState     = "condition"
	SortChecks    = "checks"
	SortAge       = "age"
	SortSigner    = "signer"
	SortRequestor = "requestor"
	SortDuration  = "duration"
)

// SortKeys are the sort keys, in the order of the queue's columns.
var SortKeys = []string{SortQueue, SortState, SortChecks, SortAge, SortSigner, SortRequestor, SortDuration}

// Age is one choice of the age filter: created less or more than a duration ago.
type Age struct {
	Key, Label string
	Limit      time.Duration // negative: younger than -Limit; positive: older than Limit
}

// Ages are the age filter's choices.
var Ages = []Age{
	{"lt1h", "Newer than 1 hour", -time.Hour},
	{"lt24h", "Newer than 1 day", -24 * time.Hour},
	{"gt1h", "Older than 1 hour", time.Hour},
	{"gt24h", "Older than 1 day", 24 * time.Hour},
	{"gt7d", "Older than 7 days", 7 * 24 * time.Hour},
}

// ParseQuery reads the queue's query parameters. Unknown states, ages and
// sort keys are dropped rather than refused: an old bookmark still opens.
func ParseQuery(v url.Values) Query {
	q := Query{
		Filter:    strings.TrimSpace(v.Get("q")),
		State:     v.Get("state"),
		Signer:    strings.TrimSpace(v.Get("signer")),
		Requester: strings.TrimSpace(v.Get("requester")),
		Selector:  strings.TrimSpace(v.Get("selector")),
		Age:       v.Get("age"),
		Group:     v.Get("group"),
		Sort:      v.Get("sort"),
		Desc:      v.Get("dir") == "desc",
		Page:      parsePage(v),
		Policy:    v.Get("policy"),
		Verdict:   v.Get("verdict"),
		Why:       v.Get("why"),
	}
	if !slices.Contains(States, q.State) {
		q.State = ""
	}
	if _, ok := ageLimit(q.Age); !ok {
		q.Age = ""
	}
	if !slices.Contains(SortKeys, q.Sort) {
		q.Sort = ""
	}
	if !ValidGroupID(q.Group) {
		q.Group = ""
	}
	if !csrwhy.Known(q.Why) {
		q.Why = ""
	}
	if !validPolicyName(q.Policy) {
		q.Policy = ""
	}
	if !slices.Contains([]string{VerdictApprove, VerdictDeny, VerdictError}, q.Verdict) {
		q.Verdict = ""
	}
	return q
}

// parsePage reads page=N (1-based); anything else is 0, the first page.
func parsePage(v url.Values) int {
	n, err := strconv.Atoi(v.Get("page"))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// Values encodes the query as URL parameters, leaving out defaults and the
// page: a link that changes the filter, tab or sort starts on the first page.
func (q Query) Values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", q.Filter)
	set("state", q.State)
	set("signer", q.Signer)
	set("requester", q.Requester)
	set("selector", q.Selector)
	set("age", q.Age)
	set("group", q.Group)
	set("policy", q.Policy)
	set("verdict", q.Verdict)
	set("why", q.Why)
	set("sort", q.Sort)
	if q.Desc {
		v.Set("dir", "desc")
	}
	return v
}

// Href is action with the query (Values).
func (q Query) Href(action string) string {
	if enc := q.Values().Encode(); enc != "" {
		return action + "?" + enc
	}
	return action
}

func ageLimit(key string) (time.Duration, bool) {
	if key == "" {
		return 0, true
	}
	for _, a := range Ages {
		if a.Key == key {
			return a.Limit, true
		}
	}
	return 0, false
}

func ageMatches(limit time.Duration, created, now time.Time) bool {
	age := now.Sub(created)
	switch {
	case limit < 0:
		return age < -limit
	case limit > 0:
		return age > limit
	}
	return true
}

// validPolicyName reports whether name may be a policy's (a DNS subdomain's
// characters and length), so nothing else travels in the queue's links.
func validPolicyName(name string) bool {
	if len(name) > 253 {
		return false
	}
	for _, ch := range name {
		if (ch < 'a' || ch > 'z') && (ch < '0' || ch > '9') && ch != '-' && ch != '.' {
			return false
		}
	}
	return true
}

// ValidGroupID reports whether id has the shape Storms gives IDs ("s-", "r-"
// or "d-" and 12 hex digits), so nothing else travels in the queue's links and
// paths.
func ValidGroupID(id string) bool {
	if len(id) != 14 || (id[:2] != "s-" && id[:2] != "r-" && id[:2] != "d-") {
		return false
	}
	for _, ch := range id[2:] {
		if (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
			return false
		}
	}
	return true
}
