package editor

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// propagationHelp says in one line what the garbage collector does with the
// objects a deleted object owns (those whose metadata.ownerReferences name it),
// per DeleteOptions.propagationPolicy (apimachinery meta/v1 types.go).
var propagationHelp = map[metav1.DeletionPropagation]string{
	metav1.DeletePropagationBackground: "Deletes it now; the garbage collector then deletes the objects it owns.",
	metav1.DeletePropagationForeground: "Deletes the objects it owns first; it stays, marked for deletion, until they are gone.",
	metav1.DeletePropagationOrphan:     "Deletes only it; the objects it owns stay, with their ownerReference to it removed.",
}

// propagationOptions is the delete page's choice, chosen checked ("" checks
// the default, Background).
func propagationOptions(chosen metav1.DeletionPropagation) []model.PropagationOption {
	if chosen == "" {
		chosen = editing.Propagations[0]
	}
	out := make([]model.PropagationOption, 0, len(editing.Propagations))
	for _, p := range editing.Propagations {
		label := string(p)
		if p == editing.Propagations[0] {
			label += " (default)"
		}
		out = append(out, model.PropagationOption{Value: string(p), Label: label, Help: propagationHelp[p], Checked: p == chosen})
	}
	return out
}

// deletedMessage confirms a deletion and what became of the objects it owned.
func deletedMessage(kind, name string, policy metav1.DeletionPropagation) string {
	switch policy {
	case metav1.DeletePropagationForeground:
		return fmt.Sprintf("%s %s is being deleted: the objects it owns go first, then it.", kind, name)
	case metav1.DeletePropagationOrphan:
		return fmt.Sprintf("%s %s was deleted; the objects it owned were kept (orphaned).", kind, name)
	}
	return fmt.Sprintf("%s %s was deleted.", kind, name)
}
