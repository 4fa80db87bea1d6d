package present

import (
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// whyCell is the "why pending" cell of a pending row: the reason's short
// words, its one line as the title (csrwhy via Item.Why); empty for a
// decided request.
func whyCell(it *csrqueue.Item) model.Cell {
	if it.State != csrqueue.Pending {
		return model.Cell{}
	}
	r := it.Why(true)
	if r.Code == "" {
		return model.Cell{}
	}
	return model.Cell{Text: r.Code.Short(), Title: r.Message}
}

// whyFilter lays out the "why pending" filter's choices: every code.
func whyFilter(page *model.CSRQueuePage, q CSRQueueQuery) {
	page.Whys = []model.CSROption{{Value: "", Label: "Any reason", Selected: q.Why == ""}}
	for _, c := range csrwhy.Codes {
		page.Whys = append(page.Whys, model.CSROption{Value: string(c), Label: c.Short(), Selected: string(c) == q.Why})
	}
}
