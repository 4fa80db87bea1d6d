package whatif

import (
	"fmt"
	"sort"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/apfsim"
)

// Config is a set of FlowSchemas and priority levels.
type Config struct {
	FlowSchemas []*flowcontrolv1.FlowSchema
	Levels      []*flowcontrolv1.PriorityLevelConfiguration
}

// Overlay is base with draft's objects in place of those of the same name
// (and draft's new ones added): a draft names only what it changes.
func Overlay(base, draft Config) Config {
	return Config{FlowSchemas: overlay(base.FlowSchemas, draft.FlowSchemas), Levels: overlay(base.Levels, draft.Levels)}
}

// overlay is base with draft's objects in place of those of the same name,
// sorted by name.
func overlay[T interface{ GetName() string }](base, draft []T) []T {
	byName := map[string]T{}
	for _, o := range base {
		byName[o.GetName()] = o
	}
	for _, o := range draft {
		byName[o.GetName()] = o
	}
	out := make([]T, 0, len(byName))
	for _, o := range byName {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// Check refuses a configuration the what-if cannot run: a level whose
// shares or queues are not valid. A FlowSchema naming a missing level is
// not refused here: the API server skips it as dangling, and so does the
// classifier (a live configuration may well have one); CheckDraft refuses
// a draft that makes one. The API server's own validation of each object
// is the caller's (a server-side dry run).
func Check(c Config) error {
	_, err := apfsim.Levels(withMandatory(c.Levels), DefaultServerCL)
	return err
}

// CheckDraft refuses a draft whose FlowSchemas name a priority level that
// exists neither in the cluster nor in the draft, unless the FlowSchema
// already dangled so in current: almost never what a draft means, and the
// what-if would silently leave its requests where they were.
func CheckDraft(current, draft Config) error {
	if err := Check(draft); err != nil {
		return err
	}
	levels, was := apf.LevelsOf(draft.Levels), map[string]string{}
	for _, f := range current.FlowSchemas {
		was[f.Name] = f.Spec.PriorityLevelConfiguration.Name
	}
	for _, f := range draft.FlowSchemas {
		name := f.Spec.PriorityLevelConfiguration.Name
		if _, ok := levels.Level(name); ok {
			continue
		}
		if before, ok := was[f.Name]; ok && before == name {
			continue
		}
		return fmt.Errorf("FlowSchema %s names priority level %q, which is neither in the cluster nor in the draft", f.Name, name)
	}
	return nil
}

// withMandatory adds the API server's built-in exempt and catch-all levels
// when the configuration lacks them: it classifies with them anyway
// (apf.Levels.Level, imaginePL upstream).
func withMandatory(pls []*flowcontrolv1.PriorityLevelConfiguration) []*flowcontrolv1.PriorityLevelConfiguration {
	have := map[string]bool{}
	for _, pl := range pls {
		have[pl.Name] = true
	}
	out := append([]*flowcontrolv1.PriorityLevelConfiguration(nil), pls...)
	levels := apf.LevelsOf(pls)
	for _, name := range []string{flowcontrolv1.PriorityLevelConfigurationNameExempt, flowcontrolv1.PriorityLevelConfigurationNameCatchAll} {
		if !have[name] {
			pl, _ := levels.Level(name)
			out = append(out, pl)
		}
	}
	return out
}
