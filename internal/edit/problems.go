package edit

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// unknownField finds the fields a strict decode refused: the API server names
// them in the message (`unknown field "spec.foo"`, `.spec.foo: field not
// declared in schema`) rather than in details.causes.
var unknownField = regexp.MustCompile(`unknown field "([^"]+)"|(\.[A-Za-z0-9_.\[\]-]+): field not declared in schema`)

// Problem turns an error of a write (or of Parse) into what the editor shows: a
// local error with its line, or the API server's message with its field causes,
// each mapped to a line of text where the field is found. API errors are told
// apart by type and reason, never by their text.
func Problem(err error, text string) Failure {
	var in *InputError
	if errors.As(err, &in) {
		return Failure{Title: in.Title, Message: in.Message, Local: true, Line: in.Line}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return Failure{Title: "The request failed", Message: err.Error()}
	}
	st := status.Status()
	p := Failure{Title: apiTitle(st), Message: st.Message}
	at := NewLocator(text)
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			p.Causes = append(p.Causes, Cause{Field: c.Field, Message: c.Message, Line: at.Line(c.Field)})
		}
	}
	if len(p.Causes) == 0 {
		for _, m := range unknownField.FindAllStringSubmatch(st.Message, -1) {
			field := m[1] + m[2]
			p.Causes = append(p.Causes, Cause{Field: field, Message: "unknown field", Line: at.Line(field)})
		}
	}
	for _, c := range p.Causes {
		if c.Line > 0 {
			p.Line = c.Line
			break
		}
	}
	return p
}

func apiTitle(st metav1.Status) string {
	// Server-side apply of a custom resource reports an unknown field as an
	// internal error ("failed to create typed patch object … field not
	// declared in schema"); it is the user's text all the same.
	if st.Reason != metav1.StatusReasonBadRequest && unknownField.MatchString(st.Message) {
		return "Unknown field (strict field validation)"
	}
	switch st.Reason {
	case metav1.StatusReasonForbidden:
		return "Forbidden by the API server"
	case metav1.StatusReasonInvalid:
		return "The API server refused the object"
	case metav1.StatusReasonConflict:
		return "Changed on the server meanwhile"
	case metav1.StatusReasonAlreadyExists:
		return "Already exists"
	case metav1.StatusReasonNotFound:
		return "Not found"
	case metav1.StatusReasonBadRequest:
		if strings.Contains(st.Message, "strict decoding error") || unknownField.MatchString(st.Message) {
			return "Unknown field (strict field validation)"
		}
		return "Bad request"
	case metav1.StatusReasonUnauthorized:
		return "Not signed in to the API server"
	}
	if t := http.StatusText(int(st.Code)); t != "" {
		return t
	}
	return "The API server refused the request"
}
