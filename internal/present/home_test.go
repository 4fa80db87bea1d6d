package present

import (
	"testing"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// A kind the API server does not serve is a neutral note on its card, not
// an error: the policies' CRD not being installed is no failure.
func TestKindNotServedIsANoteNotAnError(t *testing.T) {
	s := KindNotServed("csrapprovalpolicies", "CSRApprovalPolicies", "not installed in this cluster")
	if s.Status.Tone != model.ToneNeutral || s.Note != "Not installed in this cluster." || s.Href != "/csrapprovalpolicies" || s.Count != "" {
		t.Errorf("card %+v", s)
	}
}
