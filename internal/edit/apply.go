package edit

import (
	"errors"
	"regexp"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conflictWith finds the other manager in a FieldManagerConflict cause's
// message: `conflict with "kubectl-edit" using storage.k8s.io/v1`, or
// `conflict with "helm" with subresource "status"`.
var conflictWith = regexp.MustCompile(`conflict with "([^"]+)"`)

// ApplyConflicts reads a server-side apply conflict (409 with causes of type
// FieldManagerConflict) into the managers that own the contested fields, each
// with its fields in the order the API server gave them and the YAML line
// where each field is in text. ok is false for any other error, including a
// 409 from a stale resourceVersion, which carries no such causes.
func ApplyConflicts(err error, text string) (out []ManagerConflict, ok bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsConflict(err) {
		return nil, false
	}
	st := status.Status()
	if st.Details == nil {
		return nil, false
	}
	at := NewLocator(text)
	for _, c := range st.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		manager := "another field manager"
		if m := conflictWith.FindStringSubmatch(c.Message); m != nil {
			manager = m[1]
		}
		i := slices.IndexFunc(out, func(mc ManagerConflict) bool { return mc.Manager == manager })
		if i < 0 {
			out = append(out, ManagerConflict{Manager: manager})
			i = len(out) - 1
		}
		out[i].Fields = append(out[i].Fields, Cause{Field: c.Field, Message: c.Message, Line: at.Line(c.Field)})
	}
	return out, len(out) > 0
}
