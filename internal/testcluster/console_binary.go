package testcluster

import (
	"bufio"
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
// running for a test, as a person would start it on their kubeconfig: it
// listens on a loopback port and prints a one-time sign-in link.
//
// The charts' run test, cmd/clusterdesk's deploy tests and internal/fleet
// each still start the binary their own way (their flags and logs differ);
// they are the candidates to move onto this one.
type ConsoleBinary struct {
	// Origin is http://127.0.0.1:<port>; LoginURL the sign-in link it printed.
	Origin, LoginURL string

	cmd  *exec.Cmd
	once sync.Once
}

// loginLine is how the console prints its sign-in link in kubeconfig mode
// (cmd/clusterdesk: "clusterdesk: open <url>/login?token=<token>").
var loginLine = regexp.MustCompile(`open (http://\S+)/login\?token=\S+`)

// StartConsoleBinary starts bin with args (env: its whole environment) and
// returns once it printed its sign-in link and /readyz answers 200; it is
// stopped when the test ends, or by Stop.
func StartConsoleBinary(tb testing.TB, bin string, args, env []string) *ConsoleBinary {
	tb.Helper()
	if _, err := os.Stat(bin); err != nil {
		tb.Fatalf("the console binary: %v (run make build)", err)
	}
	c := &ConsoleBinary{cmd: exec.Command(bin, args...)}
	c.cmd.Env = env
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	login := make(chan []string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if m := loginLine.FindStringSubmatch(s.Text()); m != nil {
				select {
				case login <- m:
				default:
				}
			}
		}
	}()
	select {
	case m := <-login:
		c.LoginURL, c.Origin = strings.TrimPrefix(m[0], "open "), m[1]
	case <-time.After(60 * time.Second):
		tb.Fatalf("%s printed no sign-in link within 60 s", bin)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(c.Origin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the console's /readyz not 200 within 90 s (last: %v)", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Stop interrupts the console and waits for it (killing it after 15 s).
func (c *ConsoleBinary) Stop() {
	c.once.Do(func() {
		_ = c.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = c.cmd.Process.Kill()
			<-done
		}
	})
}
