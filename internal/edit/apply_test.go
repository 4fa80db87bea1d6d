package edit

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ssaConflict builds the error the API server returns for a server-side apply
// conflict (as k8s.io/apiserver's fieldmanager does: 409, reason Conflict,
// one FieldManagerConflict cause per field).
func ssaConflict(causes ...metav1.StatusCause) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: "Apply failed with 2 conflicts",
		Details: &metav1.StatusDetails{Causes: causes},
	}}
}

const csiText = `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  labels:
    team: a
  name: d
spec:
  podInfoOnMount: true
`

func TestApplyConflicts(t *testing.T) {
	cause := func(msg, field string) metav1.StatusCause {
		return metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: msg, Field: field}
	}
	tests := []struct {
		name string
		err  error
		want []ManagerConflict
		ok   bool
	}{
		{
			name: "two managers, fields grouped in order",
			err: ssaConflict(
				cause(`conflict with "other" using storage.k8s.io/v1`, ".spec.podInfoOnMount"),
				cause(`conflict with "helm" with subresource "status"`, ".metadata.labels.team"),
				cause(`conflict with "other" using storage.k8s.io/v1`, ".metadata.labels.team"),
			),
			want: []ManagerConflict{
				{Manager: "other", Fields: []Cause{
					{Field: ".spec.podInfoOnMount", Message: `conflict with "other" using storage.k8s.io/v1`, Line: 8},
					{Field: ".metadata.labels.team", Message: `conflict with "other" using storage.k8s.io/v1`, Line: 5},
				}},
				{Manager: "helm", Fields: []Cause{
					{Field: ".metadata.labels.team", Message: `conflict with "helm" with subresource "status"`, Line: 5},
				}},
			},
			ok: true,
		},
		{
			name: "a message without a manager name",
			err:  ssaConflict(cause("conflict", ".spec.x")),
			want: []ManagerConflict{{Manager: "another field manager", Fields: []Cause{{Field: ".spec.x", Message: "conflict", Line: 7}}}},
			ok:   true,
		},
		{
			name: "a stale resourceVersion is a conflict without manager causes",
			err:  apierrors.NewConflict(schema.GroupResource{Resource: "csidrivers"}, "d", errors.New("the object has been modified")),
		},
		{
			name: "other causes are not manager conflicts",
			err:  ssaConflict(metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.x"}),
		},
		{name: "not an API error", err: errors.New("connection refused")},
		{
			name: "forbidden",
			err:  apierrors.NewForbidden(schema.GroupResource{Resource: "csidrivers"}, "d", errors.New("no")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ApplyConflicts(tt.err, csiText)
			if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ApplyConflicts = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
