package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// auditConfig is where the audit trail goes.
type auditConfig struct {
	log            string // JSON lines: a file, "-" for stdout, "" for none
	events         bool   // also a Kubernetes Event per write
	eventNamespace string
}

func (a *auditConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&a.log, "audit-log", env("AUDIT_LOG", "-"), "audit trail of every write through clusterdesk as JSON lines: a file (appended), - for stdout, empty for none")
	fs.BoolVar(&a.events, "audit-events", env("AUDIT_EVENTS", "true") == "true", "also record every write as a Kubernetes Event on the object, created with the console's identity")
	fs.StringVar(&a.eventNamespace, "audit-event-namespace", env("AUDIT_EVENT_NAMESPACE", "default"), "namespace of the audit Events; the API server takes Events about cluster-scoped objects only in default or kube-system")
}

// auditTrail is the audit recorder and its sinks.
type auditTrail struct {
	recorder  *audit.Recorder
	closeFile func() error
	stop      context.CancelFunc
	done      chan struct{}
}

// start runs the recorder's Event writer until ctx ends or close is called.
func (t *auditTrail) start(ctx context.Context) {
	ctx, t.stop = context.WithCancel(ctx)
	t.done = make(chan struct{})
	go func() {
		defer close(t.done)
		t.recorder.Run(ctx)
	}()
}

// close stops the trail after writing the Events still queued (for a few
// seconds at most), then closes the audit log file.
func (t *auditTrail) close() error {
	if t.stop != nil {
		t.stop()
		<-t.done
	}
	return t.closeFile()
}

// buildAudit opens the audit sinks. The versions the cache observes go to the
// ledger (startLedger), with the recorder's writes.
func buildAudit(cfg auditConfig, restCfg *rest.Config, log *slog.Logger) (*auditTrail, error) {
	t := &auditTrail{closeFile: func() error { return nil }}
	var lines io.Writer
	switch cfg.log {
	case "":
	case "-":
		lines = os.Stdout
	default:
		f, err := os.OpenFile(cfg.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--audit-log: %w", err)
		}
		lines, t.closeFile = f, f.Close
	}
	opts := audit.Options{Log: log, Lines: lines, EventNamespace: cfg.eventNamespace}
	if cfg.events {
		if ns := audit.EventNamespace(cfg.eventNamespace, ""); ns != cfg.eventNamespace {
			log.Warn("audit Events about cluster-scoped objects go to "+ns+": the API server refuses them elsewhere", "audit-event-namespace", cfg.eventNamespace)
		}
		ew, err := kube.NewEventWriter(restCfg)
		if err != nil {
			return nil, err
		}
		opts.Events = audit.KubeEvents(ew)
	}
	t.recorder = audit.New(opts)
	return t, nil
}
