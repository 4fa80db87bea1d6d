package ledger

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/ledgerview"
)

// The export formats.
const (
	formatCSV    = "csv"
	formatNDJSON = "ndjson"
)

// flushEvery is how many rows go out between flushes: the download moves
// (and a client that left is noticed) without a write per row.
const flushEvery = 256

func (h *Handlers) exportCSV(c echo.Context) error    { return h.exportFiltered(c, formatCSV) }
func (h *Handlers) exportNDJSON(c echo.Context) error { return h.exportFiltered(c, formatNDJSON) }

// exportFiltered exports every entry the ledger page's filter selects.
func (h *Handlers) exportFiltered(c echo.Context, format string) error {
	f, err := parseFilter(c)
	if err != nil {
		return err
	}
	q := f.Query(h.viewableKinds(c).ids, 0)
	q.After = "" // an export holds every match, not the rest of a page
	return h.export(c, format, "clusterdesk-ledger", q)
}

// export streams the entries q selects as CSV or NDJSON, row by row from
// Store.Export (keyset pages; no connection held while the client takes
// them): nothing holds the whole result, so there is no cap on rows. What
// bounds an export is the gate (exports at once, per user and in all) and
// the write deadline: a client that takes no write for Stall is cut off.
// The request's context ends the export when the client leaves. A database
// failing before the first byte is a 503; failing midway, the status is
// already sent, so the file ends with a row saying it was cut short.
func (h *Handlers) export(c echo.Context, format, basename string, q ledger.Query) error {
	if h.d.Store == nil {
		return echo.NewHTTPError(http.StatusNotFound, OffMessage)
	}
	ctx := c.Request().Context()
	leave, err := h.exports.enter(c, exportUser(ctx))
	if err != nil {
		return err
	}
	defer leave()
	pingCtx, cancel := context.WithTimeout(ctx, h.d.Timeout)
	err = h.d.Store.Ping(pingCtx)
	cancel()
	if err != nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "The ledger's database is unreachable: "+err.Error())
	}

	res := c.Response()
	deadline := newWriteDeadline(res, h.exports.limits.Stall)
	defer deadline.clear()
	name := fmt.Sprintf("%s-%s.%s", page.SafeFilename(basename), time.Now().UTC().Format("20060102T150405Z"), format)
	res.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, name))
	var write func(ledger.Entry) error
	var cut func(error)
	switch format {
	case formatCSV:
		res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		res.WriteHeader(http.StatusOK)
		cw, err := ledgerview.NewCSVWriter(res)
		if err != nil {
			return nil // the client left
		}
		defer cw.Flush()
		write = cw.Write
		cut = func(err error) { _ = cw.WriteCut(err) }
	default:
		res.Header().Set(echo.HeaderContentType, "application/x-ndjson; charset=utf-8")
		res.WriteHeader(http.StatusOK)
		nw := ledgerview.NewNDJSONWriter(res)
		write = nw.Write
		cut = func(err error) { _ = nw.WriteCut(err) }
	}
	if len(q.Kinds) == 0 {
		return nil // the viewer may list no kind: the header alone
	}
	n := 0
	var writeErr error
	err = h.d.Store.Export(ctx, q, func(e ledger.Entry) error {
		deadline.renew()
		if writeErr = write(e); writeErr != nil {
			return writeErr
		}
		if n++; n%flushEvery == 0 {
			res.Flush()
		}
		return nil
	})
	switch {
	case err == nil || ctx.Err() != nil:
	case writeErr != nil:
		// The client stopped taking the rows (the write deadline) or left.
		h.d.Log.Info("ledger export ended: the client did not take it", "rows", n, "err", writeErr)
	default:
		h.d.Log.Warn("ledger export cut short", "rows", n, "err", err)
		cut(err)
	}
	return nil
}

// exportUser is whom the export gate counts the request against: the
// signed-in user ("" when the console acts as itself, every session one).
func exportUser(ctx context.Context) string {
	id, _ := kube.IdentityFrom(ctx)
	return id.User
}
