package csrpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

// Every decision a policy makes is traceable to the policy's text (issue 47,
// item 4): the Approved or Denied condition's message names the policy, its
// metadata.generation and a short hash of the expression evaluated, in one
// format defined here, with its parser beside it. The message stays for
// people:
//
//	approved by policy kubelet-serving (generation 3, expression 1a2b3c4d5e6f): <the policy's message>
//
// The part in the middle, VersionText, is the trace: it may stand inside a
// longer message (a person's "approve everything policy X approves" writes
// "Approved by <user> via clusterdesk: following policy X (generation 3,
// expression …) (shadow)"), and ParseVersion finds it there. The ledger's
// ingestion parses it out of the condition the API server's audit event
// carries (internal/ingest) and stores it in columns of its own (migration
// 00012), which the policy's page reads per version.

// HashLen is the number of hex digits of ExpressionHash: 48 bits, plenty to
// tell one policy's versions apart (a collision would need ~16 million of
// them).
const HashLen = 12

// ExpressionHash is the short hash of an expression's canonical text: the
// first HashLen hex digits of the SHA-256 of the expression with its line
// endings made \n and its leading and trailing white space removed (YAML's
// block scalars add a final newline, an editor may write \r\n; neither
// changes what CEL evaluates). Any other change, a space inside a string
// literal included, is another expression.
func ExpressionHash(expression string) string {
	canonical := strings.TrimSpace(strings.ReplaceAll(expression, "\r\n", "\n"))
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:])[:HashLen]
}

// Version is one version of a policy as a decision records it.
type Version struct {
	Policy     string
	Generation int64 // metadata.generation
	Hash       string
}

// Version is the policy's version: its name, generation and expression's hash.
func (p Policy) Version() Version {
	return Version{Policy: p.Name, Generation: p.Generation, Hash: ExpressionHash(p.Expression)}
}

// VersionText is the trace of v in a message:
// "policy <name> (generation <n>, expression <hash>)".
func VersionText(v Version) string {
	return "policy " + v.Policy + " (generation " + strconv.FormatInt(v.Generation, 10) + ", expression " + v.Hash + ")"
}

// DecisionMessage is the message of the condition a policy's verdict writes
// (the approver's): "approved by " or "denied by ", the VersionText, then
// ": " and words (the policy's message, or why a duplicate was superseded)
// when there are any.
func DecisionMessage(v Version, d Decision, words string) string {
	verb := "approved by "
	if d == Deny {
		verb = "denied by "
	}
	msg := verb + VersionText(v)
	if words != "" {
		msg += ": " + words
	}
	return msg
}

// versionPattern finds a VersionText: a policy name is an object name (a DNS
// subdomain, at most 253 characters), the generation a positive integer
// (at most 19 digits, an int64; 0 only for a policy built without an object), the hash HashLen lowercase hex digits.
var versionPattern = regexp.MustCompile(`policy ([a-z0-9][a-z0-9.-]{0,252}) \(generation (0|[1-9][0-9]{0,18}), expression ([0-9a-f]{` + strconv.Itoa(HashLen) + `})\)`)

// ParseVersion finds the first VersionText in a message (a condition's, or
// the ledger's reason, which puts the condition's reason before it) and
// returns the version it names; ok is false when there is none (a person's
// decision, an approver before issue 47's format).
func ParseVersion(msg string) (v Version, ok bool) {
	m := versionPattern.FindStringSubmatch(msg)
	if m == nil {
		return Version{}, false
	}
	gen, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return Version{}, false
	}
	return Version{Policy: m[1], Generation: gen, Hash: m[3]}, true
}

// ParseDecisionMessage reads a DecisionMessage: the decision, the version and
// the words after it; ok is false when msg is not one.
func ParseDecisionMessage(msg string) (d Decision, v Version, words string, ok bool) {
	switch {
	case strings.HasPrefix(msg, "approved by "):
		d = Approve
	case strings.HasPrefix(msg, "denied by "):
		d = Deny
	default:
		return "", Version{}, "", false
	}
	rest := msg[strings.Index(msg, " by ")+len(" by "):]
	loc := versionPattern.FindStringSubmatchIndex(rest)
	if loc == nil || loc[0] != 0 {
		return "", Version{}, "", false
	}
	v, _ = ParseVersion(rest[:loc[1]])
	tail := rest[loc[1]:]
	switch {
	case tail == "":
	case strings.HasPrefix(tail, ": "):
		words = tail[2:]
	default:
		return "", Version{}, "", false
	}
	return d, v, words, true
}
