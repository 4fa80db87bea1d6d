package page

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRPageRows are the keys and stamps of a queue page's rows (rows laid out
// from items, one for one), as the page and the live views compare them.
func CSRPageRows(items []*csrqueue.Item, rows []model.CSRRow) []csrqueue.PageRow {
	out := make([]csrqueue.PageRow, len(rows))
	for i, r := range rows {
		out[i] = csrqueue.PageRow{Key: r.ID, Stamp: CSRRowStamp(items[i], r)}
	}
	return out
}

// CSRRowStamp changes whenever what a row shows changes, but for its age:
// a request's row with its object (resourceVersion) and its findings, which
// depend on other requests too (duplicates); a storm's with its members.
// What differs between users (the boxes and actions each may use) is left
// out: one view serves them all.
func CSRRowStamp(it *csrqueue.Item, r model.CSRRow) string {
	var b strings.Builder
	if g := r.Group; g != nil {
		b.WriteString(strconv.Itoa(g.Count) + "\n" + g.NewestName + "\n" + g.OldestName + "\n" + g.ChecksOf + "\n")
	}
	b.WriteString(string(it.CSR.UID) + "\n" + it.CSR.ResourceVersion + "\n" + r.State + "\n")
	for _, f := range r.Findings {
		b.WriteString(f.Check + "\t" + f.Message + "\n")
	}
	for _, v := range r.Verdicts { // a policy change changes the row
		b.WriteString(v.Label + "\t" + v.Reason + "\n")
	}
	return b.String()
}

// CSRViewState names what a queue page's rows show (keys and stamps, in
// order), 16 hex digits of SHA-256. A tab's page sends it when its stream
// opens the page's view (handlers' openCSRView): a view computed from a
// cache that has taken a change since the page was rendered, not yet
// published, differs, and the tab is told to resync; its ops would
// otherwise start from rows the tab does not show, and that change would
// never reach it.
func CSRViewState(rows []csrqueue.PageRow) string {
	h := sha256.New()
	for _, r := range rows {
		h.Write([]byte(r.Key))
		h.Write([]byte{0})
		h.Write([]byte(r.Stamp))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
