package page

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"sync"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// A live update of a CSR queue view (pages.CSRQueueViewUpdate) is sent
// deflated against a dictionary: a sample update rendered by the very
// templates that render the queue, so an update's rows, badges and counts
// are mostly references into markup the tab already holds. A queue row is
// ~3.5 KB of HTML of which its own data (names, subject, times, findings) is
// a few hundred bytes; deflated alone an update is ~1/3, against the
// dictionary ~1/8 (issue 27 point 4).
//
// Why not gzip on the stream: a compress/flate writer per connection holds
// ~1 MB (its hash tables and window) for as long as the tab is open, and
// deflates the same bytes once per tab. An update deflated here is deflated
// once per view for all its tabs, and nothing is kept per connection.
//
// The page carries the dictionary (CSRViewDict, base64, on the queue's
// table); web/js/live.js inflates an update with DecompressionStream
// ("deflate-raw"), putting the dictionary before the data as a stored
// block, which is what a preset dictionary means to an inflater. An
// update's data is "<dictionary id>:<base64 of raw deflate>"; a tab whose
// page holds another dictionary (rendered by another process) fetches its
// view instead.

// CSRViewDict is the dictionary's id and its bytes in base64, for the page.
func CSRViewDict() (id, b64 string) {
	d := csrViewDict()
	return d.id, d.b64
}

// DeflateCSRView is the data of the csrs-view event carrying html.
func DeflateCSRView(html []byte) []byte {
	d := csrViewDict()
	w := d.writers.Get().(*deflater)
	defer d.writers.Put(w)
	w.buf.Reset()
	w.zw.Reset(&w.buf)
	_, _ = w.zw.Write(html) // a bytes.Buffer does not fail
	_ = w.zw.Close()
	out := make([]byte, 0, len(d.id)+1+base64.StdEncoding.EncodedLen(w.buf.Len()))
	out = append(out, d.id...)
	out = append(out, ':')
	return base64.StdEncoding.AppendEncode(out, w.buf.Bytes())
}

type deflater struct {
	buf bytes.Buffer
	zw  *flate.Writer // Reset keeps the dictionary
}

type viewDict struct {
	raw     []byte
	id, b64 string
	writers sync.Pool // *deflater: a writer is ~1 MB, made once per concurrent use
}

var csrViewDict = sync.OnceValue(func() *viewDict {
	var b bytes.Buffer
	if err := pages.CSRQueueViewUpdate(sampleCSRViewUpdate()).Render(context.Background(), &b); err != nil {
		panic("the CSR view dictionary does not render: " + err.Error())
	}
	sum := sha256.Sum256(b.Bytes())
	d := &viewDict{raw: b.Bytes(), id: hex.EncodeToString(sum[:4]), b64: base64.StdEncoding.EncodeToString(b.Bytes())}
	d.writers.New = func() any {
		zw, err := flate.NewWriterDict(nil, flate.DefaultCompression, d.raw)
		if err != nil {
			panic(err) // only for a level out of range
		}
		return &deflater{zw: zw}
	}
	return d
})

// sampleCSRViewUpdate is what the dictionary holds: an update as the queue
// sends the most common changes (a pending request inserted, a decided one
// in each state, a storm, the counts and the pager), in the queue's columns.
// Its text is made up; its markup is the templates'. The most repeated
// markup comes last (deflate prefers the nearest copy, and codes short
// distances in fewer bits).
func sampleCSRViewUpdate() model.CSRViewUpdate {
	cols := present.CSRQueueLiveOf(csrqueue.Change{}, present.CSRQueueEnv{}).Columns
	tabs := present.CSRQueueLiveOf(csrqueue.Change{Counts: map[string]int{"pending": 12, "approved": 3, "issued": 40, "denied": 2, "failed": 1}}, present.CSRQueueEnv{}).Tabs
	row := func(name, state, badge string, tone model.Tone, finding *model.CSRFinding) model.CSRRow {
		texts := map[string]model.Cell{
			"queue":     {Text: name},
			"condition": {Badges: []model.Badge{{Text: badge, Tone: tone, Hint: "waiting for approval"}}},
			"age":       {Text: "5m", Title: "2026-01-02T03:04:05Z"},
			"signer":    {Text: "kubernetes.io/kube-apiserver-client", Mono: true},
			"requestor": {Text: "system:serviceaccount:kube-system:node-bootstrapper", Mono: true, Title: "groups: system:masters, system:authenticated"},
			"duration":  {Text: "<none>"},
		}
		cells := make([]model.Cell, len(cols))
		for i, c := range cols {
			cells[i] = texts[c.Key]
			cells[i].Priority, cells[i].Label = c.Priority, c.Label
		}
		r := model.CSRRow{
			Row:     model.Row{ID: "row-csrs-" + name, Name: name, Href: "/csrs/" + name, Cells: cells},
			Subject: "CN=system:node:worker-1, O=system:nodes · ECDSA P-256", State: state,
			UID: "00000000-0000-0000-0000-000000000000", Selectable: state == "pending",
		}
		if finding != nil {
			r.Findings = []model.CSRFinding{*finding}
		}
		return r
	}
	storm := row("group-0123456789abcdef", "pending", "Pending", model.TonePending, nil)
	storm.Group = &model.CSRGroup{ID: "0123456789abcdef", Count: 250, Title: "250 requests from system:node:worker-1",
		Signer: "kubernetes.io/kube-apiserver-client-kubelet", Requester: "system:node:worker-1", Href: "/csrs?group=0123456789abcdef",
		NewestName: "csr-abcde", OldestName: "csr-vwxyz", ChecksOf: "csr-abcde",
		ApproveHref: "/csrs/groups/0123456789abcdef/approve", DenyHref: "/csrs/groups/0123456789abcdef/deny"}
	warn := &model.CSRFinding{Check: "requester-subject", Tone: model.ToneWarning, Label: "Warning",
		Message: "Requested by admin for CN node-1: make sure admin may obtain a certificate for that identity."}
	danger := &model.CSRFinding{Check: "privileged-group", Tone: model.ToneError, Label: "Danger", Message: "Asks for the group system:masters."}
	return model.CSRViewUpdate{
		Ops: []model.CSRViewOp{
			{Op: "remove", Key: "row-csrs-csr-abcde"},
			{Op: "move", Key: "row-csrs-csr-abcde", After: "row-csrs-csr-fghij"},
			{Op: "replace", Key: "row-csrs-csr-abcde"},
			{Op: "insert", Key: "row-csrs-csr-abcde", After: "row-csrs-csr-fghij", Signer: "kubernetes.io/kube-apiserver-client"},
		},
		Rows: []model.CSRRow{
			storm,
			row("csr-denied", "denied", "Denied", model.ToneError, danger),
			row("csr-failed", "failed", "Failed", model.ToneError, nil),
			row("csr-issued", "issued", "Issued", model.ToneOK, nil),
			row("csr-approved", "approved", "Approved", model.TonePending, nil),
			row("csr-pending", "pending", "Pending", model.TonePending, warn),
		},
		Columns: cols,
		Hash:    "0123abcd",
		Counts: &model.CSRViewCounts{Tabs: tabs, Matched: 12, Total: 58,
			Pager: model.Pager{Page: 1, Pages: 2, From: 1, To: 50, Matched: 58, Next: "/csrs?page=2&state=pending",
				Links: []model.PageLink{{Number: 1, Href: "/csrs?state=pending", Current: true}, {Number: 2, Href: "/csrs?page=2&state=pending"}}}},
		PagerChanged: true,
	}
}

// InflateCSRView is the HTML of a csrs-view event's data deflated by this
// process (its tests read updates with it).
func InflateCSRView(data []byte) ([]byte, error) {
	d := csrViewDict()
	z, ok := bytes.CutPrefix(data, []byte(d.id+":"))
	if !ok {
		return nil, errors.New("not deflated against this process's dictionary")
	}
	raw, err := base64.StdEncoding.AppendDecode(nil, z)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(flate.NewReaderDict(bytes.NewReader(raw), d.raw))
}
