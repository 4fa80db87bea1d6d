package csrwhy

// Code is why a pending request is pending: a bounded set, safe as a metrics
// label and a filter value.
type Code string

// The codes, in the order the engine tests them (Explain): the first that
// holds is the reason.
const (
	// NoPolicy: no policy names the request's signer.
	NoPolicy Code = "NoPolicy"
	// NotForRequester: policies name the signer, none covers the requester
	// (spec.requesters).
	NotForRequester Code = "NotForRequester"
	// Superseded: a newer request of the same requester and subject (same
	// spec.username, signer, subject and usages) is there.
	Superseded Code = "Superseded"
	// PolicyError: a policy naming the signer cannot run, or could not run on
	// the request (a request that does not decode included).
	PolicyError Code = "PolicyError"
	// Conflict: two policies match and disagree.
	Conflict Code = "Conflict"
	// NodeMissing: no policy matches and the request's Node does not exist.
	NodeMissing Code = "NodeMissing"
	// ClauseFalse: no policy matches; the message names a policy's first
	// false clause.
	ClauseFalse Code = "ClauseFalse"
	// NotInstalled: a policy decides it, and no approver is installed (its
	// Lease does not exist).
	NotInstalled Code = "NotInstalled"
	// NoLeader: a policy decides it, and the approver's Lease is stale.
	NoLeader Code = "NoLeader"
	// Forbidden: the API server refused the approver `approve` on the signer (403).
	Forbidden Code = "Forbidden"
	// RateLimited: the requester's approvals within the policy's period are
	// at its limit.
	RateLimited Code = "RateLimited"
	// DryRun: the approver runs in dry run, and only says what it would decide.
	DryRun Code = "DryRun"
	// Deciding: a policy decides it, the approver leads and nothing holds it:
	// it is about to be decided (a request seen between its creation and the
	// approver's write).
	Deciding Code = "Deciding"
)

// Codes are every code, in the engine's order.
var Codes = []Code{NoPolicy, NotForRequester, Superseded, PolicyError, Conflict, NodeMissing, ClauseFalse,
	NotInstalled, NoLeader, Forbidden, RateLimited, DryRun, Deciding}

// Known reports whether s is a code (a filter's value is one, or ignored).
func Known(s string) bool {
	for _, c := range Codes {
		if string(c) == s {
			return true
		}
	}
	return false
}

// Short is the code in a few words, for the queue's column and filter.
func (c Code) Short() string {
	switch c {
	case NoPolicy:
		return "no policy for signer"
	case NotForRequester:
		return "no policy for requester"
	case Superseded:
		return "superseded"
	case PolicyError:
		return "policy error"
	case Conflict:
		return "policies disagree"
	case NodeMissing:
		return "node missing"
	case ClauseFalse:
		return "no policy matches"
	case NotInstalled:
		return "no approver installed"
	case NoLeader:
		return "no approver leads"
	case Forbidden:
		return "approver forbidden"
	case RateLimited:
		return "rate limited"
	case DryRun:
		return "approver in dry run"
	case Deciding:
		return "being decided"
	}
	return string(c)
}

// Reason is why one pending request is pending.
type Reason struct {
	Code Code
	// Message is one line for people, naming the policy, the clause and the
	// values the engine saw (empty when Input.Detail was not asked).
	Message string
	// Policy is the policy the reason is about, when one is.
	Policy string
}
