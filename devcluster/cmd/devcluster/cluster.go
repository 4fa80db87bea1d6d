package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/access"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/build"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/etcd"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/pki"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/plane"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/procs"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/ready"
)

const (
	stopGrace    = 5 * time.Second
	readyTimeout = 90 * time.Second
)

// cluster is one running devcluster and everything shutdown must undo.
type cluster struct {
	dir, binDir string // binDir holds this release's binaries
	release     build.Release
	layout      plane.Layout
	lock        *os.File
	etcd        *etcd.Server
	apiserver   *procs.Proc   // instance 1, the kubeconfigs' server; apiservers[0]
	apiservers  []*procs.Proc // every instance, 127.0.0.1 first
	standby     bool          // the instances after the first are paused (--standby)
	apiPort     int           // every instance's secure port
	kcm         *procs.Proc
	oidc        *procs.Proc // the OpenID provider; nil on releases without --authentication-config
	oidcBin     string
	oidcDetails string // DIR/oidc/oidc.json once the provider runs
	server      string // https://127.0.0.1:PORT
	caPEM       []byte
	users       []access.User
	outage      bool // kube-apiserver stopped on purpose (SIGUSR1)
	// auditWebhookListen is the address the API server sends audit batches to.
	auditWebhookListen string
}

func (c *cluster) readyPath() string { return filepath.Join(c.dir, "ready.json") }

// start brings the cluster up and writes ready.json as its very last step.
func (c *cluster) start(ctx context.Context, opts upOptions) error {
	began := time.Now()
	if err := c.prepare(); err != nil {
		return err
	}
	ports, err := freePorts(6)
	if err != nil {
		return err
	}
	etcdClientPort, etcdPeerPort, apiPort, kcmPort, oidcPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	c.server = plane.ServerURL(apiPort)
	// Nobody listens there until a console runs as the audit webhook
	// backend; meanwhile the API server retries and drops its batches.
	c.auditWebhookListen = fmt.Sprintf("127.0.0.1:%d", ports[5])
	c.layout.AuditWebhook = "https://" + c.auditWebhookListen

	// The provider comes first: kube-apiserver fetches its discovery
	// document when it starts (and retries meanwhile, refusing every ID
	// token), so starting it second would open a window of refused sign-ins.
	if c.release.AuthenticationConfig {
		if err := c.startOIDC(ctx, opts, oidcPort); err != nil {
			return err
		}
	} else {
		fmt.Printf("devcluster: Kubernetes %s has no --authentication-config: no OpenID provider\n", c.release.Version)
	}

	if c.etcd, err = etcd.Start(filepath.Join(c.dir, "etcd"), filepath.Join(c.layout.LogDir, "etcd.log"), etcdClientPort, etcdPeerPort); err != nil {
		return err
	}
	c.apiPort = apiPort
	for n := 1; n <= opts.apiservers; n++ {
		p, err := plane.APIServer(c.layout, c.etcd.ClientURL, n, apiPort)
		if err != nil {
			return err
		}
		c.apiservers = append(c.apiservers, p)
	}
	c.apiserver = c.apiservers[0]
	if err := c.startAPIServers(ctx); err != nil {
		return err
	}
	fmt.Printf("devcluster: %d kube-apiserver instance(s) ready on port %d after %s\n", len(c.apiservers), apiPort, time.Since(began).Round(time.Millisecond))
	ips := make([]net.IP, len(c.apiservers))
	for i := range c.apiservers {
		ips[i] = pki.InstanceIP(i + 1)
	}
	if err := plane.WriteKubernetesEndpoints(ctx, c.etcd.Put, ips, apiPort); err != nil {
		return fmt.Errorf("default/kubernetes endpoints: %w", err)
	}

	admin, err := c.restConfig("admin")
	if err != nil {
		return err
	}
	adminClient, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	if err := access.ApplyRBAC(ctx, adminClient); err != nil {
		return err
	}
	if c.runsControllerManager() {
		if err := c.startControllerManager(ctx, kcmPort); err != nil {
			return err
		}
	} else {
		fmt.Printf("devcluster: Kubernetes %s runs without kube-controller-manager: approved CSRs are not issued\n", c.release.Version)
	}
	kubeconfigs, err := c.writeKubeconfigs()
	if err != nil {
		return err
	}
	if err := c.seed(ctx, opts); err != nil {
		return err
	}
	if opts.standby {
		if err := c.pauseStandbys(); err != nil {
			return err
		}
	}
	if err := ready.Write(c.readyPath(), ready.Info{
		Server:      c.server,
		Version:     c.release.Version,
		PID:         os.Getpid(),
		Kubeconfigs: kubeconfigs,
		Etcd:        c.etcd.ClientURL,
		OIDC:        c.oidcDetails,
		AuditWebhook: &ready.AuditWebhook{
			Listen:       c.auditWebhookListen,
			CertFile:     c.layout.PKI.AuditServingCert,
			KeyFile:      c.layout.PKI.AuditServingKey,
			ClientCAFile: c.layout.PKI.AuditClientCACert,
		},
		APIServers: c.instances(),
	}); err != nil {
		return err
	}
	c.printReady(time.Since(began), kubeconfigs)
	return nil
}

// prepare takes the directory lock, clears a stale ready.json and creates
// (or reuses) the key material and token file.
func (c *cluster) prepare() error {
	logDir := filepath.Join(c.dir, "logs")
	for _, d := range []string{c.dir, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var err error
	if c.lock, err = lockDir(c.dir); err != nil {
		return err
	}
	if err := ready.Remove(c.readyPath()); err != nil {
		return err
	}
	keys, err := pki.Ensure(filepath.Join(c.dir, "pki"))
	if err != nil {
		return err
	}
	if c.caPEM, err = os.ReadFile(keys.CACert); err != nil {
		return err
	}
	tokenFile := filepath.Join(c.dir, "pki", "tokens.csv")
	if c.users, err = access.EnsureTokenFile(tokenFile); err != nil {
		return err
	}
	c.layout = plane.Layout{Dir: c.dir, BinDir: c.binDir, LogDir: logDir, PKI: keys, TokenFile: tokenFile}
	return nil
}

// writeKubeconfigs writes DIR/kubeconfigs/USER.kubeconfig for every token
// user and returns the paths by user name.
func (c *cluster) writeKubeconfigs() (map[string]string, error) {
	dir := filepath.Join(c.dir, "kubeconfigs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := map[string]string{}
	for _, u := range c.users {
		path := filepath.Join(dir, u.Name+".kubeconfig")
		if err := access.WriteKubeconfig(path, c.server, c.caPEM, u.Name, &clientcmdapi.AuthInfo{Token: u.Token}); err != nil {
			return nil, err
		}
		paths[u.Name] = path
	}
	return paths, nil
}

// startAPIServer starts kube-apiserver instance 1 and waits until /readyz answers 200.
func (c *cluster) startAPIServer(ctx context.Context) error {
	return c.startInstance(ctx, 1)
}

// startAPIServers starts every instance at once (they share nothing but
// etcd, and starting them one after the other would add a start-up each)
// and waits until all are ready.
func (c *cluster) startAPIServers(ctx context.Context) error {
	errs := make(chan error, len(c.apiservers))
	for n := range c.apiservers {
		go func() { errs <- c.startInstance(ctx, n+1) }()
	}
	var first error
	for range c.apiservers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (c *cluster) startInstance(ctx context.Context, n int) error {
	p := c.apiservers[n-1]
	if err := p.Start(); err != nil {
		return err
	}
	admin, err := access.Find(c.users, "admin")
	if err != nil {
		return err
	}
	return plane.WaitAPIServer(ctx, p, plane.InstanceURL(n, c.apiPort), c.caPEM, admin.Token, readyTimeout)
}

// instances is ready.json's list of the kube-apiserver instances.
func (c *cluster) instances() []ready.APIServer {
	list := make([]ready.APIServer, len(c.apiservers))
	for i, p := range c.apiservers {
		list[i] = ready.APIServer{Server: plane.InstanceURL(i+1, c.apiPort), PID: p.PID(), Log: p.LogPath, Standby: i > 0 && c.standby}
	}
	return list
}

// pauseStandbys freezes (SIGSTOP) every instance after the first once the
// cluster is seeded. Why: an instance follows every change in etcd (its
// watch caches, and its CRD handlers for the seeded megabyte schemas); in
// make test's integration layer the second instance cost ~115 CPU-s of a
// 2-core machine (about 7% of a core throughout) for the one test and the
// one benchmark that read it (handlers/apf_instances_integration_test.go,
// internal/apfload's BenchmarkScrapeInstances). Paused, it stays listed in
// the default/kubernetes EndpointSlice (written once, statically) and costs
// nothing; internal/testcluster.APIServers resumes it for the test that needs
// it, which waits for its /readyz (after a long pause it reconnects to etcd
// and re-lists what was compacted meanwhile).
func (c *cluster) pauseStandbys() error {
	for _, p := range c.apiservers[1:] {
		if err := syscall.Kill(p.PID(), syscall.SIGSTOP); err != nil {
			return fmt.Errorf("pause standby %s: %w", p.Name, err)
		}
	}
	c.standby = true
	fmt.Printf("devcluster: %d standby instance(s) paused until a test resumes them (SIGCONT)\n", len(c.apiservers)-1)
	return nil
}

// runsControllerManager tells whether the release builds a controller manager.
func (c *cluster) runsControllerManager() bool {
	return slices.Contains(c.release.Commands, "kube-controller-manager")
}

// startControllerManager runs kube-controller-manager as
// system:kube-controller-manager with a client certificate, like kubeadm does.
func (c *cluster) startControllerManager(ctx context.Context, port int) error {
	cert, err := os.ReadFile(c.layout.PKI.KCMCert)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(c.layout.PKI.KCMKey)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(c.dir, "pki", "controller-manager.kubeconfig")
	auth := &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	if err := access.WriteKubeconfig(kubeconfig, c.server, c.caPEM, pki.ControllerManagerUser, auth); err != nil {
		return err
	}
	c.kcm = plane.ControllerManager(c.layout, kubeconfig, port)
	if err := c.kcm.Start(); err != nil {
		return err
	}
	return plane.WaitControllerManager(ctx, c.kcm, port, readyTimeout)
}

// restConfig is a client for one of the token users. QPS is raised because
// client-go's default of 5 would make loading a hundred fixtures take minutes.
func (c *cluster) restConfig(user string) (*rest.Config, error) {
	u, err := access.Find(c.users, user)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host:            c.server,
		BearerToken:     u.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caPEM},
		UserAgent:       "devcluster",
		QPS:             100,
		Burst:           200,
		WarningHandler:  rest.NewWarningWriter(os.Stdout, rest.WarningWriterOptions{Deduplicate: true}),
	}, nil
}

func (c *cluster) printReady(took time.Duration, kubeconfigs map[string]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "devcluster: ready in %s: Kubernetes %s at %s (pid %d)\n", took.Round(time.Millisecond), c.release.Version, c.server, os.Getpid())
	fmt.Fprintf(&b, "  kubeconfigs:\n")
	for _, u := range access.Users {
		fmt.Fprintf(&b, "    %-9s %s\n", u.Name, kubeconfigs[u.Name])
	}
	fmt.Fprintf(&b, "  try:        KUBECONFIG=%s kubectl get csr\n", kubeconfigs["admin"])
	if c.oidcDetails != "" {
		fmt.Fprintf(&b, "  OpenID:     %s (issuer, clients, users and passwords)\n", c.oidcDetails)
	}
	fmt.Fprintf(&b, "  ready file: %s\n", c.readyPath())
	for i, p := range c.apiservers[1:] {
		fmt.Fprintf(&b, "  instance %d: %s (pid %d; kill -STOP / -CONT it for an outage of that instance)\n", i+2, plane.InstanceURL(i+2, c.apiPort), p.PID())
	}
	fmt.Fprintf(&b, "  logs:       %s (audit log: %s)\n", c.layout.LogDir, c.layout.AuditLog())
	fmt.Fprintf(&b, "  Ctrl-C stops; kill -USR1 %d stops kube-apiserver, kill -USR2 %d starts it again\n", os.Getpid(), os.Getpid())
	fmt.Print(b.String())
}

// shutdown removes ready.json first, so nobody picks up a cluster that is
// going away, then stops the children, then etcd. It is safe after a partial start.
func (c *cluster) shutdown() {
	if c.lock == nil {
		return
	}
	if err := ready.Remove(c.readyPath()); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
	}
	for _, p := range c.apiservers[min(1, len(c.apiservers)):] {
		// A paused instance would not act on SIGTERM before the grace
		// period ends: resume it first (standby, or frozen by a test).
		// PID 0 (never started) would signal devcluster's own group.
		if pid := p.PID(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	for _, p := range slices.Concat([]*procs.Proc{c.kcm}, c.apiservers, []*procs.Proc{c.oidc}) {
		if p == nil {
			continue
		}
		if err := p.Stop(stopGrace); err != nil {
			fmt.Fprintf(os.Stderr, "devcluster: stop %s: %v\n", p.Name, err)
		}
	}
	if c.etcd != nil {
		c.etcd.Close()
	}
	c.lock.Close()
}
