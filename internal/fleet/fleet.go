// Package fleet runs several clusterdesk processes behind one real HAProxy on
// loopback, the way a team runs replicas: round robin, no sticky sessions,
// health checks on /readyz. Tests and the benchmark use it to kill a replica
// mid-session and to spread browser tabs over replicas. It starts processes and
// nothing else: the devcluster must be up.
//
// The consoles authenticate people in one of two ways:
//
//   - Identity set: proxy mode. HAProxy is the authenticating proxy: it drops
//     any identity headers a client sent, names the user (Identity, or the
//     client's X-Fleet-User header, a test convenience) and adds the shared
//     secret, so every replica trusts every request alike.
//   - Identity nil: Args say how, for example --auth token with a shared
//     --session-keys file and --namespace for sign-outs (the failover test):
//     a person signs in once through the balancer. The harness adds nothing.
//
// A client may pin one request to one replica with the X-Fleet-Replica header
// (its name, "r0", "r1", ...): how a test sends an approval to the replica it is
// about to kill. Every other request is balanced round robin.
package fleet

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Headers a test client may send through the balancer.
const (
	// PinHeader sends a request to the replica it names, not round robin.
	PinHeader = "X-Fleet-Replica"
	// UserHeader names the user HAProxy vouches for (proxy mode), instead of
	// Identity.User: many simulated people through one balancer.
	UserHeader = "X-Fleet-User"
)

// Identity is who HAProxy names to the consoles in proxy mode.
type Identity struct {
	User   string
	Groups []string
}

// Options configure a fleet.
type Options struct {
	Binary     string // bin/clusterdesk
	Kubeconfig string // the consoles' own identity
	Replicas   int    // how many consoles (default 3)
	Dir        string // where the configuration, secret and logs go (created)
	// Identity runs the consoles in proxy mode behind HAProxy (see the package doc).
	Identity *Identity
	// Args are more flags for every console.
	Args []string
	// Env is added to each console's environment (e.g. GOMEMLIMIT).
	Env []string
	// HAProxy is the haproxy binary (default: haproxy on PATH, else /usr/sbin/haproxy).
	HAProxy string
	// TLS makes HAProxy terminate TLS (a certificate of its own for 127.0.0.1,
	// see Roots and Transport) and pass plain HTTP to the consoles with
	// X-Forwarded-For and X-Forwarded-Proto, as an Ingress does. The
	// balancer's port is chosen first and each console is told its public URL
	// (--public-url https://127.0.0.1:port).
	TLS bool
	// ServerTimeout is HAProxy's "timeout server", how long a console may
	// send nothing before HAProxy gives up with 504 (default 1h; proxies in
	// front of real consoles often have 30 or 60 s).
	ServerTimeout time.Duration
	// AuditWebhook puts the consoles' audit webhooks behind the balancer too
	// (see AuditWebhook).
	AuditWebhook *AuditWebhook
}

// AuditWebhook is the API server's audit webhook in front of the replicas as
// a Kubernetes Service puts it: HAProxy listens at Listen in TCP mode and
// passes each connection, TLS and all, to one replica's
// --audit-webhook-listen (a port of its own, chosen by the fleet). The
// replicas end TLS and check the API server's client certificate
// themselves, as pods behind a Service do; the balancer sees bytes only.
type AuditWebhook struct {
	Listen string   // where the API server sends its batches (ready.json's auditWebhook.listen)
	Args   []string // the webhook's TLS flags for every replica (--audit-webhook-tls-cert …)
}

// Fleet is the running consoles and their balancer.
type Fleet struct {
	URL      string     // the balancer: http://127.0.0.1:port
	Replicas []*Replica // r0, r1, ...

	opts    Options
	port    int         // the balancer's, chosen before the consoles start with TLS
	tls     *terminator // with Options.TLS
	haproxy *exec.Cmd
	hpDone  chan struct{}
	stats   string // HAProxy's admin socket
}

// Replica is one console process.
type Replica struct {
	Name       string // r0, r1, ...: the HAProxy server name
	URL        string // its own address (bypassing the balancer)
	MetricsURL string // its /metrics (--metrics-listen)
	LoginURL   string // local mode: the one-time login URL it printed last

	opts    Options
	port    int
	mport   int
	wport   int // its --audit-webhook-listen, with Options.AuditWebhook
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// loginLine is what clusterdesk prints once it listens (cmd/clusterdesk/main.go).
var loginLine = regexp.MustCompile(`^clusterdesk: open (https?://[^/\s]+)(/login(?:\?token=\S+)?)$`)

// listenLine is what clusterdesk prints before loginLine when its public URL
// (--public-url, Options.TLS) is not its own address: the replica's own.
var listenLine = regexp.MustCompile(`^clusterdesk: listening on (http://[^/\s]+)$`)

// Start starts the consoles, waits for each to be ready, then starts HAProxy
// in front of them and waits until it sees every one up. On error everything
// started is stopped.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	if opts.Replicas <= 0 {
		opts.Replicas = 3
	}
	if opts.HAProxy == "" {
		opts.HAProxy = findHAProxy()
	}
	if _, err := os.Stat(opts.HAProxy); err != nil {
		return nil, fmt.Errorf("fleet: HAProxy (%s) is not installed: run `make e2e-deps` (apt-get install haproxy): %w", opts.HAProxy, err)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	f := &Fleet{opts: opts}
	var secret string
	if opts.Identity != nil {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		secret = hex.EncodeToString(b)
		path := filepath.Join(opts.Dir, "proxy-secret")
		if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
			return nil, err
		}
		f.opts.Args = append([]string{"--auth", "proxy", "--proxy-secret-file", path}, opts.Args...)
	}
	if opts.TLS {
		var err error
		if f.tls, err = newTerminator(opts.Dir); err != nil {
			return nil, err
		}
		if f.port, err = freePort(); err != nil {
			return nil, err
		}
		f.opts.Args = append([]string{"--public-url", fmt.Sprintf("https://127.0.0.1:%d", f.port)}, f.opts.Args...)
	}
	for i := range opts.Replicas {
		r := &Replica{Name: fmt.Sprintf("r%d", i), opts: f.opts, logPath: filepath.Join(opts.Dir, fmt.Sprintf("r%d.log", i))}
		f.Replicas = append(f.Replicas, r)
	}
	// The consoles start together: each syncs its own informers (a watch per
	// kind on the API server), which is most of their start-up time.
	errs := make(chan error, len(f.Replicas))
	for _, r := range f.Replicas {
		go func() { errs <- r.start(ctx, 0) }()
	}
	var firstErr error
	for range f.Replicas {
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		f.Stop()
		return nil, firstErr
	}
	if err := f.startHAProxy(ctx, secret); err != nil {
		f.Stop()
		return nil, err
	}
	return f, nil
}

func findHAProxy() string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	return "/usr/sbin/haproxy"
}

// freePort asks the kernel for a free loopback port. Another process may take
// it before the console binds it; the console then fails to start, loudly.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs the console, on port if not 0 (a restart keeps its address, which
// HAProxy's configuration names), and waits for /readyz.
func (r *Replica) start(ctx context.Context, port int) error {
	mport := r.mport
	if mport == 0 {
		var err error
		if mport, err = freePort(); err != nil {
			return err
		}
	}
	listen := "127.0.0.1:0"
	if port != 0 {
		listen = fmt.Sprintf("127.0.0.1:%d", port)
	}
	args := append([]string{"--listen", listen, "--kubeconfig", r.opts.Kubeconfig,
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport)}, r.opts.Args...)
	if w := r.opts.AuditWebhook; w != nil {
		// The port is kept across restarts: HAProxy's configuration names it.
		if r.wport == 0 {
			var err error
			if r.wport, err = freePort(); err != nil {
				return err
			}
		}
		args = append(args, "--audit-webhook-listen", fmt.Sprintf("127.0.0.1:%d", r.wport))
		args = append(args, w.Args...)
	}
	logFile, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.opts.Binary, args...)
	// Flags only: no CLUSTERDESK_* setting from the caller's environment.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLUSTERDESK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, r.opts.Env...)
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return err
	}
	fmt.Fprintf(logFile, "$ %s %s\n", r.opts.Binary, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("fleet: start %s: %w", r.opts.Binary, err)
	}
	done := make(chan struct{})
	r.mu.Lock()
	r.cmd, r.done, r.mport = cmd, done, mport
	r.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)
	r.mu.Unlock()
	urls := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if m := listenLine.FindStringSubmatch(s.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
			if m := loginLine.FindStringSubmatch(s.Text()); m != nil {
				r.mu.Lock()
				r.LoginURL = m[1] + m[2]
				r.mu.Unlock()
				if r.opts.TLS {
					continue // the balancer's URL; listenLine came first
				}
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}()

	deadline := time.NewTimer(90 * time.Second)
	defer deadline.Stop()
	select {
	case u := <-urls:
		r.mu.Lock()
		r.URL = u
		r.mu.Unlock()
	case <-done:
		return fmt.Errorf("fleet: %s exited before listening (log: %s)", r.Name, r.logPath)
	case <-deadline.C:
		r.Kill()
		return fmt.Errorf("fleet: %s printed no address within 90 s (log: %s)", r.Name, r.logPath)
	case <-ctx.Done():
		r.Kill()
		return ctx.Err()
	}
	var p int
	if _, err := fmt.Sscanf(r.URL, "http://127.0.0.1:%d", &p); err != nil {
		r.Kill()
		return fmt.Errorf("fleet: %s listens on %s, not on loopback", r.Name, r.URL)
	}
	r.port = p
	for {
		if ok, _ := get(ctx, r.URL+"/readyz", nil); ok {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("fleet: %s exited while waiting for /readyz (log: %s)", r.Name, r.logPath)
		case <-deadline.C:
			r.Kill()
			return fmt.Errorf("fleet: %s was not ready within 90 s (log: %s)", r.Name, r.logPath)
		case <-ctx.Done():
			r.Kill()
			return ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// get reports whether url answers 200.
func get(ctx context.Context, url string, h http.Header) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

// Kill ends the console at once (SIGKILL): no goodbye to its streams, no
// finished requests, as when a node dies. It returns once the process is gone.
func (r *Replica) Kill() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Stop ends the console gracefully (SIGTERM, SIGKILL after 8 s).
func (r *Replica) Stop() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(8 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

// Running reports whether the process is alive.
func (r *Replica) Running() bool {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Restart starts a stopped or killed console again on its old address.
func (r *Replica) Restart(ctx context.Context) error {
	if r.Running() {
		return fmt.Errorf("fleet: %s is running", r.Name)
	}
	return r.start(ctx, r.port)
}

// Log returns what the console logged (stderr).
func (r *Replica) Log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// Stop ends HAProxy and every console.
func (f *Fleet) Stop() {
	if f.haproxy != nil && f.haproxy.Process != nil {
		_ = f.haproxy.Process.Signal(syscall.SIGTERM)
		select {
		case <-f.hpDone:
		case <-time.After(5 * time.Second):
			_ = f.haproxy.Process.Kill()
			<-f.hpDone
		}
	}
	var wg sync.WaitGroup
	for _, r := range f.Replicas {
		wg.Add(1)
		go func() { defer wg.Done(); r.Stop() }()
	}
	wg.Wait()
}

// Replica returns the replica named name (r0, r1, ...), or nil.
func (f *Fleet) Replica(name string) *Replica {
	for _, r := range f.Replicas {
		if r.Name == name {
			return r
		}
	}
	return nil
}

var errNoHAProxy = errors.New("fleet: HAProxy exited")

// Streams returns how many event streams the console serves now (its
// clusterdesk_sse_connections gauge): which replica holds a tab's stream.
func (r *Replica) Streams(ctx context.Context) (int, error) {
	n, err := r.Metric(ctx, "clusterdesk_sse_connections")
	return int(n), err
}

// Metric reads the unlabelled sample name from the console's /metrics now
// (a gauge such as process_resident_memory_bytes).
func (r *Replica) Metric(ctx context.Context, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.MetricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), name+" "); ok {
			var n float64
			if _, err := fmt.Sscan(v, &n); err != nil {
				return 0, err
			}
			return n, nil
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("fleet: no " + name + " in " + r.MetricsURL)
}
