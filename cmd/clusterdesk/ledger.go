package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/metrics"
)

// ledgerConfig is the durable ledger (issue 29): where it is kept, how long,
// and the audit webhook that feeds it the API server's events.
type ledgerConfig struct {
	dsn       string // sqlite:<path>, postgres://…, or off
	dataDir   string
	retention time.Duration
	// maxEntries bounds the ledger by size (internal/ledger/trim.go).
	maxEntries     int64
	maxEntriesText string // the flag, parsed by finish
	// The recorded writes (issue 45, internal/ledger/writes.go): how long
	// and how many.
	writeRetention     time.Duration
	writeRetentionText string
	maxWrites          int64
	maxWritesText      string
	// The recorded traffic (issue 46, internal/ledger/traffic.go).
	traffic trafficConfig
	// readers is who reads the ledger's data (handlers/page/ledger_gate.go);
	// readersText is the flag, parsed by finish.
	readers     handlers.LedgerReaders
	readersText string
	webhook     webhookConfig
}

// webhookConfig is the audit webhook's listener.
type webhookConfig struct {
	listen, certFile, keyFile, clientCAFile, tokenFile string
}

// DefaultLedgerRetention keeps a little over a year: an auditor's question
// ("who approved this three weeks ago?") and a yearly audit both fit.
const DefaultLedgerRetention = 400 * 24 * time.Hour

// DefaultLedgerMaxEntries bounds the ledger by size: ten million entries is
// years of an ordinary cluster's changes (a few thousand a day) and some
// tens of GB at the few KB an entry takes with its object; a storm of
// writes meets it instead of the disk's end.
const DefaultLedgerMaxEntries = 10_000_000

// DefaultMaxWrites bounds the recorded writes by count: a million writes is
// a week of a busy cluster's writes outside the housekeeping the audit
// policy leaves at Metadata, and about 1-2 GB at the compressed size of
// ordinary objects (BenchmarkAppendWrites measures it).
const DefaultMaxWrites = 1_000_000

func (l *ledgerConfig) register(fs *flag.FlagSet) (retention *string) {
	fs.StringVar(&l.dataDir, "data-dir", env("DATA_DIR", defaultDataDir()), "directory of the embedded ledger's SQLite file (the --ledger default)")
	fs.StringVar(&l.dsn, "ledger", env("LEDGER", ""), "the durable ledger of every change: sqlite:<path> (embedded; default <data-dir>/ledger.db), postgres://… (replicas share one; put the URL in a Secret), or off")
	retention = fs.String("ledger-retention", env("LEDGER_RETENTION", DefaultLedgerRetention.String()), "how long the ledger keeps entries (pruned daily); 0 keeps them forever")
	fs.StringVar(&l.maxEntriesText, "ledger-max-entries", env("LEDGER_MAX_ENTRIES", strconv.Itoa(DefaultLedgerMaxEntries)), "how many entries the ledger keeps at most: past it the oldest are pruned as entries come in; 0 for no bound")
	fs.StringVar(&l.writeRetentionText, "recorded-writes-retention", env("RECORDED_WRITES_RETENTION", ledger.DefaultWriteRetention.String()), "how long the writes the audit webhook reports (replayed against admission changes) are kept; 0 keeps them forever")
	fs.StringVar(&l.maxWritesText, "recorded-writes-max", env("RECORDED_WRITES_MAX", strconv.Itoa(DefaultMaxWrites)), "how many recorded writes are kept at most: past it the oldest are pruned as writes come in; 0 for no bound")
	fs.StringVar(&l.readersText, "ledger-readers", env("LEDGER_READERS", string(handlers.LedgerReadersListers)), "who reads the ledger (its pages, object histories, exports, a CSR policy's decisions), the recorded writes (the replay) and the recorded traffic (the APF what-if): listers (anyone for the kinds they may list) or granted (besides, only users the API server allows verb get on resource ledger in API group clusterdesk.io)")
	l.traffic.register(fs)
	fs.StringVar(&l.webhook.listen, "audit-webhook-listen", env("AUDIT_WEBHOOK_LISTEN", ""), "address of the audit webhook that receives the API server's audit events into the ledger (TLS; empty: none)")
	fs.StringVar(&l.webhook.certFile, "audit-webhook-tls-cert", env("AUDIT_WEBHOOK_TLS_CERT", ""), "the audit webhook's serving certificate (PEM)")
	fs.StringVar(&l.webhook.keyFile, "audit-webhook-tls-key", env("AUDIT_WEBHOOK_TLS_KEY", ""), "the audit webhook's serving key (PEM)")
	fs.StringVar(&l.webhook.clientCAFile, "audit-webhook-client-ca", env("AUDIT_WEBHOOK_CLIENT_CA", ""), "CA of the API server's client certificate (mutual TLS); a CA that signs nothing else, never the cluster CA")
	fs.StringVar(&l.webhook.tokenFile, "audit-webhook-token-file", env("AUDIT_WEBHOOK_TOKEN_FILE", ""), "file of the bearer tokens the API server may send, one a line (with or instead of a client certificate); read again when it changes, so a token rotates without a restart")
	return retention
}

// finish checks the flags once parsed.
func (l *ledgerConfig) finish(retention string) error {
	d, err := time.ParseDuration(retention)
	if err != nil || d < 0 {
		return fmt.Errorf("--ledger-retention (CLUSTERDESK_LEDGER_RETENTION) must be a duration such as 9600h, or 0 for ever, not %q", retention)
	}
	l.retention = d
	if l.maxEntries, err = strconv.ParseInt(l.maxEntriesText, 10, 64); err != nil || l.maxEntries < 0 {
		return fmt.Errorf("--ledger-max-entries (CLUSTERDESK_LEDGER_MAX_ENTRIES) must be a count of entries, or 0 for no bound, not %q", l.maxEntriesText)
	}
	if l.writeRetention, err = time.ParseDuration(l.writeRetentionText); err != nil || l.writeRetention < 0 {
		return fmt.Errorf("--recorded-writes-retention (CLUSTERDESK_RECORDED_WRITES_RETENTION) must be a duration such as 168h, or 0 for ever, not %q", l.writeRetentionText)
	}
	if l.maxWrites, err = strconv.ParseInt(l.maxWritesText, 10, 64); err != nil || l.maxWrites < 0 {
		return fmt.Errorf("--recorded-writes-max (CLUSTERDESK_RECORDED_WRITES_MAX) must be a count of writes, or 0 for no bound, not %q", l.maxWritesText)
	}
	if l.readers, err = handlers.ParseLedgerReaders(l.readersText); err != nil {
		return fmt.Errorf("--ledger-readers (CLUSTERDESK_LEDGER_READERS): %w", err)
	}
	if err := l.traffic.finish(); err != nil {
		return err
	}
	if l.dsn == "" {
		l.dsn = "sqlite:" + filepath.Join(l.dataDir, "ledger.db")
	}
	w := l.webhook
	if w.listen != "" {
		if l.dsn == "off" {
			return errors.New("--audit-webhook-listen needs a ledger (--ledger is off)")
		}
		if w.certFile == "" || w.keyFile == "" {
			return errors.New("--audit-webhook-listen needs --audit-webhook-tls-cert and --audit-webhook-tls-key: the API server sends request and response bodies")
		}
		if w.clientCAFile == "" && w.tokenFile == "" {
			return errors.New("--audit-webhook-listen needs --audit-webhook-client-ca or --audit-webhook-token-file: anybody could write the ledger")
		}
	}
	return nil
}

// defaultDataDir is $XDG_STATE_HOME/clusterdesk, else ~/.local/state/clusterdesk:
// the ledger is state, kept between runs.
func defaultDataDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "clusterdesk")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "clusterdesk")
	}
	return "clusterdesk-data"
}

// ledgerRun is the open ledger and what feeds it.
type ledgerRun struct {
	store   ledger.Store
	console *ingest.ConsoleFeed
	watch   *ingest.WatchFeed
	webhook *ingest.Server
	// feeding counts the console feed and the webhook, which end with stop.
	feeding sync.WaitGroup
	stop    context.CancelFunc
}

// startLedger opens the ledger, feeds it the console's records (through
// recorder), the versions the cache's watch observes and, when configured,
// the API server's audit events, and prunes it daily. An off ledger returns
// a nil run. Call before cache.Run.
func startLedger(ctx context.Context, l ledgerConfig, recorder *audit.Recorder, cache *kube.Cache, reg *metrics.Registry, log *slog.Logger) (*ledgerRun, error) {
	if l.dsn == "off" {
		return nil, nil
	}
	if path, ok := strings.CutPrefix(l.dsn, "sqlite:"); ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("--ledger: %w", err)
		}
	}
	opts := ledger.Options{Retention: l.retention, MaxEntries: l.maxEntries, WriteRetention: l.writeRetention, MaxWrites: l.maxWrites,
		TrafficRetention: l.traffic.retention, MaxTrafficBuckets: l.traffic.maxBuckets}
	store, err := ledger.Open(ctx, l.dsn, opts)
	switch {
	case err != nil && isShared(l.dsn):
		// Replicas restarting while the shared database is down must still
		// serve: the ledger opens when it answers (ledger_late.go).
		log.Error("ledger: the database does not answer; serving without it until it does", "err", err)
		store = openLate(ctx, l.dsn, opts, err, log)
	case err != nil:
		return nil, fmt.Errorf("--ledger: %w", err)
	}
	run := &ledgerRun{store: store, console: ingest.NewConsoleFeed(store, 0, log), watch: ingest.NewWatchFeed(store, 0, log)}
	ctx, run.stop = context.WithCancel(ctx)
	recorder.OnRecord(run.console.Record)
	cache.OnObject(run.watch.Enqueue)
	run.feeding.Go(func() { run.console.Run(ctx) })
	run.feeding.Go(func() { run.watch.Run(ctx) })
	go prune(ctx, store, l.retention, log)
	// A ledger opened late (a shared one down at start) keeps no recorded
	// writes until the console restarts: the late store is the ledger's
	// Store only.
	writes, _ := store.(ledger.WriteStore)
	if writes != nil {
		go pruneWrites(ctx, writes, l.writeRetention, log)
	}
	trafficStore, _ := store.(ledger.TrafficStore)
	if trafficStore != nil {
		go keepTraffic(ctx, trafficStore, l.traffic.retention, log)
		go packTraffic(ctx, trafficStore, log)
	}

	var webhook metrics.LedgerWebhookSource
	if l.webhook.listen != "" {
		rc, err := newReceiver(l.webhook, ingest.Options{Store: store, Writes: writes, Traffic: trafficStore, Log: log})
		if err != nil {
			run.stop()
			store.Close()
			return nil, err
		}
		if run.webhook, err = ingest.Listen(l.webhook.listen, l.webhook.certFile, l.webhook.keyFile, rc, log); err != nil {
			run.stop()
			store.Close()
			return nil, fmt.Errorf("--audit-webhook-listen: %w", err)
		}
		webhook = rc
		run.feeding.Go(func() {
			if err := run.webhook.Serve(ctx); err != nil {
				log.Error("audit webhook stopped", "err", err)
			}
		})
		log.Info("serving the audit webhook", "addr", run.webhook.Addr())
	}
	reg.RegisterLedger(webhook, ingest.RefusedReasons, run.console)
	reg.RegisterLedgerWatch(run.watch)
	reg.RegisterLedgerPruned(store)
	log.Info("ledger open", "dsn", ledger.RedactDSN(l.dsn), "retention", l.retention, "max_entries", l.maxEntries)
	return run, nil
}

func newReceiver(w webhookConfig, o ingest.Options) (*ingest.Receiver, error) {
	log := o.Log
	var senders ingest.Senders
	if w.clientCAFile != "" {
		pem, err := os.ReadFile(w.clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--audit-webhook-client-ca: %w", err)
		}
		senders.ClientCAs = x509.NewCertPool()
		if !senders.ClientCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--audit-webhook-client-ca: no certificate in %s", w.clientCAFile)
		}
	}
	if w.tokenFile != "" {
		tf, err := ingest.OpenTokenFile(w.tokenFile, log)
		if err != nil {
			return nil, fmt.Errorf("--audit-webhook-token-file: %w", err)
		}
		senders.TokenFile = tf
	}
	o.Senders = senders
	return ingest.NewReceiver(o)
}

// prune deletes what is older than the retention at start and then daily.
func prune(ctx context.Context, store ledger.Store, retention time.Duration, log *slog.Logger) {
	if retention == 0 {
		return
	}
	t := time.NewTicker(24 * time.Hour)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		n, err := store.Prune(pctx, time.Now().Add(-retention))
		cancel()
		if err != nil && ctx.Err() == nil {
			log.Warn("ledger: prune failed; tried again tomorrow", "err", err)
		} else if n > 0 {
			log.Info("ledger: pruned entries past the retention", "entries", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruneWrites deletes the recorded writes older than their retention at
// start and then hourly: a week's window moves by the hour.
func pruneWrites(ctx context.Context, writes ledger.WriteStore, retention time.Duration, log *slog.Logger) {
	if retention == 0 {
		return
	}
	hourly(ctx, func(ctx context.Context) {
		n, err := writes.PruneWrites(ctx, time.Now().Add(-retention))
		if err != nil && ctx.Err() == nil {
			log.Warn("ledger: pruning recorded writes failed; tried again in an hour", "err", err)
		} else if n > 0 {
			log.Info("ledger: pruned recorded writes past their retention", "writes", n, "retention", retention)
		}
	})
}

// hourly runs job at start and then every hour until ctx ends, each run
// bounded by ten minutes.
func hourly(ctx context.Context, job func(context.Context)) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		jctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		job(jctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// close stops the feeds, waits for the webhook's batches in flight and the
// console's queued records (a few seconds at most), then closes the store.
func (r *ledgerRun) close() {
	if r == nil {
		return
	}
	r.stop()
	r.feeding.Wait()
	r.store.Close()
}

// Store is the ledger for handlers.Deps: nil (none) when the ledger is off.
func (r *ledgerRun) Store() ledger.Store {
	if r == nil {
		return nil
	}
	return r.store
}

// isShared tells a PostgreSQL ledger (a server that can be down for a
// while) from the embedded file (which fails for good: a wrong path).
func isShared(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
