package apf

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Outcome is what happened to one FlowSchema during classification.
type Outcome string

const (
	// Skipped: the FlowSchema is dangling (its priority level is missing), so
	// the apiserver does not evaluate it.
	Skipped Outcome = "skipped"
	// NoMatch: evaluated, and no rule matches.
	NoMatch Outcome = "no match"
	// Matched: the first FlowSchema whose rules match; classification stops here.
	Matched Outcome = "matched"
)

// Step is one FlowSchema in the classification trace.
type Step struct {
	Entry
	Outcome Outcome
	Rules   []RuleResult // one per rule evaluated; empty when skipped or ruleless
}

// Distinguisher is the flow distinguisher of the classified request.
type Distinguisher struct {
	// Method is "ByUser", "ByNamespace", or "" when the FlowSchema has none.
	Method string
	// Value is what the method picks: the user name (ByUser) or the request's
	// namespace (ByNamespace; "" for cluster-scoped and non-resource requests).
	Value string
	// Used is false when the priority level does not queue (Exempt, Reject,
	// or a single queue): the apiserver then computes no distinguisher at all
	// and every request of the FlowSchema is one flow.
	Used bool
	// Known is false when the priority level could not be read, so Used is a guess.
	Known bool
}

// Result is the classification of one request.
type Result struct {
	// FlowSchema is the matching FlowSchema: the first in evaluation order
	// whose rules match.
	FlowSchema *flowcontrolv1.FlowSchema
	Position   int
	Builtin    bool // the apiserver's built-in copy of exempt or catch-all
	// Rule is the index of the matching rule; -1 on Fallback.
	Rule int
	Why  string
	// Fallback: no FlowSchema matched (a user in neither system:authenticated
	// nor system:unauthenticated); the apiserver then uses catch-all anyway.
	Fallback bool
	// PriorityLevel is the level the request goes to, or nil when priority
	// levels could not be read; PriorityLevelName is always set.
	PriorityLevel     *flowcontrolv1.PriorityLevelConfiguration
	PriorityLevelName string
	Distinguisher     Distinguisher
	// Trace lists every FlowSchema evaluated (or skipped) before the match, in
	// order, then the match itself.
	Trace []Step
}

// Classify returns the FlowSchema and priority level the apiserver picks for
// req, mirroring startRequest in k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go
// (v0.36.3): the first non-dangling FlowSchema in Sequence order whose rules
// match wins. levels may be nil when priority levels cannot be read (then the
// FlowSchemas' Dangling conditions decide what is skipped).
func Classify(schemas []*flowcontrolv1.FlowSchema, levels Levels, req Request) Result {
	var res Result
	var catchAll *Entry
	for _, e := range Sequence(schemas, levels) {
		if e.Dangling {
			res.Trace = append(res.Trace, Step{Entry: e, Outcome: Skipped})
			continue
		}
		ok, rules := matchSchema(e.FlowSchema, req)
		if ok {
			res.Trace = append(res.Trace, Step{Entry: e, Outcome: Matched, Rules: rules})
			last := rules[len(rules)-1]
			res.Rule, res.Why = last.Index, last.Why
			return finish(res, e, levels, req)
		}
		res.Trace = append(res.Trace, Step{Entry: e, Outcome: NoMatch, Rules: rules})
		if e.FlowSchema.Name == flowcontrolv1.FlowSchemaNameCatchAll {
			catchAll = &e
		}
	}
	// Sequence always supplies a usable catch-all, so catchAll is set here.
	res.Fallback, res.Rule = true, -1
	res.Why = "no FlowSchema matches (the user is in neither " + GroupAuthenticated + " nor " + GroupUnauthenticated + "); the apiserver falls back to catch-all"
	return finish(res, *catchAll, levels, req)
}

func finish(res Result, e Entry, levels Levels, req Request) Result {
	fs := e.FlowSchema
	res.FlowSchema, res.Position, res.Builtin = fs, e.Position, e.Builtin
	res.PriorityLevelName = fs.Spec.PriorityLevelConfiguration.Name
	if levels != nil {
		res.PriorityLevel, _ = levels.Level(res.PriorityLevelName)
	}
	res.Distinguisher = distinguish(fs, res.PriorityLevel, req)
	return res
}

// distinguish mirrors startRequest and computeFlowDistinguisher: the
// distinguisher is computed only for a Limited level that queues with more
// than one queue.
func distinguish(fs *flowcontrolv1.FlowSchema, pl *flowcontrolv1.PriorityLevelConfiguration, req Request) Distinguisher {
	var d Distinguisher
	if m := fs.Spec.DistinguisherMethod; m != nil {
		d.Method = string(m.Type)
		switch m.Type {
		case flowcontrolv1.FlowDistinguisherMethodByUserType:
			d.Value = req.User
		case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
			d.Value = req.Namespace
		}
	}
	if pl == nil {
		return d
	}
	d.Known = true
	lim := pl.Spec.Limited
	d.Used = pl.Spec.Type != flowcontrolv1.PriorityLevelEnablementExempt && lim != nil &&
		lim.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue &&
		lim.LimitResponse.Queuing != nil && lim.LimitResponse.Queuing.Queues > 1
	return d
}
