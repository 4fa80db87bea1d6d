// Package plane knows how to run the two control-plane binaries of a
// devcluster: their command lines, the audit policy, and when they are ready.
package plane

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/access"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/pki"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/procs"
)

// ServiceCIDR is the cluster's service IP range; its first address is in the
// serving certificate (pki) as the in-cluster address of the API server.
const ServiceCIDR = "10.0.0.0/24"

// Layout holds what both binaries need to know about one devcluster.
type Layout struct {
	Dir       string // DIR: audit log and audit policy live here
	BinDir    string
	LogDir    string
	PKI       pki.PKI
	TokenFile string
	// AuthenticationConfig is kube-apiserver's --authentication-config file
	// (the OpenID provider's JWT authenticator); empty runs without one.
	AuthenticationConfig string
	// AuditWebhook is the audit webhook backend's address
	// (https://127.0.0.1:PORT), where a console serves as the API server's
	// audit webhook (issue 29); the API server sends its batches there.
	AuditWebhook string
}

// AuditWebhookConfig is the kubeconfig kube-apiserver instance n's
// --audit-webhook-config-file reads: the backend's address, the CA of its
// serving certificate, and the API server's client certificate. Each
// instance has its own, whose address ends in /apiservers/<instance>
// (AuditWebhookPath): an audit event does not say which API server wrote
// it, and the recorded traffic is per instance (issue 46). Instance 1
// keeps the file name it had when there was one.
func (l Layout) AuditWebhookConfig(n int) string {
	if n == 1 {
		return filepath.Join(l.Dir, "audit-webhook.kubeconfig")
	}
	return filepath.Join(l.Dir, fmt.Sprintf("audit-webhook-%d.kubeconfig", n))
}

// AuditWebhookPath is the path instance n's audit batches are posted to:
// /apiservers/ and the instance's address as the default/kubernetes
// EndpointSlice lists it (127.0.0.N:PORT), the name the console records
// its traffic under (internal/ingest's receiver).
func AuditWebhookPath(n, port int) string {
	return fmt.Sprintf("/apiservers/%s:%d", pki.InstanceIP(n), port)
}

// AuditLog is where the API server writes its audit events, one JSON object per line.
func (l Layout) AuditLog() string { return filepath.Join(l.Dir, "audit.log") }

// AuditPolicy is the audit policy file the API server is started with.
func (l Layout) AuditPolicy() string { return filepath.Join(l.Dir, "audit-policy.yaml") }

// auditPolicy serves both backends, the log and the webhook (a policy is the
// API server's, not a backend's). Rules match in order:
//   - reads (get, list, watch) at Metadata, no body: the recorded traffic
//     of the APF what-if (issue 46), which the console folds into per-second
//     counts per flow at ingest (internal/traffic) rather than storing each;
//     reads take most of an API server's seats, so a what-if without them
//     would be wrong. Their cost (every informer's watch and every page's
//     lookup is an event) is measured in ARCHITECTURE.md;
//   - Secrets, tokens, access reviews and streams at Metadata, never a body
//     (the policy's own comments say why);
//   - high-churn housekeeping (Events, Leases, Endpoints, EndpointSlices,
//     node and pod status) and CustomResourceDefinitions at Metadata;
//   - every other write at RequestResponse: the ledger keeps the console's
//     kinds' objects as the write left them, and the recorded writes (issue
//     45) every resource's, for the replay of admission changes;
//   - everything else at Metadata: who did what to which object.
//
// RequestReceived is dropped because every request has a ResponseComplete
// event with the same metadata and the outcome.
//
// deploy/audit-webhook/policy.yaml ships this policy to cluster admins;
// TestDeployAuditPolicyIsTheDevclusters (cmd/clusterdesk) fails when the two differ.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
# Reads at Metadata, never a body (issue 46): the recorded traffic the APF
# what-if replays; reads take most of the API server's seats. Secrets,
# tokens and the rest below are reads like any other here: Metadata has no
# body to leak.
- level: Metadata
  verbs: ["get", "list", "watch"]
# Never a body. Secrets: their data must not leave the API server (the
# console records who wrote which Secret, never what). Tokens: a
# TokenRequest's answer (serviceaccounts/token) and a TokenReview's request
# hold bearer tokens; the access reviews are asked on every webhook
# authorization and console page and carry nothing to replay. Streams
# (exec, attach, port-forward, proxy) have no object.
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "serviceaccounts/token", "pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "services/proxy", "nodes/proxy"]
  - group: authentication.k8s.io
  - group: authorization.k8s.io
# High-churn housekeeping, who and what only: Events (one per state change
# of anything), Leases (leader election every few seconds, node heartbeats
# every 10 s), Endpoints and EndpointSlices (rewritten by their controllers
# on every pod readiness change), nodes' and pods' status (the kubelets'
# heartbeats and container states). Their bodies would be most of the
# traffic and no admission policy is written for them. CRDs: their schemas
# reach a megabyte, and a 400-event batch of them must not be a gigabyte.
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources:
  - group: ""
    resources: ["events", "endpoints", "nodes/status", "pods/status"]
  - group: events.k8s.io
    resources: ["events"]
  - group: coordination.k8s.io
    resources: ["leases"]
  - group: discovery.k8s.io
    resources: ["endpointslices"]
  - group: apiextensions.k8s.io
    resources: ["customresourcedefinitions", "customresourcedefinitions/status"]
# Every other write with its objects: the ledger's history of the console's
# kinds and the recorded writes an admission change is replayed against.
# ConfigMaps are among them: not meant for secrets, and their data is
# what policies judge.
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: Metadata
`

// writeAuditWebhookConfig writes instance n's kubeconfig of the audit
// webhook: the backend at l.AuditWebhook and the instance's path, trusted
// through the cluster CA, and the API server's client certificate from the
// audit client CA.
func writeAuditWebhookConfig(l Layout, n, port int) error {
	ca, err := os.ReadFile(l.PKI.CACert)
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(l.PKI.AuditClientCert)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(l.PKI.AuditClientKey)
	if err != nil {
		return err
	}
	return access.WriteKubeconfig(l.AuditWebhookConfig(n), l.AuditWebhook+AuditWebhookPath(n, port), ca, pki.AuditWebhookClientUser,
		&clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key})
}

// InstanceAuditLog is where kube-apiserver instance n (from 1) writes its
// audit events: instance 1 in AuditLog, as before there were several, the
// others each in their own file (two processes cannot share one rotated log).
func (l Layout) InstanceAuditLog(n int) string {
	if n == 1 {
		return l.AuditLog()
	}
	return filepath.Join(l.Dir, fmt.Sprintf("audit-apiserver-%d.log", n))
}

// instanceLog is kube-apiserver instance n's own log file.
func (l Layout) instanceLog(n int) string {
	if n == 1 {
		return filepath.Join(l.LogDir, "kube-apiserver.log")
	}
	return filepath.Join(l.LogDir, fmt.Sprintf("kube-apiserver-%d.log", n))
}

// APIServer returns kube-apiserver instance n (from 1) serving on
// 127.0.0.n:port with etcdURL as storage. Every instance serves on the same
// port at its own address, as a real cluster's instances do on their own
// machines: the "kubernetes" EndpointSlice has one port for all of them.
func APIServer(l Layout, etcdURL string, n, port int) (*procs.Proc, error) {
	if err := os.WriteFile(l.AuditPolicy(), []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	if err := writeAuditWebhookConfig(l, n, port); err != nil {
		return nil, fmt.Errorf("audit webhook kubeconfig: %w", err)
	}
	ip := pki.InstanceIP(n).String()
	args := []string{
		"--bind-address=" + ip,
		"--secure-port=" + strconv.Itoa(port),
		// Without it the API server looks for a default route to pick an
		// address, and a loopback-only machine has none.
		"--advertise-address=" + ip,
		// The lease reconciler (the default) would list every live
		// instance in the "kubernetes" Endpoints and EndpointSlice, but
		// validation refuses loopback addresses in both (ValidateEndpointIP,
		// pkg/apis/core/validation), so its writes fail every 10 s. The
		// devcluster writes that EndpointSlice itself (WriteKubernetesEndpoints).
		"--endpoint-reconciler-type=none",
		"--etcd-servers=" + etcdURL,
		"--tls-cert-file=" + l.PKI.ServingCert,
		"--tls-private-key-file=" + l.PKI.ServingKey,
		"--client-ca-file=" + l.PKI.CACert,
		"--token-auth-file=" + l.TokenFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.PKI.SAPub,
		"--service-account-signing-key-file=" + l.PKI.SAKey,
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--audit-policy-file=" + l.AuditPolicy(),
		"--audit-log-path=" + l.InstanceAuditLog(n),
		"--audit-log-maxsize=100",
		"--audit-log-maxbackup=2",
		// The console as audit webhook backend (the ledger, issue 29), in
		// batches; a short wait so tests see events within a second or two.
		// The API server retries a batch the backend refuses with a 429 or
		// 5xx, and drops events when its buffer is full: it never blocks
		// requests on the backend.
		"--audit-webhook-config-file=" + l.AuditWebhookConfig(n),
		"--audit-webhook-mode=batch",
		"--audit-webhook-batch-max-wait=1s",
		// Close open watches when asked to stop. Without it the server waits
		// up to a minute for watching clients (the controller manager, the
		// console) to go away, and SIGUSR1 or Ctrl-C end in a SIGKILL.
		"--shutdown-watch-termination-grace-period=2s",
	}
	if l.AuthenticationConfig != "" {
		args = append(args, "--authentication-config="+l.AuthenticationConfig)
	}
	name := "kube-apiserver"
	if n > 1 {
		name = fmt.Sprintf("kube-apiserver %d", n)
	}
	return &procs.Proc{
		Name:    name,
		Path:    filepath.Join(l.BinDir, "kube-apiserver"),
		Args:    args,
		LogPath: l.instanceLog(n),
		Env:     apiserverEnv(os.Getenv(APIServerGOGCEnv)),
	}, nil
}

// APIServerGOGCEnv names the garbage collector target (GOGC) devcluster
// gives its kube-apiserver instances; unset, they run with Go's default (100),
// as a real cluster's do unless its operator tunes them.
//
// Why: make test runs five API servers beside each other on 2 cores (two
// integration lanes, the browser tests', the compat layer's), and a CPU
// profile of one under the tests spent 23-30% of its CPU marking (each holds
// 150 real-world CRDs' megabyte schemas, decoded and converted on every
// list). make test sets 200: half the collections for about half again the
// heap (the machine has 24 GiB; the five use about 6 at GOGC=100).
const APIServerGOGCEnv = "DEVCLUSTER_APISERVER_GOGC"

func apiserverEnv(gogc string) []string {
	if gogc == "" {
		return nil
	}
	return []string{"GOGC=" + gogc}
}

// ControllerManager returns kube-controller-manager running only the CSR
// signer and cleaner, so approved CSRs for the kubernetes.io signers really
// get certificates, and nothing else (no nodes or pods to manage).
func ControllerManager(l Layout, kubeconfig string, port int) *procs.Proc {
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--controllers=csrsigning,csrcleaner",
		"--cluster-signing-cert-file=" + l.PKI.CACert,
		"--cluster-signing-key-file=" + l.PKI.CAKey,
		"--leader-elect=false",
		// Each controller then acts as its own service account (as on
		// kubeadm clusters), so the audit log and CSR conditions name
		// system:serviceaccount:kube-system:certificate-controller.
		"--use-service-account-credentials=true",
	}
	return &procs.Proc{
		Name:    "kube-controller-manager",
		Path:    filepath.Join(l.BinDir, "kube-controller-manager"),
		Args:    args,
		LogPath: filepath.Join(l.LogDir, "kube-controller-manager.log"),
	}
}

// OIDCProvider returns devcluster's OpenID provider (devcluster-oidc, built
// from devcluster/oidc) serving what configPath describes.
func OIDCProvider(l Layout, bin, configPath string) *procs.Proc {
	return &procs.Proc{
		Name:    "devcluster-oidc",
		Path:    bin,
		Args:    []string{"--config=" + configPath},
		LogPath: filepath.Join(l.LogDir, "oidc.log"),
	}
}

// ServerURL is the API server address clients use: instance 1's.
func ServerURL(port int) string { return InstanceURL(1, port) }

// InstanceURL is kube-apiserver instance n's address.
func InstanceURL(n, port int) string { return fmt.Sprintf("https://%s:%d", pki.InstanceIP(n), port) }
