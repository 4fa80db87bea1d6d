package present

import (
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The API server's rules for PriorityClasses, from
// k8s.io/kubernetes/pkg/apis/scheduling/types.go and its validation: names
// starting with "system-" are the API server's own classes
// (system-cluster-critical, system-node-critical), the only ones with values
// above one billion; a pod that names no class gets the global default's
// value, or 0 without one (plugin/pkg/admission/priority/admission.go).
const (
	highestUserDefinablePriority = 1_000_000_000
	systemPriorityClassPrefix    = "system-"
)

const (
	priorityClassKind  = "priorityclasses"
	priorityClassTitle = "PriorityClasses"
)

var priorityClassColumns = []column{
	{"name", "Name", true},
	{"value", "Value", true},
	{"default", "Global default", true},
	{"preemption", "Preemption", true},
	{"description", "Description", false},
	{"age", "Age", true},
}

// preemptionText is a class's preemption policy; unset is PreemptLowerPriority,
// the API server's default (k8s.io/api/scheduling/v1 PriorityClass).
func preemptionText(pc *schedulingv1.PriorityClass) string {
	if pc.PreemptionPolicy == nil {
		return string(corev1.PreemptLowerPriority)
	}
	return string(*pc.PreemptionPolicy)
}

func globalDefaultText(pc *schedulingv1.PriorityClass) string {
	if pc.GlobalDefault {
		return "yes"
	}
	return "no"
}

// valueKey sorts a priority value as text, negative values first.
func valueKey(v int32) string { return padInt(int64(v) - (-1 << 31)) }

// PriorityClassList lays out the PriorityClass list page.
func PriorityClassList(items []*schedulingv1.PriorityClass, q ListQuery, now time.Time) model.ListPage {
	action := urls.List(priorityClassKind)
	rows := make([]row, 0, len(items))
	for _, pc := range items {
		ageC, ageKey := ageCell(pc.CreationTimestamp, now)
		value, def, preemption := strconv.Itoa(int(pc.Value)), globalDefaultText(pc), preemptionText(pc)
		rows = append(rows, newRow(priorityClassKind, action, pc.Name, []model.Cell{
			{Text: value, Mono: true}, {Text: def}, {Text: preemption}, {Text: pc.Description}, ageC,
		}, []string{valueKey(pc.Value), def, preemption, pc.Description, ageKey}))
	}
	return table(priorityClassKind, priorityClassTitle, action, priorityClassColumns, rows, q)
}

// PriorityClassDetail lays out one PriorityClass: its value with what the
// value means, whether pods without a class get it, and whether its pods
// preempt others.
func PriorityClassDetail(pc *schedulingv1.PriorityClass, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(pc.CreationTimestamp, now)
	status := model.Badge{Text: "User", Tone: model.ToneNeutral, Hint: "a class of the cluster's users"}
	if isSystemPriorityClass(pc) {
		status = model.Badge{Text: "System", Tone: model.ToneNeutral,
			Hint: "the API server's own class for critical components: names starting with system- are reserved for them"}
	}
	return model.DetailPage{
		KindID: priorityClassKind, KindTitle: priorityClassTitle, Name: pc.Name,
		Status: status,
		Fields: []model.Field{
			{Label: "Value", Value: strconv.Itoa(int(pc.Value)), Mono: true,
				Hint: "the scheduler places and preempts pods of higher values first; values above " + strconv.Itoa(highestUserDefinablePriority) + " are reserved for system classes"},
			{Label: "Global default", Value: globalDefaultText(pc),
				Hint: "a pod that names no priority class gets this class's value (without a default: 0); only one class may be the default"},
			{Label: "Preemption", Value: preemptionText(pc),
				Hint: "PreemptLowerPriority: a pending pod of this class may evict pods of lower priority; Never: it waits in the queue"},
			{Label: "Description", Value: pc.Description},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
}

// isSystemPriorityClass reports one of the API server's own classes (see
// systemPriorityClassPrefix).
func isSystemPriorityClass(pc *schedulingv1.PriorityClass) bool {
	return strings.HasPrefix(pc.Name, systemPriorityClassPrefix)
}
