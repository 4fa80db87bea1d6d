// Package plane knows how to run the two control-plane binaries of a
// devcluster: their command lines, the audit policy, and when they are ready.
package plane

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

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
}

// AuditLog is where the API server writes its audit events, one JSON object per line.
func (l Layout) AuditLog() string { return filepath.Join(l.Dir, "audit.log") }

// AuditPolicy is the audit policy file the API server is started with.
func (l Layout) AuditPolicy() string { return filepath.Join(l.Dir, "audit-policy.yaml") }

// auditPolicy records who did what to which object for every request
// (Metadata), without bodies; RequestReceived is dropped because every request
// has a ResponseComplete event with the same metadata and the outcome.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// APIServer returns kube-apiserver serving on 127.0.0.1:port with etcdURL as storage.
func APIServer(l Layout, etcdURL string, port int) (*procs.Proc, error) {
	if err := os.WriteFile(l.AuditPolicy(), []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	args := []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		// Without it the API server looks for a default route to pick an
		// address, and a loopback-only machine has none.
		"--advertise-address=127.0.0.1",
		// The "kubernetes" Service endpoints would be 127.0.0.1, which
		// validation rejects for Endpoints, so don't maintain them.
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
		"--audit-log-path=" + l.AuditLog(),
		"--audit-log-maxsize=100",
		"--audit-log-maxbackup=2",
		// Close open watches when asked to stop. Without it the server waits
		// up to a minute for watching clients (the controller manager, the
		// console) to go away, and SIGUSR1 or Ctrl-C end in a SIGKILL.
		"--shutdown-watch-termination-grace-period=2s",
	}
	if l.AuthenticationConfig != "" {
		args = append(args, "--authentication-config="+l.AuthenticationConfig)
	}
	return &procs.Proc{
		Name:    "kube-apiserver",
		Path:    filepath.Join(l.BinDir, "kube-apiserver"),
		Args:    args,
		LogPath: filepath.Join(l.LogDir, "kube-apiserver.log"),
	}, nil
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

// ServerURL is the API server address clients use.
func ServerURL(port int) string { return fmt.Sprintf("https://127.0.0.1:%d", port) }
