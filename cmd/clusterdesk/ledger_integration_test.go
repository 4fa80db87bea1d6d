//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// ledgerConsole is a console process serving the audit webhook into a
// SQLite ledger at dsn.
type ledgerConsole struct {
	cmd     *exec.Cmd
	webhook string // 127.0.0.1:PORT
	stderr  *bytes.Buffer
	mu      sync.Mutex
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startLedgerConsole runs bin with the devcluster's audit webhook key
// material on a port of its own (the devcluster's API server sends its own
// batches to ready.json's address, not here: the test is the only sender).
func startLedgerConsole(t *testing.T, bin, dsn string) *ledgerConsole {
	t.Helper()
	w := testcluster.RequireAuditWebhook(t)
	c := &ledgerConsole{webhook: freeAddr(t), stderr: &bytes.Buffer{}}
	c.cmd = exec.Command(bin, "--kubeconfig", testcluster.Kubeconfig(t, testcluster.Admin), "--listen", "127.0.0.1:0",
		"--audit-log", "", "--audit-events=false", "--ledger", dsn,
		"--audit-webhook-listen", c.webhook, "--audit-webhook-tls-cert", w.CertFile, "--audit-webhook-tls-key", w.KeyFile,
		"--audit-webhook-client-ca", w.ClientCAFile)
	c.cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdout = nil
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() })
	serving := make(chan struct{})
	go func() {
		s := bufio.NewScanner(stderr)
		once := sync.Once{}
		for s.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(s.Text() + "\n")
			c.mu.Unlock()
			if strings.Contains(s.Text(), "serving the audit webhook") {
				once.Do(func() { close(serving) })
			}
		}
	}()
	select {
	case <-serving:
	case <-time.After(60 * time.Second):
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("the console did not serve the audit webhook:\n%s", c.stderr)
	}
	return c
}

// apiServerClient posts as the devcluster's API server: its client
// certificate as audit webhook client, trusting the devcluster CA.
func apiServerClient(t *testing.T) *http.Client {
	t.Helper()
	w := testcluster.RequireAuditWebhook(t)
	ca, err := os.ReadFile(filepath.Join(os.Getenv(testcluster.EnvDir), "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	pair, err := tls.LoadX509KeyPair(w.ClientCertFile, w.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
}

// eventList is a batch of n CSR approval events with audit IDs
// prefix-00000000… on, as the API server sends them.
func eventList(prefix string, from, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"level":"RequestResponse","auditID":"%s-%08d","stage":"ResponseComplete",`+
			`"requestURI":"/apis/certificates.k8s.io/v1/certificatesigningrequests/ledger-kill-%d/approval","verb":"update",`+
			`"user":{"username":"admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.36.3",`+
			`"objectRef":{"resource":"certificatesigningrequests","name":"ledger-kill-%d","uid":"0000-%d","apiGroup":"certificates.k8s.io","apiVersion":"v1","subresource":"approval"},`+
			`"responseStatus":{"metadata":{},"code":200},`+
			`"responseObject":{"kind":"CertificateSigningRequest","apiVersion":"certificates.k8s.io/v1","metadata":{"name":"ledger-kill-%d","uid":"0000-%d"},"spec":{"signerName":"kubernetes.io/kube-apiserver-client"},"status":{"conditions":[{"type":"Approved","status":"True","reason":"KubectlApprove","message":"ticket %d"}]}},`+
			`"requestReceivedTimestamp":"2026-11-28T13:00:00.000000Z","stageTimestamp":"2026-11-28T13:00:00.001000Z"}`,
			prefix, from+i, from+i, from+i, from+i, from+i, from+i, from+i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// storedIDs opens the ledger at dsn (the console is gone) and returns the
// audit IDs it holds.
func storedIDs(t *testing.T, dsn string) map[string]bool {
	t.Helper()
	store, err := ledger.Open(context.Background(), dsn, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ids := map[string]bool{}
	if err := store.Export(context.Background(), ledger.Query{Source: ledger.SourceAPIServer}, func(e ledger.Entry) error {
		ids[e.AuditID] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// A console killed (SIGKILL) while the API server sends it batches loses
// none it acknowledged: 200 comes only after the ledger committed. Restarted
// on the same file, it serves the ledger it had; the batches the API server
// retries (here, all of them again) are stored once.
func TestLedgerKeepsEveryAcknowledgedBatchAcrossAKill(t *testing.T) {
	bin := testcluster.ConsoleBin(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")
	console := startLedgerConsole(t, bin, dsn)
	client := apiServerClient(t)

	const senders, batch = 4, 100
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	started := time.Now()
	for s := range senders {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				from := (s*1_000_000 + i*batch)
				resp, err := client.Post("https://"+console.webhook+"/", "application/json", bytes.NewReader(eventList("kill", from, batch)))
				if err != nil {
					return // killed
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					for j := range batch {
						acked[fmt.Sprintf("kill-%08d", from+j)] = true
					}
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(3 * time.Second)
	if err := console.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = console.cmd.Wait()
	close(stop)
	wg.Wait()
	elapsed := time.Since(started)
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	if n == 0 {
		t.Fatalf("no batch was acknowledged before the kill:\n%s", console.stderr)
	}
	stored := storedIDs(t, dsn)
	missing := 0
	for id := range acked {
		if !stored[id] {
			missing++
		}
	}
	t.Logf("%d events acknowledged in %v before SIGKILL (%.0f events/s through the webhook into SQLite, %d senders of %d-event batches); %d stored after the kill, %d acknowledged ones missing",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), senders, batch, len(stored), missing)
	if missing > 0 {
		t.Errorf("%d acknowledged events are not in the ledger after the kill", missing)
	}

	// Restarted on the same file: an acknowledged batch sent again is
	// stored once.
	again := startLedgerConsole(t, bin, dsn)
	resp, err := client.Post("https://"+again.webhook+"/", "application/json", bytes.NewReader(eventList("kill", 0, batch)))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a batch sent again after the restart: %v %v", resp, err)
	}
	resp.Body.Close()
	_ = again.cmd.Process.Signal(syscall.SIGTERM)
	_ = again.cmd.Wait()
	if after := storedIDs(t, dsn); len(after) < len(stored) || len(after) > len(stored)+batch {
		t.Errorf("after the batch sent again: %d entries, had %d", len(after), len(stored))
	}
}
