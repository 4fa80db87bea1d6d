package viewtest

import (
	"github.com/clusterdesk/clusterdesk/views/internal/samples"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The sample models live in package samples, which the console's component
// gallery uses too; these names keep the tests' calls short.

// Chrome is samples.Chrome.
func Chrome(readOnly bool) model.Chrome { return samples.Chrome(readOnly) }

// ListPage is samples.ListPage.
func ListPage() model.ListPage { return samples.ListPage() }

// DetailPage is samples.DetailPage.
func DetailPage() model.DetailPage { return samples.DetailPage() }
