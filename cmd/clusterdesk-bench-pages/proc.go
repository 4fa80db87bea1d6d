package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// console is bin/clusterdesk running as a child process on loopback.
type console struct {
	cmd     *exec.Cmd
	started time.Time
	baseURL string
	login   string // the one-time login URL it printed
	// pprof is the console's Go profiles (--pprof-listen, on loopback).
	pprof  string
	client *http.Client

	mu      sync.Mutex
	lastGC  string // the last GODEBUG=gctrace line
	heapMiB int    // live heap after the last GC, MiB
	gcs     int
}

// loginLine is what clusterdesk prints for the person who started it.
var loginLine = regexp.MustCompile(`^clusterdesk: open (http://[^/\s]+)(/login\?token=\S+)$`)

// startConsole runs binary with the admin kubeconfig on a free loopback port.
// gctrace makes the runtime print the live heap after every collection, which
// is how the Go heap is read without a debug endpoint in the product. The
// console's log goes to logPath.
func startConsole(ctx context.Context, binary, kubeconfig, logPath string, env ...string) (*console, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	pprofAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, binary, "--listen", "127.0.0.1:0", "--kubeconfig", kubeconfig)
	// The profiles' address goes in the environment: a console built before
	// --pprof-listen ignores it (a before/after with an older binary).
	cmd.Env = append(append(os.Environ(), "GODEBUG=gctrace=1", "CLUSTERDESK_PPROF_LISTEN="+pprofAddr), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	jar, _ := cookiejar.New(nil)
	c := &console{cmd: cmd, pprof: "http://" + pprofAddr + "/debug/pprof", client: &http.Client{
		Jar:     jar,
		Timeout: 60 * time.Second,
		// The login answers 303 to /; the cookie is what matters.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	c.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	go c.readStderr(stderr, logFile)

	urls := make(chan [2]string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if m := loginLine.FindStringSubmatch(s.Text()); m != nil {
				select {
				case urls <- [2]string{m[1], m[2]}:
				default:
				}
			}
		}
	}()
	select {
	case u := <-urls:
		c.baseURL, c.login = u[0], u[0]+u[1]
	case <-time.After(60 * time.Second):
		c.stop()
		return nil, fmt.Errorf("%s printed no login URL within 60 s (log: %s)", binary, logPath)
	}
	return c, nil
}

// gcLine matches the heap sizes of a gctrace line: before, after, live (MB).
var gcLine = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

// parseGC returns the live heap in MB of a gctrace line.
func parseGC(line string) (int, bool) {
	m := gcLine.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[3])
	return n, err == nil
}

func (c *console) readStderr(r io.Reader, log *os.File) {
	defer log.Close()
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if mb, ok := parseGC(line); ok {
			c.mu.Lock()
			c.lastGC, c.heapMiB, c.gcs = line, mb, c.gcs+1
			c.mu.Unlock()
		}
		fmt.Fprintln(log, line)
	}
}

// heap returns the live heap after the last collection (MiB, as gctrace
// rounds) and how many collections ran.
func (c *console) heap() (mib, gcs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heapMiB, c.gcs
}

// signIn redeems the login URL; the session cookie stays in the client's jar.
func (c *console) signIn() error {
	resp, err := c.client.Get(c.login)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("login answered %s", resp.Status)
	}
	return nil
}

// waitFor polls path until it answers 200 and returns when it did.
func (c *console) waitFor(path string, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		resp, err := c.client.Get(c.baseURL + path)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Now(), nil
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s did not answer 200 within %s (last: %v)", path, limit, errors.Join(err, statusErr(resp)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func statusErr(resp *http.Response) error {
	if resp == nil {
		return nil
	}
	return errors.New(resp.Status)
}

// rss returns the console's resident set size in bytes (Linux /proc).
func (c *console) rss() (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(raw))
}

// cpu is the console's CPU time so far (user and system), so a reading can
// say what a phase cost, garbage collection included.
func (c *console) cpu() (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(raw))
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every
// Linux architecture Go runs on (the kernel's ABI, whatever CONFIG_HZ is).
const clockTicks = 100

// parseStatCPU reads utime + stime (fields 14 and 15) from a /proc/<pid>/stat
// text; the fields are counted after the command's closing parenthesis, as
// the command itself may hold spaces and parentheses.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command in /proc stat")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat has %d fields after the command", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat time %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// parseVmRSS reads VmRSS (kB) from a /proc/<pid>/status text.
func parseVmRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// stop ends the console with SIGINT (its graceful shutdown) and waits.
func (c *console) stop() {
	if c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// freeLoopbackAddr is a loopback address no one listens on now.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// saveHeapProfile writes the console's heap profile after a full GC
// (/debug/pprof/heap?gc=1) to path, for go tool pprof
// -sample_index=inuse_space. A console without --pprof-listen has none: it
// returns the error, which the caller only logs.
func (c *console) saveHeapProfile(path string) error {
	resp, err := http.Get(c.pprof + "/heap?gc=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/heap: %s", c.pprof, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
