// Command clusterdesk serves the console (and, as `clusterdesk approver`, runs
// the CSR approval policies alone: approver.go): it reads flags and environment,
// builds every dependency, starts the informers and then the HTTP server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/handlers"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/metrics"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/static"
)

type config struct {
	kubeconfig string
	context    string
	listen     string
	readOnly   bool
	// approverLease is namespace/name of the approver's Lease.
	approverLease string
	devUI         bool
	logLevel      string
	// metricsListen serves /metrics on a separate address; empty serves none.
	metricsListen string
	// pprofListen serves Go's profiles on a loopback address; empty serves none.
	pprofListen string
	// inClusterDir holds the service-account token and CA bundle in a pod.
	inClusterDir string
	// cleanupProgressAfter is how long a confirmed cleanup runs before its
	// page is sent with progress lines (handlers.DefaultCleanupProgressAfter).
	cleanupProgressAfter time.Duration
	// maxStreams bounds the live-update connections this replica serves
	// (live.Options.MaxStreams).
	maxStreams int
	// signIn is the sign-in mode, the proxy's trust and TLS (signin.go).
	signIn signInConfig
	// audit is where the audit trail goes (audit.go).
	audit auditConfig
	// ledger is the durable ledger and its audit webhook (ledger.go).
	ledger ledgerConfig
	// trustedProxies: whose X-Forwarded-For names the client (trusted_proxies.go).
	trustedProxies []netip.Prefix
}

// parseFlags reads flags; each has an environment default CLUSTERDESK_<NAME>.
func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("clusterdesk", flag.ContinueOnError)
	fs.StringVar(&c.kubeconfig, "kubeconfig", env("KUBECONFIG_PATH", ""), "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&c.context, "context", env("CONTEXT", ""), "kubeconfig context (default: its current-context)")
	fs.StringVar(&c.listen, "listen", env("LISTEN", "127.0.0.1:8080"), "address to serve on (loopback by default)")
	fs.BoolVar(&c.readOnly, "read-only", env("READ_ONLY", "") == "true", "refuse every change on the server and hide mutating controls")
	fs.StringVar(&c.approverLease, "approver-lease", env("APPROVER_LEASE", "clusterdesk/clusterdesk-approver"), "namespace/name of `clusterdesk approver`'s Lease, read to say why pending CSRs are pending (no approver installed, none leads, dry run, refused signers)")
	fs.BoolVar(&c.devUI, "dev-ui", env("DEV_UI", "") == "true", "serve the component gallery at /ui (for designers)")
	fs.StringVar(&c.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error")
	fs.StringVar(&c.metricsListen, "metrics-listen", env("METRICS_LISTEN", ""), "address to serve Prometheus /metrics on, apart from the console (default: none)")
	fs.StringVar(&c.pprofListen, "pprof-listen", env("PPROF_LISTEN", ""), "loopback address to serve Go's profiles (/debug/pprof/) on, apart from the console, for benchmarks and debugging (default: none)")
	fs.StringVar(&c.inClusterDir, "in-cluster-dir", env("IN_CLUSTER_DIR", kube.ServiceAccountDir), "in a pod without kubeconfig: the directory holding the service account's token and ca.crt")
	progressAfter := fs.String("cleanup-progress-after", env("CLEANUP_PROGRESS_AFTER", handlers.DefaultCleanupProgressAfter.String()), "how long a confirmed cleanup runs before its page is sent with a progress line each second, which also keeps proxies with an idle timeout from giving up")
	maxStreams := fs.String("max-streams", env("MAX_STREAMS", strconv.Itoa(live.DefaultMaxStreams)), "live-update connections (one per open tab) this replica serves at once, all users together; one more is told to try later. Each idle one costs about 15 KiB of memory over HTTP/1.1, 50 KiB over HTTP/2: the default suits the 512 MiB limit of deploy/. Each user has at most "+strconv.Itoa(live.DefaultMaxPerUser)+" on a replica")
	c.signIn.register(fs)
	c.audit.register(fs)
	retention := c.ledger.register(fs)
	trustedProxies := registerTrustedProxies(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	n, err := strconv.Atoi(*maxStreams)
	if err != nil || n <= 0 {
		return c, fmt.Errorf("--max-streams (CLUSTERDESK_MAX_STREAMS) must be a positive number of connections, not %q", *maxStreams)
	}
	c.maxStreams = n
	tp, err := parseTrustedProxies(*trustedProxies)
	if err != nil {
		return c, err
	}
	c.trustedProxies = tp
	d, err := time.ParseDuration(*progressAfter)
	if err != nil || d <= 0 {
		return c, fmt.Errorf("--cleanup-progress-after (CLUSTERDESK_CLEANUP_PROGRESS_AFTER) must be a positive duration such as 2s, not %q", *progressAfter)
	}
	c.cleanupProgressAfter = d
	if err := c.ledger.finish(*retention); err != nil {
		return c, err
	}
	return c, nil
}

func env(name, def string) string {
	if v, ok := os.LookupEnv("CLUSTERDESK_" + name); ok {
		return v
	}
	return def
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "clusterdesk:", err)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "approver" {
		return runApprover(args[1:])
	}
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	if err := cfg.signIn.precheck(); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if setDefaultGOGC(os.Getenv) { // gc.go
		log.Info("no GOGC set: the collector's target is the console's default", "gogc", defaultGOGC)
	}
	if err := static.Check(); err != nil {
		return err
	}

	restCfg, source, err := kube.ResolveConfig(cfg.kubeconfig, cfg.context, cfg.inClusterDir)
	if err != nil {
		return err
	}
	log.Info("using " + source)

	cache, err := kube.NewCache(restCfg, log)
	if err != nil {
		return err
	}
	// A decided request's PEM stays out of the cache: its summary is what the
	// queue reads (internal/csr summary.go); its page reads the PEM live.
	cache.SummarizeDecidedRequests(csr.Summarize)
	openAPI, err := kube.NewOpenAPI(restCfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Live updates: the cache's change notifications feed one hub, which renders
	// each batch once and publishes it to the browser tabs subscribed to it.
	// One shared reader of the API server's flow-control metrics, as the
	// console; it reads only while a page asks (internal/apfload). Live rows
	// of lists that show the load carry its latest sample.
	metricsFetch, err := kube.APIServerMetrics(restCfg)
	if err != nil {
		return err
	}
	dumpFetch, err := kube.APIServerPriorityLevelDump(restCfg)
	if err != nil {
		return err
	}
	// Every API server instance listed in the API server's own
	// default/kubernetes EndpointSlice is read at its own address (issue 30:
	// through the Service, each read lands on one instance at random); the
	// sampler falls back to the kubeconfig's server when none answers there,
	// and always with a kubeconfig that skips TLS verification (issue 43).
	instances, err := kube.APIServerInstances(restCfg)
	if err != nil {
		return err
	}
	if restCfg.Insecure {
		log.Warn("apf load: the API server instances are not read at their own addresses", "why", kube.ErrInstancesInsecure.Error())
	}
	apfLoad := apfload.New(metricsFetch, apfload.Options{Dump: dumpFetch, Instances: apfload.DiscoverFrom(instances)})
	go apfLoad.Run(ctx)
	streams := live.NewStreams(live.Options{Log: log, MaxStreams: cfg.maxStreams})
	updates := handlers.NewLiveUpdates(cache, streams).WithLoad(apfLoad).ReadOnly(cfg.readOnly)
	hub := live.NewHub(updates.Render, streams, live.HubOptions{Log: log})
	cache.OnChange(hub.Notify)
	reg := metrics.New()
	reg.RegisterSSE(streams)
	reg.RegisterCache(cache)
	// The audit trail, and the ledger's watch feed, observe the cache: before Run.
	trail, err := buildAudit(cfg.audit, restCfg, log)
	if err != nil {
		return err
	}
	reg.RegisterAudit(trail.recorder)
	trail.start(ctx)
	defer trail.close()
	// The ledger observes the recorder: before the server records anything.
	ledgerRun, err := startLedger(ctx, cfg.ledger, trail.recorder, cache, reg, log)
	if err != nil {
		return err
	}
	defer ledgerRun.close()
	go hub.Run(ctx)
	go cache.Run(ctx)
	// The CSR approval policies: the cache's CSRApprovalPolicies kind, its
	// one watch (kube.PolicyCache), compiled once per change for the queue
	// and the policy pages.
	policies := csrpolicy.NewSet(cache.Policies())

	// Who people are and which clients act for them (signin.go): every
	// per-user dependency picks its client from the request's identity.
	user := identity(ctx, restCfg, log)
	cfg.signIn.inClusterDir = cfg.inClusterDir
	si, err := buildSignIn(cfg.signIn, restCfg, reg, user)
	if err != nil {
		return err
	}
	if err := si.startRevocations(ctx, log); err != nil {
		return err
	}
	ln, servedURL, err := si.listen(cfg.listen)
	if err != nil {
		return err
	}
	// What people open: --public-url, else the listener (public_url.go).
	baseURL := si.public.base(servedURL)
	if err := si.configureOIDC(cfg.signIn.oidc, baseURL); err != nil {
		return err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && si.tls == nil && si.mode == auth.ModeProxy {
		log.Info("proxy mode over plain HTTP beyond loopback: the proxy's shared secret is honoured only from loopback peers (a proxy in the same pod or on the same host)", "addr", ln.Addr())
	} else if ok && !tcp.IP.IsLoopback() && si.tls == nil {
		log.Warn("serving on a non-loopback address over plain HTTP: anyone who can reach it and obtains a login URL acts with this kubeconfig's rights", "addr", ln.Addr())
	}
	if baseURL != servedURL {
		// Where this process itself answers, for whoever runs it behind the
		// proxy (a balancer's health check, internal/fleet): the open line
		// below gives the public URL.
		fmt.Printf("clusterdesk: listening on %s\n", servedURL)
	}
	var logins *auth.LoginTokens
	if si.mode == auth.ModeLocal {
		logins = auth.NewLoginTokens(func(token string) {
			// The login URL goes to stdout for the person who started the console,
			// never into the log stream.
			fmt.Printf("clusterdesk: open %s/login?token=%s\n", baseURL, token)
		})
	} else {
		fmt.Printf("clusterdesk: open %s/login\n", baseURL)
	}

	// Timeouts and header limits (handlers/server.go): no WriteTimeout, so
	// event streams stay open; slow headers and bodies are cut off.
	srv := handlers.NewServer(handlers.New(handlers.Deps{
		Log: log, Cluster: cache, Access: kube.UserAccess{Users: si.users}, Writer: kube.UserWriter{Users: si.users},
		Issuer: kube.UserWriter{Users: si.users}, Editor: kube.UserEditor{Users: si.users}, Docs: edit.NewDocs(openAPI, present.DocTree),
		Sessions: si.sessions, Logins: logins, Gate: si.gate, TokenReview: si.review, Users: si.users,
		User: user, ReadOnly: cfg.readOnly, DevUI: cfg.devUI, Lookup: kube.UserLookup{Users: si.users},
		Live: updates, Metrics: reg, Audit: trail.recorder, Ledger: ledgerRun.Store(), LedgerReaders: cfg.ledger.readers,
		APFLoad: apfLoad, URLAccess: kube.UserAccess{Users: si.users}, CleanupProgressAfter: cfg.cleanupProgressAfter,
		PublicOrigin: si.public.origin, Policies: policies,
		ApproverLease: cfg.approverLease, ReadApproverLease: cache.LeaseReader(approverLeaseName(cfg.approverLease)),
		SignInLimit: handlers.SignInLimit{TrustedProxies: cfg.trustedProxies}, // the default budget, per client behind the proxies
	}), handlers.DefaultServerTimeouts)
	// Shutdown waits for handlers, and an event stream's handler returns only
	// when its connection ends: end them first.
	srv.RegisterOnShutdown(streams.Close)
	errc := make(chan error, 3)
	go func() { errc <- srv.Serve(ln) }()
	if cfg.metricsListen != "" {
		msrv, addr, err := serveMetrics(cfg.metricsListen, reg, errc)
		if err != nil {
			return err
		}
		defer msrv.Close()
		log.Info("serving metrics", "url", "http://"+addr+"/metrics")
	}
	if cfg.pprofListen != "" {
		psrv, addr, err := servePprof(cfg.pprofListen, errc)
		if err != nil {
			return err
		}
		defer psrv.Close()
		log.Info("serving Go profiles", "url", "http://"+addr+"/debug/pprof/")
	}
	log.Info("serving", "url", servedURL, "public", baseURL, "readOnly", cfg.readOnly, "auth", string(si.mode))

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// identity names who the console acts as. An unreachable API server must not
// stop the console from starting, so after a short wait it falls back to what
// the kubeconfig says.
func identity(ctx context.Context, restCfg *rest.Config, log *slog.Logger) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	user, err := kube.WhoAmI(ctx, restCfg)
	if err == nil {
		return user
	}
	log.Warn("could not ask the API server who this kubeconfig is", "err", err)
	if restCfg.Username != "" {
		return restCfg.Username
	}
	return "kubeconfig identity"
}

// approverLeaseName splits --approver-lease's namespace/name (a name alone:
// in the namespace clusterdesk).
func approverLeaseName(s string) (namespace, name string) {
	if ns, n, ok := strings.Cut(s, "/"); ok {
		return ns, n
	}
	return "clusterdesk", s
}
