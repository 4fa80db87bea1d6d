package testfixtures

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
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

// FillForStall appends the export's entries.
func FillForStall(t *testing.T, s ledger.Store) {
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
	for len(all) > 0 {
		n := min(len(all), 500)
		if _, err := s.Append(context.Background(), all[:n]); err != nil {
			t.Fatal(err)
		}
		all = all[n:]
	}
}

// stalledExport is an export requested over TCP by a client that never
// reads its response.
type stalledExport struct {
	conn   *net.TCPConn
	r      *bufio.Reader
	status string // the response's status line
}

func openStalledExport(t *testing.T, addr, cookie string) stalledExport {
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
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\n\r\n", urls.LedgerNDJSON, addr, cookie); err != nil {
		t.Fatal(err)
	}
	return stalledExport{conn: c.(*net.TCPConn), r: bufio.NewReaderSize(c, 4096)}
}

// StalledExportsAttack is the attack of issue 43 (class 3) on a console at
// base whose ledger is s (filled by FillForStall): one user (cookie, "" for
// none) opens more exports than the store has connections (SQLite's 4
// readers, PostgreSQL's pool of 8) and reads none. The ledger page, /readyz
// and an Append (the audit webhook's) must still answer; the exports past
// the bounds are refused, at most perUser run, and those are cut off, their
// connections closed (closed says whether the server closed the connection
// of a client's address).
func StalledExportsAttack(t *testing.T, base, cookie string, perUser int, s ledger.Store, closed func(addr string) bool) {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	const opened = 10
	var stalled []stalledExport
	for range opened {
		stalled = append(stalled, openStalledExport(t, addr, cookie))
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
	get := func(path string) (*http.Response, error) {
		r, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return nil, err
		}
		if cookie != "" {
			r.Header.Set("Cookie", cookie)
		}
		return client.Do(r)
	}
	resp, err := get(urls.Ledger)
	if err != nil {
		t.Fatalf("the ledger page beside %d stalled exports: %v", opened, err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || doc.Find(`[data-testid="ledger-unreachable"]`).Length() != 0 ||
		doc.Find(`[data-testid="ledger-row"]`).Length() == 0 {
		t.Errorf("the ledger page beside %d stalled exports: %d, unreachable banner %d, %d rows (%v)", opened,
			resp.StatusCode, doc.Find(`[data-testid="ledger-unreachable"]`).Length(), doc.Find(`[data-testid="ledger-row"]`).Length(), err)
	}
	resp, err = get(urls.Readyz)
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
	if ran == 0 || ran > perUser {
		t.Errorf("%d of %d exports of one user ran, want 1 to %d", ran, opened, perUser)
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
