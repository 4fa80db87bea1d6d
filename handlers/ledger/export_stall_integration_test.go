//go:build integration

package ledger

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/handlers/health"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testpg"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// stallEntries × stallObject is the export: 32 MB, far more than the
// sockets buffer (the client's receive buffer is set to 4 KiB; the server's
// send buffer grows to a few MB), so a client that never reads blocks the
// server's writes.
const (
	stallEntries = 4000
	stallObject  = 8 << 10
)

// fillForStall appends the export's entries.
func fillForStall(t *testing.T, s ledger.Store) {
	t.Helper()
	pad := `{"kind":"FlowSchema","pad":"` + strings.Repeat("x", stallObject) + `"}`
	start := time.Now().UTC().Add(-time.Hour)
	var all []ledger.Entry
	for i := range stallEntries {
		all = append(all, ledger.Entry{Source: ledger.SourceAPIServer, ID: fmt.Sprintf("stall-%05d", i),
			Time: start.Add(time.Duration(i) * time.Millisecond), User: "system:serviceaccount:ci:runaway",
			Verb: "patch", Action: ledger.ActionUpdate, APIGroup: "flowcontrol.apiserver.k8s.io", APIVersion: "v1",
			Resource: "flowschemas", Kind: "flowschemas", Name: "exempt", Code: 200, Result: ledger.ResultOK,
			Object: []byte(pad)})
	}
	appendAll(t, s, all)
}

// stalledExport is an export requested over TCP by a client that never
// reads its response.
type stalledExport struct {
	conn   *net.TCPConn
	r      *bufio.Reader
	status string // the response's status line
}

func openStalledExport(t *testing.T, addr string) stalledExport {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		// Before connect, so the window the server sees is small from the start.
		_ = c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", urls.LedgerNDJSON, addr); err != nil {
		t.Fatal(err)
	}
	return stalledExport{conn: c.(*net.TCPConn), r: bufio.NewReaderSize(c, 4096)}
}

// The attack of issue 43 (class 3), on both backends, over real TCP: a
// user opens more exports than the store has connections (SQLite's 4
// readers, PostgreSQL's pool of 8) and reads none. The ledger page, /readyz
// and an Append (the audit webhook's) still answer; the exports past the
// bounds are refused, and those that ran are cut off once a write has
// waited Stall, their connections closed.
func TestStalledExportsTakeNothingAway(t *testing.T) {
	pg, err := testpg.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Stop() })
	pgDSN, err := pg.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []struct{ name, dsn string }{
		{"sqlite", "sqlite:" + t.TempDir() + "/ledger.db"},
		{"postgres", pgDSN},
	} {
		t.Run(backend.name, func(t *testing.T) {
			s, err := ledger.Open(context.Background(), backend.dsn, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			fillForStall(t, s)
			stall := 2 * time.Second
			e := newServerWith(t, s, nil, func(d *Deps) { d.Exports = ExportLimits{Stall: stall} })
			health.New(health.Deps{Cluster: syncedHealth{}, Ledger: s}).Register(e)
			srv := httptest.NewUnstartedServer(e)
			var closed sync.Map // the clients' addresses whose connection the server closed
			srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
				if st == http.StateClosed {
					closed.Store(c.RemoteAddr().String(), true)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			stalledExportsAttack(t, srv.URL, s, func(addr string) bool { _, ok := closed.Load(addr); return ok })
		})
	}
}

// syncedHealth is a cluster whose kinds are synced: /readyz then reports
// the ledger alone.
type syncedHealth struct{ ports.Cluster }

func (syncedHealth) Statuses() []kube.KindStatus { return nil }
func (syncedHealth) Ready() bool                 { return true }

// stalledExportsAttack opens the stalled exports on the console at base and
// checks what must still answer, then that the exports were cut off: closed
// says whether the server closed the connection of a client's address.
func stalledExportsAttack(t *testing.T, base string, s ledger.Store, closed func(addr string) bool) {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	const opened = 10
	var stalled []stalledExport
	for range opened {
		stalled = append(stalled, openStalledExport(t, addr))
	}
	// Every export has answered (its status line, read with 4 KiB of its
	// body at most) before the checks: those that run are blocked writing.
	// One that does not answer waits for the database (a store whose
	// exports hold its connections): it counts as one that runs.
	for i := range stalled {
		x := &stalled[i]
		_ = x.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := x.r.ReadString('\n')
		if err != nil {
			t.Logf("export %d: no status line: %v", i, err)
		}
		x.status = strings.TrimSpace(line)
	}
	client := &http.Client{Timeout: 15 * time.Second}
	resp, err := client.Get(base + urls.Ledger)
	if err != nil {
		t.Fatalf("the ledger page beside %d stalled exports: %v", opened, err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || doc.Find(tid("ledger-unreachable")).Length() != 0 ||
		doc.Find(tid("ledger-row")).Length() == 0 {
		t.Errorf("the ledger page beside %d stalled exports: %d, unreachable banner %d, %d rows (%v)", opened,
			resp.StatusCode, doc.Find(tid("ledger-unreachable")).Length(), doc.Find(tid("ledger-row")).Length(), err)
	}
	resp, err = client.Get(base + urls.Readyz)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "ledger: ok") {
		t.Errorf("/readyz beside %d stalled exports: %q", opened, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n, err := s.Append(ctx, []ledger.Entry{{Source: ledger.SourceAPIServer, ID: "beside-the-stall",
		Time: time.Now().UTC(), User: "alice", Verb: "create", Action: ledger.ActionCreate, Resource: "flowschemas",
		Kind: "flowschemas", Name: "new", Code: 201, Result: ledger.ResultOK}}); err != nil || n != 1 {
		t.Errorf("the webhook's Append beside %d stalled exports: %d, %v", opened, n, err)
	}

	// The exports that ran are cut off once a write has waited Stall: the
	// server closes their connections; what the sockets held is read, then
	// the end.
	waitUntil(t, "the stalled exports to be cut off", time.Minute, func() bool {
		for _, x := range stalled {
			if !strings.Contains(x.status, " 429 ") && !closed(x.conn.LocalAddr().String()) {
				return false
			}
		}
		return true
	})
	ran := 0
	for i, x := range stalled {
		if strings.Contains(x.status, " 429 ") {
			continue
		}
		ran++
		_ = x.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := io.Copy(io.Discard, x.r)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			t.Errorf("export %d (%s): still open after it was cut off (%d bytes read)", i, x.status, n)
		case n >= stallEntries*stallObject:
			t.Errorf("export %d: all of its %d bytes came: it was not cut off", i, n)
		}
	}
	if ran == 0 || ran > DefaultExportLimits.PerUser {
		t.Errorf("%d of %d exports of one user ran, want 1 to %d", ran, opened, DefaultExportLimits.PerUser)
	}
}

// waitUntil polls cond until it holds, failing the test after limit.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // between polls of the condition
	}
}
