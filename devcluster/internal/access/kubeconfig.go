package access

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a single-context kubeconfig for server that trusts
// caPEM and authenticates as auth. Everything is embedded, so the file works
// from any directory.
func WriteKubeconfig(path, server string, caPEM []byte, name string, auth *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["devcluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[name] = auth
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "devcluster", AuthInfo: name}
	cfg.CurrentContext = name
	return clientcmd.WriteToFile(*cfg, path)
}
