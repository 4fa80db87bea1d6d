package fleet

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// backend is the HAProxy backend holding the consoles; webhookBackend holds
// their audit webhooks (Options.AuditWebhook).
const (
	backend        = "consoles"
	webhookBackend = "webhooks"
)

// haproxyConfig is the balancer: round robin, no stickiness, health checks on
// /readyz. Stream timeouts are long (a tab's event stream stays open; the
// console sends a comment every 15 s). Only a connection that failed before
// the request was sent is retried, on another replica (redispatch): a request
// the dead replica may have acted on is never sent twice.
var haproxyConfig = template.Must(template.New("haproxy").Parse(`global
	stats socket {{.Socket}} mode 600 level admin
	# Two descriptors a connection: 8,000 stays under the usual 20,000 limit.
	maxconn 8000

defaults
	mode http
	timeout connect 2s
	timeout client 1h
	timeout server {{.ServerTimeout}}
	timeout tunnel 1h
	timeout http-request 10s
	timeout check 2s
	retries 2
	retry-on conn-failure
	option redispatch 1

frontend web
{{- if .TLS}}
	# TLS ends here, as at an Ingress: the consoles get plain HTTP, the
	# client's address appended to X-Forwarded-For and the scheme it used.
	bind 127.0.0.1:{{.Port}} ssl crt {{.TLS}}
	option forwardfor
	http-request set-header X-Forwarded-Proto https
{{- else}}
	bind 127.0.0.1:{{.Port}}
{{- end}}
	maxconn 8000
{{- if .Identity}}
	# The authenticating proxy: what a client claims is dropped, then the
	# proxy names the user and proves itself with the shared secret.
	http-request del-header X-Forwarded-User
	http-request del-header X-Forwarded-Groups
	http-request del-header X-Clusterdesk-Proxy-Secret
	http-request set-header X-Forwarded-User %[req.hdr({{.UserHeader}})] if { req.hdr({{.UserHeader}}) -m found }
	http-request set-header X-Forwarded-User {{.Identity.User}} unless { req.hdr(X-Forwarded-User) -m found }
{{- if .Groups}}
	http-request set-header X-Forwarded-Groups "{{.Groups}}"
{{- end}}
	http-request set-header X-Clusterdesk-Proxy-Secret {{.Secret}}
{{- end}}
	default_backend ` + backend + `

backend ` + backend + `
	balance roundrobin
	option httpchk GET /readyz
	http-check expect status 200
	default-server check inter 400ms fall 2 rise 2 maxconn 10000
{{- range .Servers}}
	use-server {{.Name}} if { req.hdr({{$.PinHeader}}) -m str {{.Name}} }
{{- end}}
{{- range .Servers}}
	server {{.Name}} 127.0.0.1:{{.Port}}
{{- end}}
{{- if .Webhook}}

# The API server's audit webhook, as a Service passes it to pods: TCP, so the
# TLS session (and the API server's client certificate) goes end to end to a
# replica, which alone decides whom to trust. A connection refused by a dead
# replica is dispatched to another one (retries, redispatch); a batch cut off
# mid-request is the API server's to send again (it retries on errors and 5xx),
# and the ledger stores an audit ID once.
frontend audit_webhook
	mode tcp
	bind {{.Webhook.Listen}}
	default_backend ` + webhookBackend + `

backend ` + webhookBackend + `
	mode tcp
	balance roundrobin
	default-server check inter 400ms fall 2 rise 2
{{- range .Servers}}
	server {{.Name}} 127.0.0.1:{{.WebhookPort}}
{{- end}}
{{- end}}
`))

type haproxyServer struct {
	Name        string
	Port        int
	WebhookPort int // with Options.AuditWebhook
}

// startHAProxy writes the configuration, starts HAProxy in the foreground and
// waits until it reports every console up.
func (f *Fleet) startHAProxy(ctx context.Context, secret string) error {
	port := f.port
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return err
		}
	}
	f.stats = filepath.Join(f.opts.Dir, "haproxy.sock")
	data := map[string]any{
		"Socket": f.stats, "Port": port, "Identity": f.opts.Identity, "Secret": secret,
		"UserHeader": UserHeader, "PinHeader": PinHeader, "ServerTimeout": "1h",
	}
	if f.tls != nil {
		data["TLS"] = f.tls.pemPath
	}
	if f.opts.ServerTimeout > 0 {
		data["ServerTimeout"] = fmt.Sprintf("%dms", f.opts.ServerTimeout.Milliseconds())
	}
	if f.opts.Identity != nil {
		data["Groups"] = strings.Join(f.opts.Identity.Groups, ",")
	}
	var servers []haproxyServer
	for _, r := range f.Replicas {
		servers = append(servers, haproxyServer{Name: r.Name, Port: r.port, WebhookPort: r.wport})
	}
	data["Servers"] = servers
	if f.opts.AuditWebhook != nil {
		data["Webhook"] = f.opts.AuditWebhook
	}
	var cfg bytes.Buffer
	if err := haproxyConfig.Execute(&cfg, data); err != nil {
		return err
	}
	cfgPath := filepath.Join(f.opts.Dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, cfg.Bytes(), 0o600); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(f.opts.Dir, "haproxy.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(f.opts.HAProxy, "-db", "-f", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("fleet: start %s: %w", f.opts.HAProxy, err)
	}
	f.haproxy = cmd
	f.hpDone = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(f.hpDone)
	}()
	f.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	if f.tls != nil {
		f.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		states, err := f.ServerStates()
		webhooks, werr := f.WebhookStates()
		up := 0
		for _, r := range f.Replicas {
			if states[r.Name] == "UP" && (f.opts.AuditWebhook == nil || webhooks[r.Name] == "UP") {
				up++
			}
		}
		if err == nil && werr == nil && up == len(f.Replicas) {
			return nil
		}
		select {
		case <-f.hpDone:
			raw, _ := os.ReadFile(logFile.Name())
			return fmt.Errorf("%w: %s", errNoHAProxy, raw)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleet: HAProxy saw %d of %d consoles up within 30 s (states %v, err %v)", up, len(f.Replicas), states, err)
		}
	}
}

// ServerStates returns HAProxy's view of each console: "UP", "DOWN", or a
// transition such as "UP 1/2" (its health checks).
func (f *Fleet) ServerStates() (map[string]string, error) {
	return f.backendStat(backend, "status")
}

// WebhookStates is ServerStates for the replicas' audit webhooks (TCP
// connect checks); empty without Options.AuditWebhook.
func (f *Fleet) WebhookStates() (map[string]string, error) {
	return f.backendStat(webhookBackend, "status")
}

// WebhookConnections returns how many connections HAProxy passes to each
// replica's audit webhook now: which replica the API server is sending to.
func (f *Fleet) WebhookConnections() (map[string]int, error) {
	cur, err := f.backendStat(webhookBackend, "scur")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for name, v := range cur {
		var n int
		_, _ = fmt.Sscan(v, &n)
		out[name] = n
	}
	return out, nil
}

// backendStat returns one column of HAProxy's statistics for each server of
// the backend px.
func (f *Fleet) backendStat(px, column string) (map[string]string, error) {
	rows, err := f.showStat()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, row := range rows {
		if row["pxname"] == px && row["svname"] != "BACKEND" {
			out[row["svname"]] = row[column]
		}
	}
	return out, nil
}

// WaitState waits until HAProxy reports the replica in state ("UP" or "DOWN").
func (f *Fleet) WaitState(ctx context.Context, name, state string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		states, err := f.ServerStates()
		if err == nil && states[name] == state {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleet: HAProxy did not report %s %s within %v (states %v, err %v)", name, state, timeout, states, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// showStat asks HAProxy's admin socket for its statistics (CSV, header first).
func (f *Fleet) showStat() ([]map[string]string, error) {
	c, err := net.DialTimeout("unix", f.stats, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "show stat\n"); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(c)
	if err != nil {
		return nil, err
	}
	raw = bytes.TrimPrefix(raw, []byte("# "))
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("fleet: HAProxy's statistics: %v", err)
	}
	head := recs[0]
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, v := range rec {
			if i < len(head) {
				m[head[i]] = v
			}
		}
		out = append(out, m)
	}
	return out, nil
}
