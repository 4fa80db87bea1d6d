package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
	"sigs.k8s.io/yaml"
)

// UserAgent is the User-Agent of every request clusterdesk sends, so that API server
// audit logs and APF metrics name the console.
const UserAgent = "clusterdesk"

// LoadConfig resolves a kubeconfig the way kubectl does: the explicit path if given,
// else the files listed in $KUBECONFIG (merged, missing ones skipped), else
// ~/.kube/config; then it selects context (the file's current-context if empty).
// Errors are one line naming the file and the problem. The returned description
// (files, context, server) is meant for the startup log.
func LoadConfig(path, context string) (*rest.Config, string, error) {
	files, source, err := kubeconfigFiles(path)
	if err != nil {
		return nil, "", err
	}
	for _, f := range files {
		if err := checkKubeconfig(f); err != nil {
			return nil, "", err
		}
	}
	// The loading rules merge the files like kubectl and resolve relative
	// certificate paths against the file that names them.
	raw, err := (&clientcmd.ClientConfigLoadingRules{Precedence: files}).Load()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: %s", source, oneLine(err))
	}
	name := context
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		return nil, "", fmt.Errorf("kubeconfig %s: no current-context is set and no context was given", source)
	}
	kctx, ok := raw.Contexts[name]
	if !ok {
		return nil, "", fmt.Errorf("kubeconfig %s: context %q not found", source, name)
	}
	if _, ok := raw.Clusters[kctx.Cluster]; !ok {
		return nil, "", fmt.Errorf("kubeconfig %s: context %q names cluster %q, which is not defined", source, name, kctx.Cluster)
	}
	if _, ok := raw.AuthInfos[kctx.AuthInfo]; kctx.AuthInfo != "" && !ok {
		return nil, "", fmt.Errorf("kubeconfig %s: context %q names user %q, which is not defined", source, name, kctx.AuthInfo)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{CurrentContext: name}).ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: context %q: %s", source, name, oneLine(err))
	}
	return cfg, fmt.Sprintf("kubeconfig %s, context %s, server %s", source, name, cfg.Host), nil
}

// HasDefaultKubeconfig reports whether LoadConfig would find a kubeconfig without an
// explicit path: $KUBECONFIG is set or ~/.kube/config exists.
func HasDefaultKubeconfig() bool {
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		return true
	}
	_, err := os.Stat(homeKubeconfig())
	return err == nil
}

// kubeconfigFiles returns the files to merge and how to name them in errors.
func kubeconfigFiles(path string) (files []string, source string, err error) {
	if path != "" {
		return []string{path}, path, nil
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		// kubectl skips missing files in $KUBECONFIG; only all of them missing is an error.
		for _, f := range filepath.SplitList(env) {
			if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			return nil, "", fmt.Errorf("kubeconfig %s (from $KUBECONFIG): no such file", env)
		}
		return files, strings.Join(files, string(filepath.ListSeparator)), nil
	}
	home := homeKubeconfig()
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		return nil, "", errors.New("no kubeconfig: $KUBECONFIG is unset and ~/.kube/config does not exist")
	}
	return []string{home}, home, nil
}

// homeKubeconfig is ~/.kube/config, computed on each call (unlike
// clientcmd.RecommendedHomeFile) so that tests can move $HOME.
func homeKubeconfig() string {
	return filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
}

// checkKubeconfig reports, in one line, why path cannot be a kubeconfig. The client-go
// loader would report these too, but wrapped, multi-line or naming Go types.
func checkKubeconfig(path string) error {
	data, err := os.ReadFile(path)
	var perr *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("kubeconfig %s: no such file", path)
	case errors.As(err, &perr):
		return fmt.Errorf("kubeconfig %s: %v", path, perr.Err)
	case err != nil:
		return fmt.Errorf("kubeconfig %s: %v", path, err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("kubeconfig %s: invalid YAML: %s", path, strings.TrimPrefix(oneLine(err), "error converting YAML to JSON: "))
	}
	if _, ok := doc.(map[string]any); !ok && doc != nil {
		return fmt.Errorf("kubeconfig %s: not a kubeconfig (the document is not a YAML mapping)", path)
	}
	if _, err := clientcmd.Load(data); err != nil {
		return fmt.Errorf("kubeconfig %s: not a valid kubeconfig: %s", path, oneLine(err))
	}
	return nil
}

// oneLine joins a possibly multi-line error message (aggregated validation errors) into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// clientConfig returns a copy of cfg with clusterdesk's User-Agent and client-side rate
// limits. The defaults (5 QPS, burst 10) would throttle the cache's start-up (discovery,
// access reviews, a LIST and a WATCH per kind) and pages that check several permissions.
func clientConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = UserAgent
	c.QPS = 20
	c.Burst = 40
	return c
}
