// Command clusterdesk-bench-pages measures clusterdesk's pages on a big
// devcluster (make bench-pages runs it under scripts/with-devcluster.sh with
// FIXTURES). It
// seeds the cluster up to 5,000 CSRs, 500 FlowSchemas and 200 webhook
// configurations (creating only what a previous run did not leave), checks the
// real-world CRDs are loaded, starts bin/clusterdesk as a child process on
// loopback, and prints one table, every figure from this run: each list page
// and the biggest detail pages through the console (p50/p99 over 50 requests
// with a session) beside the raw LIST or GET from the API server that a
// dashboard without a cache pays for the same view, and their ratio; the time
// from process start to ready and to the first page; RSS and Go heap. With
// -shapes-dir it then does the same for the worst realistic shapes on a second
// devcluster (shapes.go), with RSS and heap after sync and after 100 page
// views, and marks each row against its target. -quick runs it all with tiny
// counts (make test does, so that a change breaking it fails CI). Nothing
// leaves the machine.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench-pages:", err)
		os.Exit(1)
	}
}

type options struct {
	binary     string
	counts     seedCounts
	requests   int
	limit      time.Duration
	shapesDir  string // the shapes' devcluster ("" skips them)
	shapes     shapeCounts
	quick      bool
	shapesOnly bool
	workers    int
	memoryOnly bool
	// shapePages, when set, are the only shapes' pages measured (their
	// paths, comma-separated): a before/after of one change in one sitting.
	shapePages string
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("bench-pages", flag.ContinueOnError)
	fs.StringVar(&o.binary, "binary", "bin/clusterdesk", "the console binary to measure")
	fs.IntVar(&o.counts.CSRs, "csrs", 5000, "CSRs to seed")
	fs.IntVar(&o.counts.FlowSchemas, "flowschemas", 500, "FlowSchemas to seed")
	fs.IntVar(&o.counts.Webhooks, "webhooks", 200, "ValidatingWebhookConfigurations to seed")
	fs.IntVar(&o.requests, "requests", 50, "requests per measurement")
	fs.DurationVar(&o.limit, "limit", 2*time.Minute, "stop a measurement after this long once it has 20 requests")
	fs.StringVar(&o.shapesDir, "shapes-dir", "", "a second devcluster's directory for the worst realistic shapes (empty: skip them)")
	fs.StringVar(&o.shapePages, "shape-pages", "", "measure only these shapes' pages (paths, comma-separated, e.g. /,/csrs; empty: all); memory is read on all of them")
	fs.IntVar(&o.shapes.CSRs, "shape-csrs", 50000, "CSRs in the shapes cluster, the storm included")
	fs.IntVar(&o.shapes.Decided, "shape-decided", 45000, "of them approved or denied")
	fs.IntVar(&o.shapes.Storm, "shape-storm", 5000, "of them a retry storm: pending, one subject, 253-character names")
	fs.IntVar(&o.shapes.RequesterStorm, "shape-requester-storm", 3000, "and besides them, pending requests of one service account, every subject different")
	fs.IntVar(&o.shapes.SANs, "shape-sans", 20, "of them requests with 200 DNS names")
	fs.IntVar(&o.shapes.CRDs, "shape-crds", 2000, "CRDs in the shapes cluster: the real schemas under generated groups, the largest first")
	fs.IntVar(&o.shapes.ManyVersionCRDs, "shape-many-version-crds", 5, "CRDs with 30 versions")
	fs.IntVar(&o.workers, "workers", 32, "concurrent creates when seeding the shapes' CSRs")
	fs.BoolVar(&o.shapesOnly, "shapes-only", false, "measure only the shapes (-shapes-dir), not the main cluster")
	fs.BoolVar(&o.quick, "quick", false, "a short round with tiny counts (make test runs it so the benchmark cannot rot); its figures mean nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.quick {
		o.counts = seedCounts{CSRs: 20, FlowSchemas: 5, Webhooks: 3}
		o.shapes = shapeCounts{CSRs: 30, Decided: 15, Storm: 10, RequesterStorm: 12, SANs: 2, CRDs: 4, ManyVersionCRDs: 1}
		o.requests, o.limit = 3, 10*time.Second
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench-pages: "+format+"\n", args...) }
	if o.shapesOnly {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return shapesReport(ctx, o, logf)
	}
	dir := os.Getenv("DEVCLUSTER_DIR")
	if dir == "" {
		return fmt.Errorf("DEVCLUSTER_DIR is not set: run it under scripts/with-devcluster.sh (make bench-pages)")
	}
	kubeconfig := filepath.Join(dir, "kubeconfigs", "admin.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.UserAgent = "clusterdesk-bench"
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	k8s, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	s := &seeder{k8s: k8s, ext: ext, log: logf}
	if err := s.seed(ctx, o.counts, os.Getenv("FIXTURES")); err != nil {
		return err
	}
	version, err := k8s.Discovery().ServerVersion()
	if err != nil {
		return err
	}

	raw, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	inv, err := inventory(raw, cfg.Host)
	if err != nil {
		return err
	}

	heaps, err := measureKindHeaps(ctx, cfg, k8s, inv.kinds, logf)
	if err != nil {
		return err
	}
	if o.memoryOnly {
		writeKindHeaps(os.Stdout, heaps)
		return nil
	}

	logf("starting %s", o.binary)
	con, err := startConsole(ctx, o.binary, kubeconfig, filepath.Join(dir, "bench-pages-clusterdesk.log"))
	if err != nil {
		return err
	}
	defer con.stop()
	st := startup{KindHeaps: heaps}
	st.Listening = time.Since(con.started)
	if err := con.signIn(); err != nil {
		return err
	}
	ready, err := con.waitFor("/readyz", 2*time.Minute)
	if err != nil {
		return err
	}
	st.Ready = ready.Sub(con.started)
	st.FirstPagePath = "/csrs"
	first, err := con.waitFor(st.FirstPagePath, 2*time.Minute)
	if err != nil {
		return err
	}
	st.FirstPage = first.Sub(con.started)
	if st.RSSReady, err = con.rss(); err != nil {
		return err
	}
	for _, k := range inv.kinds {
		st.Objects += k.count
	}

	var rows []row
	jsonAccept := http.Header{"Accept": {"application/json"}}
	for _, p := range pagesFor(inv, cfg.Host) {
		logf("measuring %s", p.page)
		var r row
		r.Page, r.What, r.Objects, r.Target = p.label(), p.what, p.objects, p.target
		if r.Console, err = sample(o.requests, 20, 2, o.limit, func() (int64, error) { return get(con.client, con.baseURL+p.page, nil) }); err != nil {
			return err
		}
		if r.Raw, err = sample(o.requests, 20, 2, o.limit, func() (int64, error) { return getAll(raw, p.raw, jsonAccept) }); err != nil {
			return err
		}
		rows = append(rows, r)
	}
	if st.RSSEnd, err = con.rss(); err != nil {
		return err
	}
	st.HeapMiB, st.GCs = con.heap()
	con.stop()

	load, _ := os.ReadFile("/proc/loadavg")
	header := fmt.Sprintf("clusterdesk page benchmark, %s: Kubernetes %s devcluster on loopback; %s; %d CPUs, load %s\n"+
		"console: %s over HTTP with a session, full pages; raw: the API server's JSON LIST/GET as the devcluster admin through client-go's transport (gzip as it negotiates), fetch only, no decoding; "+
		"p50/p99 over n sequential requests after 2 warm-ups; ratio = raw p50 / page p50",
		time.Now().Format("2006-01-02 15:04"), version.GitVersion, inv.summary(), runtime.NumCPU(),
		strings.Join(strings.Fields(string(load))[:3], " "), o.binary)
	writeReport(os.Stdout, header, rows, st)
	// The main table is out before the shapes start: they take long, and a
	// failure there keeps what was measured here.
	return shapesReport(ctx, o, logf)
}

// shapesReport measures and prints the shapes, when asked for.
func shapesReport(ctx context.Context, o options, logf func(string, ...any)) error {
	if o.shapesDir == "" {
		return nil
	}
	shapes, err := runShapes(ctx, o, o.shapesDir, os.Getenv("FIXTURES"), logf)
	if err != nil {
		return fmt.Errorf("shapes: %w", err)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(os.Stdout, "\nthe worst realistic shapes, %s; load %s\n", time.Now().Format("2006-01-02 15:04"), strings.Join(strings.Fields(string(load))[:3], " "))
	writeShapes(os.Stdout, shapes)
	return nil
}

// kindInfo is one kind as the API server has it.
type kindInfo struct {
	id, path        string // the console's kind id, the API path
	count           int
	biggest         string // name of the largest object (its JSON)
	biggestBytes    int
	storageVersions map[string]string // CRD name → storage version (CRDs only)
}

type inventoryT struct{ kinds []*kindInfo }

func (inv inventoryT) kind(id string) *kindInfo {
	for _, k := range inv.kinds {
		if k.id == id {
			return k
		}
	}
	return nil
}

func (inv inventoryT) summary() string {
	var parts []string
	for _, k := range inv.kinds {
		parts = append(parts, fmt.Sprintf("%d %s", k.count, k.id))
	}
	return strings.Join(parts, ", ")
}

// inventory lists every kind once to count it and find its largest object.
func inventory(client *http.Client, host string) (inventoryT, error) {
	inv := inventoryT{kinds: []*kindInfo{
		{id: "csrs", path: "/apis/certificates.k8s.io/v1/certificatesigningrequests"},
		{id: "flowschemas", path: "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"},
		{id: "prioritylevels", path: "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations"},
		{id: "crds", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"},
		{id: "validatingwebhooks", path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"},
		{id: "csidrivers", path: "/apis/storage.k8s.io/v1/csidrivers"},
	}}
	for _, k := range inv.kinds {
		req, err := http.NewRequest(http.MethodGet, host+k.path, nil)
		if err != nil {
			return inv, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return inv, err
		}
		var list struct{ Items []json.RawMessage }
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			return inv, fmt.Errorf("LIST %s: %w", k.path, err)
		}
		k.count = len(list.Items)
		k.storageVersions = map[string]string{}
		for _, item := range list.Items {
			var head struct {
				Metadata struct{ Name string }
				Spec     struct {
					Versions []struct {
						Name    string
						Storage bool
					}
				}
			}
			if err := json.Unmarshal(item, &head); err != nil {
				return inv, err
			}
			if len(item) > k.biggestBytes {
				k.biggest, k.biggestBytes = head.Metadata.Name, len(item)
			}
			for _, v := range head.Spec.Versions {
				if v.Storage {
					k.storageVersions[head.Metadata.Name] = v.Name
				}
			}
		}
	}
	return inv, nil
}

// page is one console URL and the API requests that serve the same view.
type page struct {
	page, what string
	note       string // what the page shows, when the URL does not say
	objects    int
	raw        []string
	target     string // targetList or targetDetail
}

// label is the page as the table names it.
func (p page) label() string {
	if p.note == "" {
		return p.page
	}
	return p.page + " (" + p.note + ")"
}

// pagesFor lists every list page and the biggest detail pages.
func pagesFor(inv inventoryT, server string) []page {
	host := func(k *kindInfo) string { return server + k.path }
	var out []page
	var all []string
	total := 0
	for _, k := range inv.kinds {
		all = append(all, host(k))
		total += k.count
	}
	out = append(out, page{page: "/", what: "LIST all 6 kinds", objects: total, raw: all, target: targetList})
	for _, k := range inv.kinds {
		p := page{page: "/" + k.id, what: "LIST " + k.id, objects: k.count, raw: []string{host(k)}, target: targetList}
		if k.id == "flowschemas" {
			// The page shows each FlowSchema's priority level: both lists.
			pl := inv.kind("prioritylevels")
			p.what, p.raw, p.objects = "LIST flowschemas + prioritylevels", append(p.raw, host(pl)), k.count+pl.count
		}
		out = append(out, p)
	}
	for _, id := range []string{"crds", "validatingwebhooks", "flowschemas", "csrs"} {
		k := inv.kind(id)
		if k.biggest == "" {
			continue
		}
		name := url.PathEscape(k.biggest)
		out = append(out, page{page: "/" + id + "/" + name, what: fmt.Sprintf("GET one (%s JSON)", size(int64(k.biggestBytes))), objects: 1,
			raw: []string{host(k) + "/" + name}, target: targetDetail})
		if v, ok := k.storageVersions[k.biggest]; ok && id == "crds" {
			out = append(out, page{page: "/crds/" + name + "/schema/" + url.PathEscape(v), what: "GET the CRD", objects: 1,
				raw: []string{host(k) + "/" + name}, target: targetDetail})
		}
	}
	return out
}
