package pages

import (
	"testing"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The "New" button names the API kind, not the list's title less its last
// letter: CSRApprovalPolicies' button said "New CSRApprovalPolicie".
func TestListNewButtonNamesTheKind(t *testing.T) {
	p := model.ListPage{KindID: "csrapprovalpolicies", Title: "CSRApprovalPolicies", Singular: "CSRApprovalPolicy",
		Action: "/csrapprovalpolicies", NewHref: "/csrapprovalpolicies/new"}
	doc, _ := viewtest.Render(t, List(p))
	if got := viewtest.One(t, doc, viewtest.TestID("new-link")).Text(); got != "New CSRApprovalPolicy" {
		t.Errorf("New button %q, want %q", got, "New CSRApprovalPolicy")
	}
}
