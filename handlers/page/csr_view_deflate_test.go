package page

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// inflateAsTheBrowser inflates an update as web/js/live.js does: the
// dictionary as a stored block, then the update's deflate data, through a
// plain raw inflater; the dictionary's bytes dropped.
func inflateAsTheBrowser(t *testing.T, data []byte) string {
	t.Helper()
	id, b64 := CSRViewDict()
	got, ok := strings.CutPrefix(string(data), id+":")
	if !ok {
		t.Fatalf("an update not named by the dictionary %s: %.40s", id, data)
	}
	dict, _ := base64.StdEncoding.DecodeString(b64)
	z, err := base64.StdEncoding.DecodeString(got)
	if err != nil {
		t.Fatal(err)
	}
	n := len(dict)
	stream := append([]byte{0, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)}, dict...)
	out, err := io.ReadAll(flate.NewReader(bytes.NewReader(append(stream, z...))))
	if err != nil {
		t.Fatal(err)
	}
	return string(out[n:])
}

// An update inflates, the browser's way, to exactly the HTML rendered (the
// rows as the page renders them, by the same template), and is a fraction
// of it: a pending request new in the view, as the queue sends it most.
func TestDeflateCSRView(t *testing.T) {
	u := sampleCSRViewUpdate()
	row := u.Rows[len(u.Rows)-1]
	row.ID, row.Name, row.Href = "row-csrs-node-csr-7f3k2", "node-csr-7f3k2", "/csrs/node-csr-7f3k2"
	row.Subject = "CN=system:node:ip-10-0-3-17.ec2.internal, O=system:nodes · RSA 2048"
	row.Cells[0].Text = row.Name
	u.Rows = []model.CSRRow{row}
	u.Ops = []model.CSRViewOp{{Op: "insert", Key: row.ID, Signer: "kubernetes.io/kube-apiserver-client"}}
	var html bytes.Buffer
	if err := pages.CSRQueueViewUpdate(u).Render(context.Background(), &html); err != nil {
		t.Fatal(err)
	}
	data := DeflateCSRView(html.Bytes())
	if got := inflateAsTheBrowser(t, data); got != html.String() {
		t.Fatalf("inflated %q, want %q", got, html.String())
	}
	if back, err := InflateCSRView(data); err != nil || !bytes.Equal(back, html.Bytes()) {
		t.Fatalf("InflateCSRView: %v", err)
	}
	if len(data)*5 > html.Len() {
		t.Errorf("%d bytes of HTML sent as %d: want a fifth at most", html.Len(), len(data))
	}
	// The stored block that carries the dictionary holds 65,535 bytes at
	// most, and deflate reaches back 32 KiB.
	if _, b64 := CSRViewDict(); base64.StdEncoding.DecodedLen(len(b64)) > 32<<10 {
		t.Errorf("the dictionary is %d bytes: more than deflate's window", base64.StdEncoding.DecodedLen(len(b64)))
	}
}
