package kube

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service-account token,
// CA bundle and namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster reports whether the process looks like it runs in a pod: the kubelet
// sets KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT in every container.
func InCluster() bool {
	return os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv("KUBERNETES_SERVICE_PORT") != ""
}

// ResolveConfig picks the connection like kubectl does in a pod: an explicit
// kubeconfig path, $KUBECONFIG or ~/.kube/config win; without any of them, in a
// pod (InCluster), the pod's service account from dir (ServiceAccountDir when
// empty). Otherwise LoadConfig reports the missing kubeconfig.
func ResolveConfig(path, context, dir string) (*rest.Config, string, error) {
	if path == "" && !HasDefaultKubeconfig() && InCluster() {
		return InClusterConfig(dir)
	}
	return LoadConfig(path, context)
}

// InClusterConfig is rest.InClusterConfig reading the token and CA bundle from
// dir instead of the fixed ServiceAccountDir, so tests run the same code path with
// files in a temporary directory. The token is read from its file again as the
// kubelet rotates it (BearerTokenFile). The description names the service
// account's namespace and the server, for the startup log.
func InClusterConfig(dir string) (*rest.Config, string, error) {
	if dir == "" {
		dir = ServiceAccountDir
	}
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, "", errors.New("in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")
	}
	tokenFile := filepath.Join(dir, "token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, "", fmt.Errorf("in-cluster config: service-account token: %w", err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if _, err := os.Stat(caFile); err != nil {
		return nil, "", fmt.Errorf("in-cluster config: CA bundle: %w", err)
	}
	cfg := &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		BearerToken:     strings.TrimSpace(string(token)),
		BearerTokenFile: tokenFile,
	}
	desc := "in-cluster service account"
	if ns, err := os.ReadFile(filepath.Join(dir, "namespace")); err == nil {
		desc += " in namespace " + strings.TrimSpace(string(ns))
	}
	return cfg, desc + ", server " + cfg.Host, nil
}
