package testcluster

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Proxy is a loopback TCP proxy between one client (the console under test)
// and the devcluster's API server, which a test can cut and restore: the
// faithful "clusterdesk lost the API server" fault, while the test's own
// clients keep talking to the API server directly. TLS passes through
// untouched (the serving certificate names 127.0.0.1, whatever the port).
type Proxy struct {
	target string // host:port of the API server
	addr   string // host:port the proxy listens on, the same across cuts

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to the devcluster's API server; it is closed when the
// test ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	u, err := url.Parse(Require(t).Server)
	if err != nil {
		t.Fatalf("devcluster server URL: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{target: u.Host, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

// Config returns the identity's client config pointed at the proxy.
func (p *Proxy) Config(t testing.TB, identity string) *rest.Config {
	t.Helper()
	cfg := RestConfig(t, identity)
	cfg.Host = "https://" + p.addr
	return cfg
}

// Cut stops accepting (new connections are refused, as by a server that is
// down) and breaks every open connection.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// Restore accepts connections again on the same address.
func (p *Proxy) Restore(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	// The port was ours a moment ago; give a racing user of it a few tries.
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serve(ln)
}

// serve accepts on ln until it is closed; call with p.mu held or before p is shared.
func (p *Proxy) serve(ln net.Listener) {
	p.ln = ln
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Cut (net.ErrClosed) or the test's end
			}
			p.pipe(c)
		}
	}()
}

func (p *Proxy) pipe(c net.Conn) {
	p.mu.Lock()
	if p.ln == nil { // cut between Accept and here
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
			c.Close()
		}()
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[up] = struct{}{}
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.conns, up)
			p.mu.Unlock()
			up.Close()
		}()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
		go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
		<-done // one direction ended: end both (the deferred closes unblock the other)
	}()
}

func (p *Proxy) close() {
	p.Cut()
	p.wg.Wait()
}
