// Package apf mirrors how kube-apiserver's API Priority and Fairness filter
// classifies a request: the order in which it evaluates FlowSchemas, the
// matching rules of each FlowSchema, and the flow distinguisher. It is pure
// logic over flowcontrol/v1 objects (the cache converts v1beta3 to v1), with
// no client and no HTTP.
package apf

import (
	"cmp"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Less reports whether a is evaluated before b. It is the apiserver's order:
// FlowSchemaSequence.Less in k8s.io/apiserver/pkg/util/apihelpers/helpers.go
// (v0.36.3), which digestFlowSchemasLocked in
// k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go sorts with
// sort.Sort — ascending spec.matchingPrecedence, and on a tie the name in
// plain byte order ("kube-controller-manager" before "kube-scheduler", both 800).
func Less(a, b *flowcontrolv1.FlowSchema) bool {
	if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
		return a.Spec.MatchingPrecedence < b.Spec.MatchingPrecedence
	}
	return a.Name < b.Name
}

// Entry is one FlowSchema in evaluation order.
type Entry struct {
	FlowSchema *flowcontrolv1.FlowSchema
	// Position counts from 1 over every entry, skipped ones included, so a
	// FlowSchema keeps its place in the list when it becomes dangling.
	Position int
	// Dangling: its priority level does not exist, so the apiserver ignores it
	// when classifying (digestFlowSchemasLocked skips it and sets its Dangling
	// condition).
	Dangling bool
	// Builtin: the apiserver's own copy of a mandatory FlowSchema (exempt or
	// catch-all) that is missing from the cluster; the apiserver classifies
	// with it anyway until its config producer recreates the object.
	Builtin bool
}

// Levels is what is known about the PriorityLevelConfigurations: their names,
// or nil when they could not be read (then a FlowSchema's own Dangling
// condition, written by the apiserver, decides).
type Levels map[string]*flowcontrolv1.PriorityLevelConfiguration

// LevelsOf indexes priority levels by name.
func LevelsOf(pls []*flowcontrolv1.PriorityLevelConfiguration) Levels {
	m := make(Levels, len(pls))
	for _, pl := range pls {
		m[pl.Name] = pl
	}
	return m
}

// Level returns the named priority level as the apiserver sees it: the object,
// or for the mandatory exempt and catch-all levels the apiserver's built-in
// copy when the object is missing (apf_controller.go imaginePL).
func (l Levels) Level(name string) (*flowcontrolv1.PriorityLevelConfiguration, bool) {
	if pl, ok := l[name]; ok {
		return pl, true
	}
	switch name {
	case flowcontrolv1.PriorityLevelConfigurationNameExempt:
		return mandatoryExemptPL, true
	case flowcontrolv1.PriorityLevelConfigurationNameCatchAll:
		return mandatoryCatchAllPL, true
	}
	return nil, false
}

// dangling decides whether fs points at a missing priority level.
func (l Levels) dangling(fs *flowcontrolv1.FlowSchema) bool {
	if l == nil {
		return HasDanglingCondition(fs)
	}
	_, ok := l.Level(fs.Spec.PriorityLevelConfiguration.Name)
	return !ok
}

// HasDanglingCondition reports whether the apiserver has marked fs Dangling.
func HasDanglingCondition(fs *flowcontrolv1.FlowSchema) bool {
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			return c.Status == flowcontrolv1.ConditionTrue
		}
	}
	return false
}

// Sequence lays out schemas in the order the apiserver evaluates them, as
// digestFlowSchemasLocked does: sorted by Less, with the mandatory exempt
// FlowSchema supplied first and catch-all last when the cluster lacks them.
// Dangling schemas stay in the sequence, marked, so a view can show them in
// place; Classify skips them. levels may be nil (see Levels).
func Sequence(schemas []*flowcontrolv1.FlowSchema, levels Levels) []Entry {
	sorted := slices.Clone(schemas)
	// The same order as Less, as a three-way comparison.
	slices.SortFunc(sorted, func(a, b *flowcontrolv1.FlowSchema) int {
		if c := cmp.Compare(a.Spec.MatchingPrecedence, b.Spec.MatchingPrecedence); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var haveExempt, haveCatchAll bool
	entries := make([]Entry, 0, len(sorted)+2)
	for _, fs := range sorted {
		d := levels.dangling(fs)
		entries = append(entries, Entry{FlowSchema: fs, Dangling: d})
		// The apiserver only counts a mandatory FlowSchema as present when it
		// is usable; a dangling one is replaced by the built-in copy.
		if !d {
			haveExempt = haveExempt || fs.Name == flowcontrolv1.FlowSchemaNameExempt
			haveCatchAll = haveCatchAll || fs.Name == flowcontrolv1.FlowSchemaNameCatchAll
		}
	}
	if !haveExempt {
		entries = append([]Entry{{FlowSchema: mandatoryExemptFS, Builtin: true}}, entries...)
	}
	if !haveCatchAll {
		entries = append(entries, Entry{FlowSchema: mandatoryCatchAllFS, Builtin: true})
	}
	for i := range entries {
		entries[i].Position = i + 1
	}
	return entries
}
