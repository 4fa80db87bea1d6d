package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/build"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/pki"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/procs"
)

// errReported tells main that the error was printed already.
var errReported = errors.New("error already reported")

type upOptions struct {
	moduleDir, dir, binDir string
	seed, fixtures         string
	release                build.Release
	oidcLifetime           time.Duration
	apiservers             int
	standby                bool
}

func runUp(args []string) error {
	opts, err := parseUpOptions(args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Signals are caught before anything starts, so an interrupt during
	// startup still stops what was already running.
	outages := catchSignals(ctx, cancel)

	c := &cluster{dir: opts.dir, binDir: opts.release.BinDir(opts.binDir), release: opts.release}
	buildOpts := build.Options{ModuleDir: opts.moduleDir, BinDir: opts.binDir, Out: os.Stdout, Release: opts.release, SharedDir: build.DefaultSharedDir()}
	err = build.Ensure(ctx, buildOpts)
	if err == nil && opts.release.AuthenticationConfig {
		c.oidcBin, err = build.EnsureProvider(ctx, buildOpts)
	}
	if err == nil {
		err = c.start(ctx, opts)
	}
	if err == nil {
		err = c.serve(ctx, outages)
	}
	if ctx.Err() != nil {
		err = nil // interrupted: whatever failed was cut short on purpose
	}
	// The error goes out before the seconds shutdown takes, so it is not
	// mistaken for a problem of the shutdown.
	if err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
	}
	c.shutdown()
	if err != nil {
		return errReported
	}
	fmt.Println("devcluster: stopped")
	return nil
}

func parseUpOptions(args []string) (upOptions, error) {
	moduleDir, err := findModuleDir()
	if err != nil {
		return upOptions{}, err
	}
	opts := upOptions{moduleDir: moduleDir}
	fs := flag.NewFlagSet("devcluster up", flag.ContinueOnError)
	fs.StringVar(&opts.dir, "dir", defaultDir(moduleDir), "cluster state: etcd data, PKI, kubeconfigs, logs, audit log, ready.json")
	fs.StringVar(&opts.binDir, "bin-dir", defaultBinDir(moduleDir), "where the control-plane binaries are built")
	fs.StringVar(&opts.seed, "seed", "", `load a built-in data set once ready; "demo" is the only one`)
	fs.StringVar(&opts.fixtures, "fixtures", "", "directory of YAML manifests to load once ready (webhooks get failurePolicy Ignore)")
	fs.DurationVar(&opts.oidcLifetime, "oidc-id-token-lifetime", time.Hour, "lifetime of the ID tokens the OpenID provider issues to the clusterdesk and oauth2-proxy clients")
	fs.IntVar(&opts.apiservers, "apiservers", 1, fmt.Sprintf("kube-apiserver instances sharing the etcd, instance N on 127.0.0.N (1 to %d), all listed in the default/kubernetes EndpointSlice", pki.MaxAPIServers))
	fs.BoolVar(&opts.standby, "standby", false, "pause the instances after the first (SIGSTOP) once the cluster is ready: they spend no CPU until a test resumes one (SIGCONT, internal/testcluster.APIServers); ready.json marks them")
	version := fs.String("apiserver-version", "1.36", "Kubernetes release to run: 1.36, or 1.28 (kube-apiserver only: no controller manager, so approved CSRs are not issued)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: devcluster up [flags]\n\n"+
			"Runs the cluster in the foreground. SIGINT/SIGTERM stop it; SIGUSR1 stops\n"+
			"kube-apiserver and SIGUSR2 starts it again on the same port (outage tests).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if opts.release, err = build.LookupRelease(*version); err != nil {
		return opts, fmt.Errorf("--apiserver-version: %w", err)
	}
	if opts.apiservers < 1 || opts.apiservers > pki.MaxAPIServers {
		return opts, fmt.Errorf("--apiservers %d: must be 1 to %d", opts.apiservers, pki.MaxAPIServers)
	}
	if opts.oidcLifetime <= 0 {
		return opts, fmt.Errorf("--oidc-id-token-lifetime %s: must be positive", opts.oidcLifetime)
	}
	if opts.seed != "" && opts.seed != "demo" {
		return opts, fmt.Errorf("--seed %q: the only data set is \"demo\"", opts.seed)
	}
	for _, p := range []*string{&opts.dir, &opts.binDir, &opts.fixtures} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// catchSignals cancels ctx on SIGINT or SIGTERM and passes SIGUSR1 and
// SIGUSR2 on through the returned channel. Signals stay caught afterwards, so
// a second Ctrl-C cannot cut the shutdown short (it takes seconds at most)
// and leave ready.json or etcd's lock behind.
func catchSignals(ctx context.Context, cancel context.CancelFunc) <-chan os.Signal {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2)
	outages := make(chan os.Signal, 4)
	go func() {
		for {
			select {
			case s := <-signals:
				if s == syscall.SIGINT || s == syscall.SIGTERM {
					fmt.Printf("devcluster: %s, stopping\n", s)
					cancel()
					return
				}
				select {
				case outages <- s:
				default: // a backlog of outage signals must not block Ctrl-C
					fmt.Printf("devcluster: %s ignored: still handling earlier ones\n", s)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return outages
}

// serve keeps the cluster running until ctx ends or a component fails, and
// stops or restarts kube-apiserver on SIGUSR1 and SIGUSR2.
func (c *cluster) serve(ctx context.Context, outages <-chan os.Signal) error {
	exited := c.firstExit(c.apiservers[1:])
	for {
		var apiserverExited, othersExited, kcmExited, oidcExited <-chan struct{}
		if !c.outage {
			apiserverExited = c.apiserver.Done()
		}
		othersExited = exited.done
		if c.kcm != nil { // nil when the release runs without a controller manager
			kcmExited = c.kcm.Done()
		}
		if c.oidc != nil { // nil when the release has no --authentication-config
			oidcExited = c.oidc.Done()
		}
		select {
		case <-ctx.Done():
			return nil
		case s := <-outages:
			if err := c.handleOutageSignal(ctx, s); err != nil {
				return err
			}
		case <-apiserverExited:
			return unexpectedExit(c.apiserver)
		case <-othersExited:
			return unexpectedExit(*exited.proc)
		case <-kcmExited:
			return unexpectedExit(c.kcm)
		case <-oidcExited:
			return unexpectedExit(c.oidc)
		case err := <-c.etcd.Err():
			return fmt.Errorf("embedded etcd failed: %w", err)
		}
	}
}

// exitWatch is closed when the first of several processes exits, which it names.
type exitWatch struct {
	done chan struct{}
	proc **procs.Proc
}

// firstExit watches ps (the instances after the first, which are never
// restarted) for an exit; its goroutines end with the processes.
func (c *cluster) firstExit(ps []*procs.Proc) exitWatch {
	w := exitWatch{done: make(chan struct{}), proc: new(*procs.Proc)}
	if len(ps) == 0 {
		return exitWatch{}
	}
	var once sync.Once
	for _, p := range ps {
		go func() {
			<-p.Done()
			once.Do(func() { *w.proc = p; close(w.done) })
		}()
	}
	return w
}

// unexpectedExit describes a child that ended without being asked to.
func unexpectedExit(p *procs.Proc) error {
	status := "exit status 0"
	if err := p.Err(); err != nil {
		status = err.Error()
	}
	return fmt.Errorf("%s exited unexpectedly (%s); see %s", p.Name, status, p.LogPath)
}

// handleOutageSignal stops kube-apiserver on SIGUSR1 and starts it again on
// SIGUSR2; the controller manager keeps running and retries meanwhile.
func (c *cluster) handleOutageSignal(ctx context.Context, s os.Signal) error {
	switch {
	case s == syscall.SIGUSR1 && !c.outage:
		c.outage = true
		start := time.Now()
		if err := c.apiserver.Stop(stopGrace); err != nil {
			return err
		}
		fmt.Printf("devcluster: SIGUSR1: kube-apiserver stopped in %s; SIGUSR2 starts it again on %s\n", time.Since(start).Round(time.Millisecond), c.server)
	case s == syscall.SIGUSR2 && c.outage:
		start := time.Now()
		if err := c.startAPIServer(ctx); err != nil {
			return err
		}
		c.outage = false
		fmt.Printf("devcluster: SIGUSR2: kube-apiserver is back on %s after %s\n", c.server, time.Since(start).Round(time.Millisecond))
	case c.outage:
		fmt.Printf("devcluster: %s ignored: kube-apiserver is already stopped\n", s)
	default:
		fmt.Printf("devcluster: %s ignored: kube-apiserver is already running\n", s)
	}
	return nil
}
