package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/fleet"
)

// replicaRound is one measured run of bin/clusterdesk replicas behind HAProxy.
type replicaRound struct {
	replicas, clients int
	perReplica        []int // streams each replica served
	writes            int
	expected, got     int
	p50, p99, max     time.Duration
	watchAll, watchC  int // API server WATCH requests held by the consoles (all kinds, CSRs)
	kinds             int // kinds each console watches (from its /readyz)
}

// runReplicas measures live updates through a real balancer: for each replica
// count, that many bin/clusterdesk processes in proxy mode behind HAProxy
// (internal/fleet: round robin, no stickiness), n tabs connected through it and
// so spread over the replicas, CSR patches at rate, and the API server's watch
// count, which should be replicas × kinds whatever the number of tabs.
func runReplicas(ctx context.Context, cs kubernetes.Interface, binary string, counts []int, tabs, rate int, d time.Duration) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("-binary: %w (run make build)", err)
	}
	dir, err := os.MkdirTemp("", "clusterdesk-bench-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: -1, DisableCompression: true}}

	names, err := createCSRs(ctx, cs, fmt.Sprintf("bench-replicas-%d", time.Now().Unix()), 20)
	defer deleteCSRs(cs, names)
	if err != nil {
		return fmt.Errorf("creating the bench CSRs: %w", err)
	}
	board := newBoard(names)
	// The consoles impersonate the user HAProxy names; a proxy may not name
	// system:masters (auth/proxy_names.go), so the bench's user is bound to
	// cluster-admin for the run.
	unbind, err := bindBenchUser(ctx, cs)
	if err != nil {
		return err
	}
	defer unbind()
	var seq int64
	var rounds []replicaRound
	baseAll, baseC, err := watches(ctx, cs)
	if err != nil {
		return fmt.Errorf("apiserver /metrics: %w", err)
	}
	load := loadAverage()
	for _, n := range counts {
		fmt.Fprintf(os.Stderr, "bench: %d replica(s) behind HAProxy: starting\n", n)
		f, err := fleet.Start(ctx, fleet.Options{
			Binary: binary, Kubeconfig: adminKubeconfig(), Replicas: n, Dir: fmt.Sprintf("%s/%d", dir, n),
			Identity: &fleet.Identity{User: benchUser, Groups: []string{benchUser}},
		})
		if err != nil {
			return err
		}
		r, err := replicaRun(ctx, cs, hc, f, board, names, &seq, tabs, rate, d)
		f.Stop()
		if err != nil {
			return fmt.Errorf("%d replicas: %w", n, err)
		}
		// The consoles' share: the watches that end with them. (On a devcluster
		// other programs share, a reading before they started drifts more.)
		// The API server counts a watch until it notices its client is gone.
		afterAll, afterC := baseAll, baseC
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			if afterAll, afterC, err = watches(ctx, cs); err == nil && afterAll <= baseAll {
				break
			}
		}
		r.watchAll -= afterAll
		r.watchC -= afterC
		rounds = append(rounds, r)
		baseAll, baseC = afterAll, afterC
	}
	reportReplicas(os.Stdout, rounds, rate, d, load)
	for _, r := range rounds {
		if r.got < r.expected || r.writes == 0 {
			return fmt.Errorf("%d replicas: %d of %d events arrived", r.replicas, r.got, r.expected)
		}
	}
	return nil
}

// replicaRun connects the tabs through the balancer, drives writes and measures.
func replicaRun(ctx context.Context, cs kubernetes.Interface, hc *http.Client, f *fleet.Fleet, b *board, names []string, seq *int64, tabs, rate int, d time.Duration) (replicaRound, error) {
	r := replicaRound{replicas: len(f.Replicas), clients: tabs}
	if body, err := getText(ctx, hc, f.Replicas[0].URL+"/readyz"); err == nil {
		r.kinds = strings.Count(body, "\n") - 1 // "ready" then a line per kind
	}
	// Let the caches see the bench CSRs before their rows are expected.
	time.Sleep(time.Second)
	// Each tab a person of its own: HAProxy names the user the header asks for.
	i := 0
	sign := func(req *http.Request) error {
		i++
		req.Header.Set(fleet.UserHeader, fmt.Sprintf("bench-%d", i))
		return nil
	}
	clients, err := connect(f.URL, sign, b, tabs)
	if err != nil {
		return r, err
	}
	defer closeAll(clients)
	for _, rep := range f.Replicas {
		n, err := rep.Streams(ctx)
		if err != nil {
			return r, err
		}
		r.perReplica = append(r.perReplica, n)
	}
	for w := time.Duration(0); w < d; w += 5 * time.Second {
		n, err := drive(ctx, cs, b, names, seq, rate, min(d-w, 5*time.Second))
		r.writes += n
		if err != nil {
			return r, fmt.Errorf("driver: %w", err)
		}
	}
	if r.watchAll, r.watchC, err = watches(ctx, cs); err != nil {
		return r, err
	}
	r.expected = r.writes * tabs
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if received(clients) >= r.expected {
			break
		}
	}
	closeAll(clients)
	var all []time.Duration
	for _, c := range clients {
		for _, s := range c.lat {
			all = append(all, s.lat)
		}
	}
	r.got = len(all)
	r.p50, r.p99, r.max = percentiles(all)
	return r, nil
}

func getText(ctx context.Context, hc *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func reportReplicas(w io.Writer, rounds []replicaRound, rate int, d time.Duration, load string) {
	fmt.Fprintf(w, "\nclusterdesk replicas behind HAProxy (round robin, proxy mode): %d CSR annotation patches/s for %v, loopback; load average %s at the start, %s at the end\n", rate, d, load, loadAverage())
	fmt.Fprintf(w, "latency = the patch request leaving the driver → the event's first line read by a tab, through the balancer\n\n")
	fmt.Fprintf(w, "| replicas | tabs (per replica) | events got/expected | p50 ms | p99 ms | max ms | API WATCH requests held: all (CSR) | replicas × kinds |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|\n")
	for _, r := range rounds {
		per := make([]string, len(r.perReplica))
		for i, n := range r.perReplica {
			per[i] = fmt.Sprint(n)
		}
		fmt.Fprintf(w, "| %d | %d (%s) | %d/%d | %s | %s | %s | %d (%d) | %d |\n",
			r.replicas, r.clients, strings.Join(per, "/"), r.got, r.expected, ms(r.p50), ms(r.p99), ms(r.max), r.watchAll, r.watchC, r.replicas*r.kinds)
	}
}

// benchUser is the user HAProxy names to the bench's consoles.
const benchUser = "clusterdesk-bench"

// bindBenchUser binds the group benchUser to cluster-admin and returns the
// undo: every tab is a person of its own (bench-N) in that group, which
// HAProxy names with each request (a system: group would be refused).
func bindBenchUser(ctx context.Context, cs kubernetes.Interface) (func(), error) {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: benchUser + "-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: benchUser}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("binding %s to cluster-admin: %w", benchUser, err)
	}
	return func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
	}, nil
}
