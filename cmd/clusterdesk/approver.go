package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/approver"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// approverConfig is `clusterdesk approver`'s flags (internal/approver).
type approverConfig struct {
	kubeconfig, context, inClusterDir, logLevel string
	dryRun                                      bool
	policySelector                              string
	leaseNamespace, leaseName, identity         string
	metricsAddr                                 string
	auditLog                                    string
	workers                                     int
}

func parseApproverFlags(args []string) (approverConfig, error) {
	var c approverConfig
	fs := flag.NewFlagSet("clusterdesk approver", flag.ContinueOnError)
	fs.StringVar(&c.kubeconfig, "kubeconfig", env("KUBECONFIG_PATH", ""), "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	fs.StringVar(&c.context, "context", env("CONTEXT", ""), "kubeconfig context (default: its current-context)")
	fs.StringVar(&c.inClusterDir, "in-cluster-dir", env("IN_CLUSTER_DIR", kube.ServiceAccountDir), "in a pod without kubeconfig: the directory holding the service account's token and ca.crt")
	fs.StringVar(&c.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error")
	fs.BoolVar(&c.dryRun, "dry-run", env("APPROVER_DRY_RUN", "") == "true", "evaluate the policies, log, count and audit what would be decided, and write nothing")
	fs.StringVar(&c.policySelector, "policy-selector", env("APPROVER_POLICY_SELECTOR", ""), "label selector of the CSRApprovalPolicies to run (default: all); the others stay in shadow mode")
	fs.StringVar(&c.leaseNamespace, "lease-namespace", env("APPROVER_LEASE_NAMESPACE", ""), "namespace of the leader-election Lease (default: the pod's namespace, else clusterdesk)")
	fs.StringVar(&c.leaseName, "lease-name", env("APPROVER_LEASE_NAME", "clusterdesk-approver"), "name of the leader-election Lease")
	fs.StringVar(&c.identity, "identity", env("APPROVER_IDENTITY", ""), "this replica's name in the Lease (default: hostname_pid)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", env("APPROVER_METRICS_ADDR", "127.0.0.1:9090"), "address to serve /metrics and /healthz on; empty serves none")
	fs.StringVar(&c.auditLog, "audit-log", env("AUDIT_LOG", "-"), "audit trail of every decision as JSON lines: a file (appended), - for stdout, empty for none")
	workers := fs.String("workers", env("APPROVER_WORKERS", "2"), "requests evaluated and decided at once")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	n, err := strconv.Atoi(*workers)
	if err != nil || n <= 0 {
		return c, fmt.Errorf("--workers must be a positive number, not %q", *workers)
	}
	c.workers = n
	if c.leaseNamespace == "" {
		c.leaseNamespace = "clusterdesk"
		if ns, err := os.ReadFile(c.inClusterDir + "/namespace"); err == nil && len(ns) > 0 {
			c.leaseNamespace = strings.TrimSpace(string(ns))
		}
	}
	return c, nil
}

// runApprover is `clusterdesk approver`: the CSR approval policies deciding
// alone, one replica at a time.
func runApprover(args []string) error {
	cfg, err := parseApproverFlags(args)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	restCfg, source, err := kube.ResolveConfig(cfg.kubeconfig, cfg.context, cfg.inClusterDir)
	if err != nil {
		return err
	}
	log.Info("using " + source)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	user := "clusterdesk-approver"
	whoCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if u, err := kube.WhoAmI(whoCtx, restCfg); err == nil {
		user = u
	} else {
		log.Warn("approver: cannot tell its own identity; audit records name it "+user, "err", err)
	}
	cancel()
	var lines io.Writer
	switch cfg.auditLog {
	case "":
	case "-":
		lines = os.Stdout
	default:
		f, err := os.OpenFile(cfg.auditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("--audit-log: %w", err)
		}
		defer f.Close()
		lines = f
	}
	a, err := approver.New(approver.Config{
		Rest: restCfg, PolicySelector: cfg.policySelector, DryRun: cfg.dryRun, Workers: cfg.workers,
		Audit: audit.New(audit.Options{Log: log, Lines: lines}), User: user, Log: log,
	})
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	if cfg.metricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr %s: %w", cfg.metricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", a.Metrics.Handler())
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
		go func() { errc <- srv.Serve(ln) }()
		defer srv.Close()
		log.Info("approver: metrics on http://" + ln.Addr().String() + "/metrics")
	}
	go func() {
		errc <- a.RunLeader(ctx, approver.Leader{Namespace: cfg.leaseNamespace, Name: cfg.leaseName, Identity: cfg.identity})
	}()
	err = <-errc
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
