package handlers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// mib is the request body limit, maxBody.
const mib = 1 << 20

// TestOversizedBodyIsRefusedEarly sends a POST announcing 2 MiB over a real
// connection but only its first KiB: the server must answer 413 with a
// message saying what happened without waiting for the rest, and nothing may
// reach the writer.
func TestOversizedBodyIsRefusedEarly(t *testing.T) {
	ts := newTestServer(t, false)
	sess := ts.login(t)
	srv := httptest.NewServer(ts.e)
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "POST /csrs/some-csr/approve HTTP/1.1\r\nHost: " + srv.Listener.Addr().String() + "\r\n" +
		"Content-Type: application/x-www-form-urlencoded\r\nSec-Fetch-Site: same-origin\r\n" +
		"X-CSRF-Token: " + pageCSRFToken(t, ts.e, withCookie(sess)) + "\r\n" +
		"Cookie: " + sess.Name + "=" + sess.Value + "\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n", 2*mib)
	if _, err := io.WriteString(conn, head+"message="+strings.Repeat("x", 1024)); err != nil {
		t.Fatal(err)
	}
	// The rest of the body never comes: an answer proves the refusal is early.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body was still incomplete: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	for _, want := range []string{"larger than 1MiB", "refused before anything reached the API server"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the 413 page does not say %q:\n%s", want, body)
		}
	}
	if ts.writer.calls != 0 {
		t.Errorf("the writer was called %d times", ts.writer.calls)
	}
}

// TestBodyLimitBoundary: a body of exactly 1 MiB passes the limit (the
// handler answers, here refusing the long message), one byte more is 413;
// also when the body comes chunked, without a Content-Length to check first.
func TestBodyLimitBoundary(t *testing.T) {
	// A user who may read CSRs: the route's access check lets the body through to the handler.
	ts := newTestServerOf(t, false, newCSRCluster(), allowAll{})
	sess := ts.login(t)
	srv := httptest.NewServer(ts.e)
	t.Cleanup(srv.Close)

	prefix := "message="
	for _, tt := range []struct {
		name    string
		size    int
		chunked bool
		want    int
	}{
		{"1 MiB", mib, false, http.StatusBadRequest},
		{"1 MiB + 1", mib + 1, false, http.StatusRequestEntityTooLarge},
		{"2 MiB chunked", 2 * mib, true, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(prefix + strings.Repeat("x", tt.size-len(prefix)))
			if tt.chunked {
				body = io.MultiReader(body) // hides the length: the client sends it chunked
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/csrs/some-csr/approve", body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("X-CSRF-Token", pageCSRFToken(t, ts.e, withCookie(sess)))
			req.AddCookie(sess)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if ts.writer.calls != 0 {
				t.Errorf("the writer was called %d times", ts.writer.calls)
			}
		})
	}
}

// TestSlowLorisHeadersTimeOut runs the real clusterdesk binary and opens a
// connection that sends valid header lines one a second and never ends them.
// The server must cut it off (http.Server.ReadHeaderTimeout, 10 s in main)
// while still answering other clients. The console starts without a
// reachable cluster, so no devcluster is needed.
func TestSlowLorisHeadersTimeOut(t *testing.T) {
	dir := t.TempDir()
	bin := testcluster.ConsoleBin(t)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	// Port 1 on loopback: nothing answers, and the console starts anyway.
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--kubeconfig", kubeconfig, "--log-level", "error")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`open http://([^/]+)/login`)
		for s.Scan() {
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var host string
	select {
	case host = <-addr:
	case <-time.After(60 * time.Second):
		t.Fatalf("the console printed no login URL within 60 s; stderr:\n%s", stderr.String())
	}

	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: "+host+"\r\n"); err != nil {
		t.Fatal(err)
	}
	stopTrickle := make(chan struct{})
	defer close(stopTrickle)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stopTrickle:
				return
			case <-time.After(time.Second):
			}
			if _, err := fmt.Fprintf(conn, "X-Slow-%d: still sending\r\n", i); err != nil {
				return
			}
		}
	}()
	// Meanwhile another client is served.
	resp, err := http.Get("http://" + host + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz for a normal client: %d", resp.StatusCode)
	}

	_ = conn.SetReadDeadline(time.Now().Add(40 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept a connection whose headers never ended for %s", took.Round(time.Second))
	}
	// A close at once would be some other refusal, not the header timeout.
	if took < 5*time.Second {
		t.Fatalf("the connection ended after %s (%d bytes, err %v): too soon for the 10 s header timeout", took, n, err)
	}
	t.Logf("the server closed the slow-header connection after %s", took.Round(100*time.Millisecond))
}
