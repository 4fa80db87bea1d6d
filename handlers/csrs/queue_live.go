package csrs

import (
	"net/url"
	"slices"
	"strings"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// liveView makes the page's live updates follow its view (handlers/live,
// csr_views.go): the stream names the view the table shows, and the
// table says what rows a live update adds may offer this user. res is the
// queue's result the page's rows were laid out from.
func liveView(qp *model.CSRQueuePage, res csrqueue.Result, env present.CSRQueueEnv) {
	if qp.Chrome.Live.URL == "" {
		return // live updates are off
	}
	u, err := url.Parse(qp.Chrome.Live.URL)
	if err != nil {
		return
	}
	view := strings.TrimPrefix(strings.TrimPrefix(qp.View, urls.CSRs), "?")
	v := u.Query()
	v.Set("view", view)
	// What the rows show, for the stream to compare with the view it opens
	// (handlers' openCSRView): read with the rows, after the cursor.
	v.Set("shows", page.CSRViewState(page.CSRPageRows(res.Items, qp.Rows)))
	u.RawQuery = v.Encode()
	qp.LiveView, qp.LiveURL = view, u.String()
	qp.LiveDictID, qp.LiveDict = page.CSRViewDict()
	qp.Chrome.Live.URL = qp.LiveURL
	qp.MayDelete = env.MayDelete
	if env.MayDecide == nil {
		return
	}
	for s := range res.Signers {
		if env.MayDecide(s) {
			qp.DecideSigners = append(qp.DecideSigners, s)
		}
	}
	slices.Sort(qp.DecideSigners)
}
