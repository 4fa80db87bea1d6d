package testcluster

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// ConsoleBinary is the console's binary (make build's bin/clusterdesk)
// running for a test: it listens on a loopback port and, in kubeconfig
// mode, prints a one-time sign-in link.
//
// cmd/clusterdesk's deploy tests and internal/fleet still start the binary
// their own way (their flags and logs differ); they are the candidates to
// move onto this one.
type ConsoleBinary struct {
	*Process
	// Origin is where the process answers, http://127.0.0.1:<port>; LoginURL
	// the sign-in link it printed (its one-time token in kubeconfig mode,
	// else the sign-in page at the public URL); PublicURL what people open
	// (--public-url, else Origin).
	Origin, LoginURL, PublicURL string
}

// The console's stdout (cmd/clusterdesk/main.go): "clusterdesk: listening on
// <url>" when --public-url differs from where it listens, then "clusterdesk:
// open <url>/login" (with ?token=<token> in kubeconfig mode).
var (
	listeningLine = regexp.MustCompile(`^clusterdesk: listening on (http://\S+)$`)
	loginLine     = regexp.MustCompile(`^clusterdesk: open ((https?://\S+)/login(\?token=\S+)?)$`)
)

// StartConsoleBinary starts bin with args (env: its whole environment) and
// returns once it printed its sign-in link and /readyz answers 200; it is
// stopped when the test ends, or by Stop. Its log (stderr) is in the
// failure message when it does not get there.
func StartConsoleBinary(tb testing.TB, bin string, args, env []string) *ConsoleBinary {
	tb.Helper()
	c := &ConsoleBinary{Process: StartProcess(tb, bin, args, env)}
	var listening string
	deadline := time.Now().Add(60 * time.Second)
	for c.LoginURL == "" {
		line, ok := c.NextStdout(time.Until(deadline))
		if !ok {
			tb.Fatalf("%s printed no sign-in link within 60 s\n%s", bin, c.Logs())
		}
		if m := listeningLine.FindStringSubmatch(line); m != nil {
			listening = m[1]
		}
		if m := loginLine.FindStringSubmatch(line); m != nil {
			c.LoginURL, c.PublicURL = m[1], m[2]
		}
	}
	c.Origin = c.PublicURL
	if listening != "" {
		c.Origin = listening
	}
	deadline = time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(c.Origin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the console's /readyz not 200 within 90 s (last: %v)\n%s", err, c.Logs())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Process is a binary a test runs (the console, `clusterdesk approver`,
// oauth2-proxy): its stdout line by line for the test to wait on, its stderr
// kept for failure messages.
type Process struct {
	name  string
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	out   strings.Builder // stdout, whole
	logs  strings.Builder // stderr, whole
	once  sync.Once
}

// StartProcess starts bin with args and env (its whole environment), stopped
// when the test ends or by Stop.
func StartProcess(tb testing.TB, bin string, args, env []string) *Process {
	tb.Helper()
	if _, err := os.Stat(bin); err != nil {
		tb.Fatalf("%v (make build builds bin/clusterdesk, make oauth2-proxy .cache/bin/oauth2-proxy)", err)
	}
	p := &Process{name: bin, cmd: exec.Command(bin, args...), lines: make(chan string, 1024)}
	p.cmd.Env = env
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Stop)
	go p.read(stdout, &p.out, true)
	go p.read(stderr, &p.logs, false)
	return p
}

func (p *Process) read(r io.Reader, into *strings.Builder, queue bool) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		p.mu.Lock()
		into.WriteString(s.Text() + "\n")
		p.mu.Unlock()
		if queue {
			select {
			case p.lines <- s.Text():
			default: // nobody waits on that many lines; Stdout keeps them all
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
	if queue {
		close(p.lines)
	}
}

// NextStdout returns the next line the process printed to stdout, false when
// none came within timeout or it ended.
func (p *Process) NextStdout(timeout time.Duration) (string, bool) {
	select {
	case l, ok := <-p.lines:
		return l, ok
	case <-time.After(timeout):
		return "", false
	}
}

// Stdout is everything the process printed to stdout so far.
func (p *Process) Stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Logs is everything the process printed to stderr so far, named.
func (p *Process) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.name + "'s log:\n" + p.logs.String()
}

// WaitLog waits until the process's stderr holds a match of re and returns
// it, or fails the test naming what it waited for.
func (p *Process) WaitLog(tb testing.TB, re *regexp.Regexp, timeout time.Duration, what string) []string {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		m := re.FindStringSubmatch(p.logs.String())
		p.mu.Unlock()
		if m != nil {
			return m
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %s\n%s", what, timeout, p.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop interrupts the process and waits for it (killing it after 15 s).
func (p *Process) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	})
}
