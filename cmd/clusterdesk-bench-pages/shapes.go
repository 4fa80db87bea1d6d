package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The shapes run on a devcluster of their own (make bench-pages starts it
// beside the main one, without demo data, and keeps its etcd between runs),
// so that the main table keeps measuring the everyday cluster while this one
// measures the worst realistic shapes together: the storm, the decided CSRs,
// thousands of CRDs, long names, many SANs, big annotations.

// shapesResult is what the shapes case adds to the report.
type shapesResult struct {
	Counts     shapeCounts
	CSRs, CRDs int           // in the cluster when measured
	SeedTime   time.Duration // how long this run's seeding took
	// Limited is the console run with deploy/'s GOMEMLIMIT, Unlimited
	// without (the pages are measured on it).
	Limited, Unlimited memoryReading
	Rows               []row
}

// memoryReading is one console's start-up and memory on the shapes.
type memoryReading struct {
	Ready, First           time.Duration // console start to synced, and to the first /csrs page
	RSSSynced, RSSViewed   int64         // after sync, and after pageViews page views
	HeapSynced, HeapViewed int           // live heap at the last GC then (MiB)
	// FullGCSynced and FullGCViewed are the live heap after the full GC the
	// heap profile forces just after each reading (MiB; 0 when the console
	// serves no profiles): what the console keeps, whatever a view held in
	// flight when the last GC ran, so a before/after of one change compares
	// like with like.
	FullGCSynced, FullGCViewed int
	// CPUSynced is the console's CPU time from its start to the reading
	// after sync; CPUViewed what the page views took (user + system,
	// garbage collection included: what a GOGC setting trades for memory).
	CPUSynced, CPUViewed time.Duration
}

// deployGOMEMLIMIT is the soft limit deploy/base/clusterdesk.yaml gives the
// console (TestDeployGOMEMLIMIT holds them equal).
const deployGOMEMLIMIT = "400MiB"

// readMemory signs in to the started console, waits for it to sync, and
// reads its memory then and after pageViews views of pages.
// The heap profiles go to profile+"-synced.pb.gz" and profile+"-viewed.pb.gz",
// taken after each reading (the profile's GC would move the next).
func readMemory(con *console, pages []page, profile string, logf func(string, ...any)) (memoryReading, error) {
	var m memoryReading
	if err := con.signIn(); err != nil {
		return m, err
	}
	// 10 min: on the shared 2-core machine the shapes' first sync passed 5.
	ready, err := con.waitFor("/readyz", 10*time.Minute)
	if err != nil {
		return m, err
	}
	m.Ready = ready.Sub(con.started)
	first, err := con.waitFor("/csrs", 2*time.Minute)
	if err != nil {
		return m, err
	}
	m.First = first.Sub(con.started)
	if m.RSSSynced, err = con.rss(); err != nil {
		return m, err
	}
	m.HeapSynced, _ = con.heap()
	if m.CPUSynced, err = con.cpu(); err != nil {
		return m, err
	}
	m.FullGCSynced = heapAfterProfile(con, profile+"-synced.pb.gz", logf)
	logf("shapes: %d page views", pageViews)
	viewsFrom, err := con.cpu() // after the profile, whose GC is not the views'
	if err != nil {
		return m, err
	}
	for i := range pageViews {
		if _, err := get(con.client, con.baseURL+pages[i%len(pages)].page, nil); err != nil {
			return m, err
		}
	}
	if m.RSSViewed, err = con.rss(); err != nil {
		return m, err
	}
	viewsTo, err := con.cpu()
	if err != nil {
		return m, err
	}
	m.CPUViewed = viewsTo - viewsFrom
	m.HeapViewed, _ = con.heap()
	m.FullGCViewed = heapAfterProfile(con, profile+"-viewed.pb.gz", logf)
	return m, nil
}

// heapAfterProfile saves the heap profile (its full GC) and returns the live
// heap that GC's trace line reports (MiB), 0 when there was none in 5 s.
func heapAfterProfile(con *console, path string, logf func(string, ...any)) int {
	_, before := con.heap()
	if !saveProfile(con, path, logf) {
		return 0
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if mib, gcs := con.heap(); gcs > before {
			return mib
		}
	}
	return 0
}

// saveProfile saves the console's heap profile to path, or says why not.
func saveProfile(con *console, path string, logf func(string, ...any)) bool {
	if err := con.saveHeapProfile(path); err != nil {
		logf("shapes: no heap profile (a console without --pprof-listen?): %v", err)
		return false
	}
	logf("shapes: heap profile in %s (go tool pprof -sample_index=inuse_space -top)", path)
	return true
}

// pageViews is how many page views the "after the views" memory reading follows.
const pageViews = 100

// runShapes seeds the shapes cluster in dir (creating only what is missing),
// starts the console on it, reads its memory after sync and after 100 page
// views over the shapes' pages, and measures each page beside the raw LIST or
// GET of the same objects.
func runShapes(ctx context.Context, o options, dir, fixtures string, logf func(string, ...any)) (*shapesResult, error) {
	kubeconfig := filepath.Join(dir, "kubeconfigs", "admin.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("shapes cluster: %w", err)
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	cfg.UserAgent = "clusterdesk-bench"
	k8s, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	res := &shapesResult{Counts: o.shapes}
	start := time.Now()
	crds, err := seedShapeCRDs(ctx, k8s, ext, fixtures, o.shapes, logf)
	if err != nil {
		return nil, err
	}
	as := func(user string, groups ...string) (kubernetes.Interface, error) {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		return kubernetes.NewForConfig(c)
	}
	if err := seedShapeCSRs(ctx, &seeder{k8s: k8s, log: logf, workers: o.workers, as: as}, o.shapes); err != nil {
		return nil, err
	}
	res.SeedTime = time.Since(start)
	if res.CSRs, err = countCSRs(ctx, k8s); err != nil {
		return nil, err
	}
	crdList, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	res.CRDs = len(crdList.Items)

	pages := shapePages(o.shapes, crds, cfg.Host, res.CSRs, res.CRDs)
	// First the console as deploy/ runs it, under the Go heap's soft limit;
	// then without one, the console that the pages are measured on.
	logf("shapes: starting %s on %d CSRs and %d CRDs with GOMEMLIMIT=%s", o.binary, res.CSRs, res.CRDs, deployGOMEMLIMIT)
	limited, err := startConsole(ctx, o.binary, kubeconfig, filepath.Join(dir, "bench-pages-clusterdesk-limited.log"), "GOMEMLIMIT="+deployGOMEMLIMIT)
	if err != nil {
		return nil, err
	}
	res.Limited, err = readMemory(limited, pages, filepath.Join(dir, "bench-pages-heap-limited"), logf)
	limited.stop()
	if err != nil {
		return nil, err
	}
	logf("shapes: starting %s on %d CSRs and %d CRDs without GOMEMLIMIT", o.binary, res.CSRs, res.CRDs)
	con, err := startConsole(ctx, o.binary, kubeconfig, filepath.Join(dir, "bench-pages-clusterdesk.log"))
	if err != nil {
		return nil, err
	}
	defer con.stop()
	if res.Unlimited, err = readMemory(con, pages, filepath.Join(dir, "bench-pages-heap"), logf); err != nil {
		return nil, err
	}

	raw, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	jsonAccept := http.Header{"Accept": {"application/json"}}
	rawStats := map[string]stats{} // the same raw LIST serves several rows: measured once
	for _, p := range pages {
		if o.shapePages != "" && !slices.Contains(strings.Split(o.shapePages, ","), p.page) {
			continue
		}
		logf("shapes: measuring %s", p.page)
		r := row{Page: p.label(), What: p.what, Objects: p.objects, Target: p.target}
		if r.Console, err = sample(o.requests, min(20, o.requests), 2, o.limit, func() (int64, error) { return get(con.client, con.baseURL+p.page, nil) }); err != nil {
			return nil, fmt.Errorf("%s: %w", p.page, err)
		}
		key := fmt.Sprint(p.raw)
		st, ok := rawStats[key]
		if !ok {
			if st, err = sample(o.requests, min(20, o.requests), 1, o.limit, func() (int64, error) { return getAll(raw, p.raw, jsonAccept) }); err != nil {
				return nil, err
			}
			rawStats[key] = st
		}
		r.Raw = st
		res.Rows = append(res.Rows, r)
	}
	return res, nil
}

// shapePages are the shapes' pages: every queue, filter and list beside the
// raw LIST of the same objects, every odd detail page beside its raw GET.
func shapePages(c shapeCounts, crds crdShapes, server string, csrs, crdCount int) []page {
	csrList := server + "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	crdList := server + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	list := func(path, what string) page {
		return page{page: path, note: what, what: "LIST csrs", objects: csrs, raw: []string{csrList}, target: targetList}
	}
	out := []page{
		list("/csrs", "first page"),
		list("/csrs?state=pending", "the pending queue, storm included"),
		list("/csrs?state=approved", "a decided tab"),
		list("/csrs?q=bench-team-07", "filtered"),
		list("/csrs?q="+stormNode, "the storm, filtered"),
		list("/csrs?q="+stormCSRName(c.Storm / 2)[:12], "a name inside the storm"),
		list("/csrs?page="+fmt.Sprint(max(csrs/100/2, 2)), "a deep page"),
		{page: "/crds", note: "every CRD", what: "LIST crds", objects: crdCount, raw: []string{crdList}, target: targetList},
		{page: "/crds?q=g0001", note: "filtered", what: "LIST crds", objects: crdCount, raw: []string{crdList}, target: targetList},
		// The home page says what needs attention from the queue's index and
		// the findings kept per CRD change: beside the LISTs a page computing
		// it from the API server would need.
		{page: "/", note: "what needs attention: pending per signer, the storms, CRD drift", what: "LIST csrs + crds",
			objects: csrs + crdCount, raw: []string{csrList, crdList}, target: targetList},
	}
	detail := func(kindPath, apiList, name, what string) page {
		return page{page: "/" + kindPath + "/" + url.PathEscape(name), note: what, what: "GET one", objects: 1,
			raw: []string{apiList + "/" + url.PathEscape(name)}, target: targetDetail}
	}
	if c.RequesterStorm > 0 {
		out = append(out, list("/csrs?requester="+url.QueryEscape(runawayRequester), "the requester storm, filtered"))
	}
	if c.Storm > 0 {
		out = append(out, detail("csrs", csrList, stormCSRName(0), "storm member, 253-char name"))
	}
	if c.SANs > 0 {
		out = append(out, detail("csrs", csrList, sanCSRName(0), "200 SANs"))
	}
	out = append(out, detail("csrs", csrList, annotatedCSR, "256 KiB annotation"))
	if c.CRDs > 0 {
		out = append(out, detail("crds", crdList, crds.name(0), "the largest real schema"))
	}
	if c.CRDs > 1 {
		out = append(out, detail("crds", crdList, crds.name(1), "253-char name"))
	}
	if c.CRDs > 2 {
		out = append(out, detail("crds", crdList, crds.name(2), "256 KiB annotation"))
	}
	if c.ManyVersionCRDs > 0 {
		out = append(out, detail("crds", crdList, manyVersionName(0), fmt.Sprintf("%d versions", manyVersions)))
	}
	return out
}

func countCSRs(ctx context.Context, k8s kubernetes.Interface) (int, error) {
	// A quorum read: the watch cache ("0") may lag the creates just made.
	l, err := k8s.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}
