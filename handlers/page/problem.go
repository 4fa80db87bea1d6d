package page

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The editor and the forms that write (the FlowSchema form) explain a
// refused write and show a change the same way.

// ProblemOf explains err as the editor and the forms show it, its field
// causes placed on the lines of text.
func ProblemOf(err error, text string) model.EditError {
	return present.EditError(edit.Problem(err, text))
}

// ProblemStatus is the status of a page that shows a refused write: 422 for
// a local refusal, the API server's status, else 502.
func ProblemStatus(err error) int {
	var in *edit.InputError
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &in):
		return http.StatusUnprocessableEntity
	case errors.As(err, &status) && status.Status().Code >= 400:
		return int(status.Status().Code)
	}
	return http.StatusBadGateway
}

// StatusMessage is the API server's message of a refusal ("" for another error).
func StatusMessage(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return ""
	}
	return st.Status().Message
}

// DiffOf is the diff view of two texts.
func DiffOf(title, fromLabel, toLabel, from, to string) model.Diff {
	return present.Diff(edit.Diff(title, fromLabel, toLabel, from, to))
}

// APIVersion is the apiVersion of kind k's objects ("v1", "apps/v1").
func APIVersion(k kube.Kind) string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}
