// Command fleet runs bin/clusterdesk replicas behind HAProxy for a browser test
// (internal/fleet): it prints one JSON line with the balancer's and replicas'
// addresses, then obeys one command per stdin line and answers with one line:
//
//	holder      the name of the replica serving event streams ("" if none, "r0 r1" if several)
//	kill <name> kills the replica at once (SIGKILL); HAProxy notices by its health checks
//
// When stdin closes it stops HAProxy and every console.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

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
	user := flag.String("user", "e2e-replicas", "proxy mode: the user HAProxy names")
	groups := flag.String("groups", "system:masters", "proxy mode: the user's groups, comma-separated")
	flag.Parse()
	ctx := context.Background()
	f, err := fleet.Start(ctx, fleet.Options{
		Binary: *binary, Kubeconfig: *kubeconfig, Replicas: *replicas, Dir: *dir,
		Identity: &fleet.Identity{User: *user, Groups: strings.Split(*groups, ",")},
	})
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
