// Command fleet runs bin/clusterdesk replicas behind HAProxy for a browser test
// (internal/fleet): it prints one JSON line with the balancer's and replicas'
// addresses, then obeys one command per stdin line and answers with one line:
//
//	holder      the name of the replica serving event streams ("" if none, "r0 r1" if several)
//	kill <name> kills the replica at once (SIGKILL); HAProxy notices by its health checks
//
// The consoles run in token mode and share session keys (a file it writes under
// --dir) and sign-outs (Leases in a namespace it creates, and deletes when
// done), so a browser signs in once through the balancer. When stdin closes it
// stops HAProxy and every console.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clusterdesk/clusterdesk/internal/fleet"
)

type replicaInfo struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type info struct {
	URL      string        `json:"url"`
	Replicas []replicaInfo `json:"replicas"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func run() error {
	binary := flag.String("binary", "bin/clusterdesk", "the console binary")
	kubeconfig := flag.String("kubeconfig", "", "the consoles' kubeconfig")
	replicas := flag.Int("replicas", 2, "how many consoles")
	dir := flag.String("dir", "", "state and logs")
	flag.Parse()
	ctx := context.Background()
	// Proxy mode is not offered here: no browser test used it, and the
	// replicas in proxy mode are internal/fleet's Go tests' (with a user bound
	// by RBAC; system: names are refused from a proxy).
	args, cleanup, err := sharedSessions(ctx, *kubeconfig, *dir)
	if err != nil {
		return err
	}
	defer cleanup()
	opts := fleet.Options{Binary: *binary, Kubeconfig: *kubeconfig, Replicas: *replicas, Dir: *dir, Args: args}
	f, err := fleet.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer f.Stop()
	out := info{URL: f.URL}
	for _, r := range f.Replicas {
		out.Replicas = append(out.Replicas, replicaInfo{Name: r.Name, URL: r.URL})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return err
	}
	s := bufio.NewScanner(os.Stdin)
	for s.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(s.Text()), " ")
		switch cmd {
		case "holder":
			var names []string
			for _, r := range f.Replicas {
				if !r.Running() {
					continue
				}
				if n, err := r.Streams(ctx); err == nil && n > 0 {
					names = append(names, r.Name)
				}
			}
			fmt.Println(strings.Join(names, " "))
		case "kill":
			r := f.Replica(arg)
			if r == nil {
				fmt.Println("error: no replica " + arg)
				continue
			}
			// No wait for HAProxy: the test acts while the page's stream is down.
			r.Kill()
			fmt.Println("killed " + arg)
		default:
			fmt.Println("error: unknown command " + cmd)
		}
	}
	return nil
}

// sharedSessions is what token-mode replicas share: a session-key file (one
// random key, as `head -c 32 /dev/urandom | base64` makes it) and a namespace
// for sign-out Leases, created here and deleted by cleanup.
func sharedSessions(ctx context.Context, kubeconfig, dir string) (args []string, cleanup func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keys := filepath.Join(dir, "session-keys")
	if err := os.WriteFile(keys, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-fleet-"}}, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("the sign-outs' namespace: %w", err)
	}
	cleanup = func() {
		if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, "fleet: delete namespace", ns.Name+":", err)
		}
	}
	return []string{"--auth", "token", "--session-keys", keys, "--namespace", ns.Name}, cleanup, nil
}
