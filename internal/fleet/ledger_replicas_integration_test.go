//go:build integration

package fleet_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/fleet"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testpg"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// ledgerSigner is a signer nobody runs: an approved request stays as the
// test left it, so the only writes of its CSRs are the test's.
const ledgerSigner = "example.com/clusterdesk-ledger-replicas"

// TestLedgerOnReplicas is the ledger in the deployment the README documents
// for replicas (issue 29): three consoles in token mode behind HAProxy, one
// PostgreSQL ledger (--ledger postgres://…) shared by all, and the devcluster
// API server's audit webhook through the same balancer in TCP mode (as a
// Service passes it to pods: mutual TLS ends at the replica). The replicas
// start together and migrate the schema once. Decisions made with client-go
// as the admin (as kubectl makes them) and approvals through the console on
// one replica reach the ledger once each, whichever replica the API server's
// batches went to; a replica killed (SIGKILL) while the API server sends
// loses nothing it acknowledged, and the others go on ingesting. An auditor
// signed in through the balancer finds all of it on the ledger's pages.
func TestLedgerOnReplicas(t *testing.T) {
	testcluster.Require(t)
	hook := testcluster.RequireAuditWebhook(t)
	started := time.Now()
	bin := testcluster.ConsoleBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	dsn := testpg.Database(t)

	// The admin's writes, each with the audit ID the API server answered:
	// what the ledger must hold once each.
	writes := &auditIDs{}
	adminCfg := rest.CopyConfig(testcluster.RestConfig(t, testcluster.Admin))
	adminCfg.WrapTransport = writes.wrap
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	if adminCfg.BearerToken == "" {
		t.Fatal("the devcluster's admin kubeconfig has no bearer token to sign in with")
	}
	auditorToken := testcluster.RestConfig(t, testcluster.Auditor).BearerToken
	if auditorToken == "" {
		t.Fatal("the devcluster's auditor kubeconfig has no bearer token to sign in with")
	}

	ns, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "deploy-ledger-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testcluster.DeleteNamespace(t, admin, ns.Name) })
	keys := filepath.Join(t.TempDir(), "session-keys")
	writeFile(t, keys, randomKey(t)+"\n")

	f, err := fleet.Start(ctx, fleet.Options{
		Binary: bin, Kubeconfig: testcluster.Kubeconfig(t, testcluster.Admin), Replicas: 3, Dir: t.TempDir(),
		Args: []string{"--auth", "token", "--session-keys", keys, "--namespace", ns.Name, "--ledger", dsn},
		AuditWebhook: &fleet.AuditWebhook{Listen: hook.Listen, Args: []string{
			"--audit-webhook-tls-cert", hook.CertFile, "--audit-webhook-tls-key", hook.KeyFile,
			"--audit-webhook-client-ca", hook.ClientCAFile}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			for _, r := range f.Replicas {
				t.Logf("%s log:\n%s", r.Name, tail(r.Log(), 30))
			}
		}
		f.Stop()
	}()
	upAt := time.Since(started)
	assertMigratedOnce(ctx, t, dsn)

	// Decisions as the admin with client-go: approvals and a denial.
	var kubectlApproved, consoleApproved []string
	for i := range 4 {
		name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: fmt.Sprintf("k%d", i), Signer: ledgerSigner, Client: admin})
		decide(ctx, t, admin, name, certificatesv1.CertificateApproved, "KubectlApprove", "ticket 29")
		kubectlApproved = append(kubectlApproved, name)
	}
	denied := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "deny", Signer: ledgerSigner, Client: admin})
	decide(ctx, t, admin, denied, certificatesv1.CertificateDenied, "KubectlDeny", "not ours")

	// Approvals through the console, on replica A only.
	const replicaA = "r0"
	u := signIn(ctx, t, f, adminCfg.BearerToken)
	for i := range 2 {
		name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: fmt.Sprintf("c%d", i), Signer: ledgerSigner, Client: admin})
		waitCached(ctx, t, f, u, name)
		form := getPage(ctx, t, u, f.URL+"/csrs/"+url.PathEscape(name), replicaA)
		csrf, _ := form.Find(`form[action$="/approve"] input[name=_csrf]`).Attr("value")
		uid, _ := form.Find(`form[action$="/approve"] input[name=uid]`).Attr("value")
		if status := approve(ctx, u, f.URL, name, uid, csrf, replicaA); status != http.StatusSeeOther {
			t.Fatalf("approving %s through the console on %s: status %d, want 303", name, replicaA, status)
		}
		consoleApproved = append(consoleApproved, name)
	}

	// A stream of writes while one replica dies: the one the API server's
	// batches are going to when the kill comes.
	droppedBefore := webhookDropped(ctx, t, admin)
	var victim *fleet.Replica
	killedAt := -1
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		// A second into the stream: a batch or two has gone out.
		time.Sleep(time.Second)
		victim = webhookHolder(ctx, f)
		if victim != nil {
			killedAt = len(writes.all())
			victim.Kill()
		}
	}()
	var stream []string
	for i := range 30 {
		name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: fmt.Sprintf("s%02d", i), Signer: ledgerSigner, Client: admin})
		decide(ctx, t, admin, name, certificatesv1.CertificateApproved, "KubectlApprove", "stream")
		stream = append(stream, name)
		time.Sleep(100 * time.Millisecond)
	}
	<-killed
	if victim == nil {
		t.Fatal("HAProxy passed no webhook connection to any replica within 10 s: the API server sends nothing through it")
	}
	t.Logf("killed %s (it held the API server's webhook connection) after %d acknowledged writes; %d more after", victim.Name, killedAt, len(writes.all())-killedAt)
	if t.Failed() {
		return
	}

	// The auditor, signed in through the balancer (whichever replica
	// answers), reads the ledger: every write the API server acknowledged
	// to the admin is there once, unless the API server itself reports the
	// batch it was sending as lost (a connection cut mid-request by the kill
	// answers nothing, and the API server does not send a POST again after
	// an EOF).
	auditor := signIn(ctx, t, f, auditorToken)
	want := writes.all()
	streamEnd := time.Now()
	var dropped float64
	deadline := time.Now().Add(60 * time.Second)
	var entries []ledgerRecord
	var missing []string
	for {
		entries = exportLedger(ctx, t, f, auditor, "kind=csrs")
		missing = missing[:0]
		seen := countIDs(entries, ledger.SourceAPIServer)
		for _, id := range want {
			if seen[id] == 0 {
				missing = append(missing, id)
			}
		}
		dropped = webhookDropped(ctx, t, admin) - droppedBefore
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			if float64(len(missing)) > dropped {
				t.Fatalf("%d of %d acknowledged writes are not in the ledger after 60 s and the API server reports %.0f audit events dropped by its webhook: %v",
					len(missing), len(want), dropped, missing)
			}
			t.Logf("%d writes missing, all within the %.0f events the API server reports it dropped (a batch cut by the kill)", len(missing), dropped)
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	ledgerDone := time.Since(streamEnd)
	for id, n := range countIDs(entries, ledger.SourceAPIServer) {
		if n > 1 {
			t.Errorf("audit ID %s is in the ledger %d times, want once", id, n)
		}
	}
	names := append(append(append([]string{denied}, kubectlApproved...), consoleApproved...), stream...)
	ingestedAfterKill := 0
	for _, id := range want[killedAt:] {
		if countIDs(entries, ledger.SourceAPIServer)[id] == 1 {
			ingestedAfterKill++
		}
	}
	if ingestedAfterKill == 0 {
		t.Errorf("none of the %d writes after the kill reached the ledger: the replicas left stopped ingesting", len(want)-killedAt)
	}

	// What each decision left: the API server's approve or deny once per
	// CSR, and for the console's approvals the console's own record too.
	byName := map[string][]ledgerRecord{}
	for _, e := range entries {
		byName[e.Name] = append(byName[e.Name], e)
	}
	expect := func(name, source, action string) {
		t.Helper()
		n := 0
		for _, e := range byName[name] {
			if e.Source == source && e.Action == action {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d %s entries from %s in the ledger, want 1: %+v", name, n, action, source, byName[name])
		}
	}
	expect(denied, ledger.SourceAPIServer, ledger.ActionDeny)
	for _, name := range kubectlApproved {
		expect(name, ledger.SourceAPIServer, ledger.ActionApprove)
	}
	for _, name := range consoleApproved {
		expect(name, ledger.SourceAPIServer, ledger.ActionApprove)
		expect(name, ledger.SourceConsole, ledger.ActionApprove)
		for _, e := range byName[name] {
			if e.Signer != ledgerSigner {
				t.Errorf("%s: a %s %s entry names signer %q, want %s", name, e.Source, e.Action, e.Signer, ledgerSigner)
			}
		}
	}
	for _, name := range names {
		expect(name, ledger.SourceAPIServer, ledger.ActionCreate)
	}

	// The ledger's page, as the auditor sees it through the balancer.
	page := getPage(ctx, t, auditor, f.URL+"/ledger?kind=csrs&action=deny&signer="+url.QueryEscape(ledgerSigner), "")
	if !strings.Contains(page.Find(`[data-testid="ledger-object"]`).Text(), denied) {
		t.Errorf("the ledger page of denials for %s does not list %s", ledgerSigner, denied)
	}
	// The signer's decisions list the console's own records too (they carry
	// the CSR's signer).
	bySigner := getPage(ctx, t, auditor, f.URL+urls.LedgerSigner(ledgerSigner)+"&source="+ledger.SourceConsole, "").Find(`[data-testid="ledger-object"]`).Text()
	for _, name := range consoleApproved {
		if !strings.Contains(bySigner, name) {
			t.Errorf("the ledger's console records for signer %s do not list %s", ledgerSigner, name)
		}
	}
	for _, name := range consoleApproved {
		history := getPage(ctx, t, auditor, f.URL+"/ledger/csrs/"+url.PathEscape(name), "")
		if !strings.Contains(history.Text(), "failover test") {
			t.Errorf("the ledger's history of %s does not show the console approval's message", name)
		}
	}
	rate := webhookRate(t, hook, 2*time.Second)
	t.Logf("%.0f events/s through HAProxy into the shared PostgreSQL (4 senders of 100-event batches for 2 s, as the API server's client)", rate)
	t.Logf("replicas up (with build) in %v; %d acknowledged admin writes, %d after the kill of %s; the ledger complete %v after the last write (%d entries of csrs, %d missing, the API server dropped %.0f events); %d CSRs; whole test %v",
		upAt.Round(time.Millisecond), len(want), len(want)-killedAt, victim.Name, ledgerDone.Round(time.Millisecond), len(entries), len(missing), dropped, len(names), time.Since(started).Round(time.Millisecond))
}

// auditIDs records the Audit-Id the API server answers to each successful
// write: its ID in the API server's audit events, so in the ledger.
type auditIDs struct {
	mu  sync.Mutex
	ids []string
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (a *auditIDs) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && r.Method != http.MethodGet && resp.StatusCode/100 == 2 {
			if id := resp.Header.Get("Audit-Id"); id != "" && strings.Contains(r.URL.Path, "certificatesigningrequests") {
				a.mu.Lock()
				a.ids = append(a.ids, id)
				a.mu.Unlock()
			}
		}
		return resp, err
	})
}

func (a *auditIDs) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ids...)
}

// decide adds an Approved or Denied condition as kubectl certificate approve
// or deny does.
func decide(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, typ certificatesv1.RequestConditionType, reason, message string) {
	t.Helper()
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastUpdateTime: metav1.Now()})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
		t.Errorf("%s %s: %v", typ, name, err)
	}
}

// assertMigratedOnce checks goose's version table: replicas that started
// together applied each migration once (the session lock made the others
// wait), and every version the binary knows is there.
func assertMigratedOnce(ctx context.Context, t *testing.T, dsn string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT version_id, count(*) FROM goose_db_version WHERE version_id > 0 GROUP BY version_id ORDER BY version_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var versions []int64
	for rows.Next() {
		var v, n int64
		if err := rows.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("migration %d was applied %d times, want once", v, n)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	migrations, _ := filepath.Glob("../ledger/migrations/postgres/*.sql")
	if len(versions) != len(migrations) || len(versions) == 0 {
		t.Errorf("migrations applied: %v; the binary has %d", versions, len(migrations))
	}
}

// webhookHolder waits for the replica HAProxy passes the API server's
// webhook connection to (its batches go there), for up to 10 s; nil if none.
func webhookHolder(ctx context.Context, f *fleet.Fleet) *fleet.Replica {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if conns, err := f.WebhookConnections(); err == nil {
			for _, r := range f.Replicas {
				if conns[r.Name] > 0 {
					return r
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// webhookDropped is the API server's count of audit events its webhook
// backend gave up on (apiserver_audit_error_total{plugin="webhook"}).
func webhookDropped(ctx context.Context, t *testing.T, cs kubernetes.Interface) float64 {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("the API server's metrics: %v", err)
	}
	s := bufio.NewScanner(strings.NewReader(string(raw)))
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), `apiserver_audit_error_total{plugin="webhook"} `); ok {
			var n float64
			_, _ = fmt.Sscan(v, &n)
			return n
		}
	}
	return 0
}

// ledgerRecord is the part of an NDJSON export line the test reads.
type ledgerRecord struct {
	Source  string `json:"source"`
	AuditID string `json:"auditID"`
	Action  string `json:"action"`
	Name    string `json:"name"`
	Signer  string `json:"signer"`
	Reason  string `json:"reason"`
}

// exportLedger downloads the ledger's NDJSON export through the balancer.
func exportLedger(ctx context.Context, t *testing.T, f *fleet.Fleet, who *user, query string) []ledgerRecord {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.URL+"/ledger.ndjson?"+query, nil)
	resp, err := who.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /ledger.ndjson: status %d", resp.StatusCode)
	}
	var out []ledgerRecord
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 16<<20)
	for s.Scan() {
		var r ledgerRecord
		if err := json.Unmarshal(s.Bytes(), &r); err != nil {
			t.Fatalf("an export line is not JSON: %v", err)
		}
		out = append(out, r)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func countIDs(entries []ledgerRecord, source string) map[string]int {
	n := map[string]int{}
	for _, e := range entries {
		if e.Source == source {
			n[e.AuditID]++
		}
	}
	return n
}

// webhookRate posts batches of synthetic CSR approvals as the API server
// (its client pair) to the balancer's webhook address for d, from 4 senders
// as the API server's parallel batches, and returns the events per second
// acknowledged (stored in the shared ledger).
func webhookRate(t *testing.T, hook testcluster.AuditWebhook, d time.Duration) float64 {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(os.Getenv(testcluster.EnvDir), "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	pair, err := tls.LoadX509KeyPair(hook.ClientCertFile, hook.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}}
	const senders, batch = 4, 100
	var mu sync.Mutex
	acked := 0
	var wg sync.WaitGroup
	start := time.Now()
	for s := range senders {
		wg.Go(func() {
			for i := 0; time.Since(start) < d; i++ {
				resp, err := client.Post("https://"+hook.Listen+"/", "application/json", strings.NewReader(rateBatch(fmt.Sprintf("rate-%d-%d", s, i), batch)))
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					acked += batch
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return float64(acked) / time.Since(start).Seconds()
}

// rateBatch is an EventList of n approvals of made-up CSRs, audit IDs
// prefix-0… (a kind the ledger keeps, so each is stored).
func rateBatch(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"level":"RequestResponse","auditID":"%[1]s-%[2]d","stage":"ResponseComplete",`+
			`"requestURI":"/apis/certificates.k8s.io/v1/certificatesigningrequests/%[1]s-%[2]d/approval","verb":"update",`+
			`"user":{"username":"admin"},"objectRef":{"resource":"certificatesigningrequests","name":"%[1]s-%[2]d","apiGroup":"certificates.k8s.io","apiVersion":"v1","subresource":"approval"},`+
			`"responseStatus":{"metadata":{},"code":200},`+
			`"responseObject":{"kind":"CertificateSigningRequest","apiVersion":"certificates.k8s.io/v1","metadata":{"name":"%[1]s-%[2]d","uid":"u-%[1]s-%[2]d"},"spec":{"signerName":"example.com/rate"},"status":{"conditions":[{"type":"Approved","status":"True","reason":"Rate"}]}},`+
			`"requestReceivedTimestamp":"2026-11-28T13:00:00.000000Z","stageTimestamp":"2026-11-28T13:00:00.001000Z"}`, prefix, i)
	}
	b.WriteString("]}")
	return b.String()
}
