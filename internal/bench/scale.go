package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The scale case runs on a devcluster of its own (make bench-pages starts it
// beside the main one, without demo data or fixtures, and keeps its etcd
// between runs), so that the main table keeps measuring 5,000 CSRs while this
// one measures the CSR queue over many more.
const scaleValue = "scale"

func scaleCSRName(i int) string { return fmt.Sprintf("scale-csr-%05d", i) }

// scaleResult is what the scale case adds to the report.
type scaleResult struct {
	CSRs          int
	Seeded        int           // CSRs created by this run
	SeedTime      time.Duration // how long creating them took
	Ready, First  time.Duration // console start to synced, and to the first /csrs page
	RSS           int64
	HeapMiB       int
	Rows          []row
	FilteredQuery string
}

// runScale brings the scale cluster in dir to n CSRs (creating only the missing
// ones, workers at a time), starts the console on it and measures the CSR
// queue: the first page, a filtered page and a deep page, beside the raw LIST
// of every CSR.
func runScale(ctx context.Context, o options, dir string, logf func(string, ...any)) (*scaleResult, error) {
	kubeconfig := filepath.Join(dir, "kubeconfigs", "admin.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("scale cluster: %w", err)
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	cfg.UserAgent = "clusterdesk-bench"
	k8s, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	res := &scaleResult{CSRs: o.scaleCSRs}
	if res.Seeded, res.SeedTime, err = seedScaleCSRs(ctx, k8s, o.scaleCSRs, o.workers, logf); err != nil {
		return nil, err
	}

	logf("scale: starting %s on %d CSRs", o.binary, o.scaleCSRs)
	con, err := startConsole(ctx, o.binary, kubeconfig, filepath.Join(dir, "bench-pages-clusterdesk.log"))
	if err != nil {
		return nil, err
	}
	defer con.stop()
	if err := con.signIn(); err != nil {
		return nil, err
	}
	ready, err := con.waitFor("/readyz", 5*time.Minute)
	if err != nil {
		return nil, err
	}
	res.Ready = ready.Sub(con.started)
	first, err := con.waitFor("/csrs", 2*time.Minute)
	if err != nil {
		return nil, err
	}
	res.First = first.Sub(con.started)
	if res.RSS, err = con.rss(); err != nil {
		return nil, err
	}

	raw, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	list := cfg.Host + "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	total, err := countCSRs(ctx, k8s)
	if err != nil {
		return nil, err
	}
	// A person looking for one team's requests: about 1 in 50 CSRs match.
	res.FilteredQuery = "q=bench-team-07&state=pending"
	deep := max(total/100/2, 2) // a page in the middle of the queue
	pagesToMeasure := []struct{ path, what string }{
		{"/csrs", "first page"},
		{"/csrs?" + res.FilteredQuery, "filtered"},
		{"/csrs?page=" + fmt.Sprint(deep), "deep page"},
	}
	jsonAccept := http.Header{"Accept": {"application/json"}}
	logf("scale: measuring the raw LIST of %d CSRs", total)
	rawStats, err := sample(o.requests, 20, 1, o.limit, func() (int64, error) { return get(raw, list, jsonAccept) })
	if err != nil {
		return nil, err
	}
	for _, p := range pagesToMeasure {
		logf("scale: measuring %s", p.path)
		r := row{Page: p.path + " (" + p.what + ")", What: "LIST csrs", Objects: total, Raw: rawStats}
		u := con.baseURL + p.path
		if r.Console, err = sample(o.requests, 20, 2, o.limit, func() (int64, error) { return get(con.client, u, nil) }); err != nil {
			return nil, fmt.Errorf("%s: %w", p.path, err)
		}
		res.Rows = append(res.Rows, r)
	}
	res.HeapMiB, _ = con.heap()
	res.CSRs = total
	return res, nil
}

func countCSRs(ctx context.Context, k8s kubernetes.Interface) (int, error) {
	l, err := k8s.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// seedScaleCSRs creates scale-csr-00000 … up to n, those missing, with a pool
// of workers; one key signs every request (generating 50,000 keys tells
// nothing). It returns how many it created and how long that took.
func seedScaleCSRs(ctx context.Context, k8s kubernetes.Interface, n, workers int, logf func(string, ...any)) (int, time.Duration, error) {
	have := map[string]bool{}
	opts := metav1.ListOptions{LabelSelector: seedLabel + "=" + scaleValue, Limit: 5000}
	for {
		l, err := k8s.CertificatesV1().CertificateSigningRequests().List(ctx, opts)
		if err != nil {
			return 0, 0, fmt.Errorf("count scale CSRs: %w", err)
		}
		for _, c := range l.Items {
			have[c.Name] = true
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			break
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return 0, 0, err
	}
	missing := 0
	for i := range n {
		if !have[scaleCSRName(i)] {
			missing++
		}
	}
	s := &seeder{k8s: k8s, log: logf, workers: workers}
	start := time.Now()
	err = s.create(ctx, "scale CSRs", n, have, scaleCSRName, func(ctx context.Context, i int) error {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
			Subject: pkix.Name{CommonName: fmt.Sprintf("bench-user-%05d", i), Organization: []string{fmt.Sprintf("bench-team-%02d", i%50)}},
		}, key)
		if err != nil {
			return err
		}
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: scaleCSRName(i), Labels: map[string]string{seedLabel: scaleValue}},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
				SignerName: certificatesv1.KubeAPIServerClientSignerName,
				Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			},
		}
		_, err = k8s.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
		return err
	})
	return missing, time.Since(start), err
}
