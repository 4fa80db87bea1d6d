//go:build integration

package approver

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// pageTimes are the console's pages and the raw LIST they stand for, timed
// while a storm ran: issue 47's "the queue and the home page stay within
// their speed goals during the storm", measured against the API server in
// the same run.
type pageTimes struct {
	queue, home, list []time.Duration
	failures          []string
}

// watchPagesDuringStorm starts the console binary (bin/clusterdesk,
// testcluster.ConsoleBin) as the admin, signs in, and from then on, every 250 ms
// until the returned stop is called, opens the pending queue and the home
// page as a browser would and lists the CSRs straight from the API server.
func watchPagesDuringStorm(tb testing.TB) (stop func() pageTimes) {
	tb.Helper()
	c := testcluster.StartConsoleBinary(tb, testcluster.ConsoleBin(tb), []string{"--listen", "127.0.0.1:0",
		"--kubeconfig", testcluster.Kubeconfig(tb, testcluster.Admin), "--data-dir", tb.TempDir()},
		[]string{"HOME=" + tb.TempDir(), "PATH=" + os.Getenv("PATH")})
	origin := c.Origin
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	if resp, err := client.Get(c.LoginURL); err != nil {
		tb.Fatal(err)
	} else {
		resp.Body.Close()
	}
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(tb, testcluster.Admin))

	var (
		mu  sync.Mutex
		out pageTimes
	)
	// page opens a page as the signed-in admin, the whole body read.
	page := func(path string) (time.Duration, string) {
		t0 := time.Now()
		resp, err := client.Get(origin + path)
		if err != nil {
			return 0, path + ": " + err.Error()
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != strings.Split(path, "?")[0] {
			return 0, path + ": " + resp.Status + " at " + resp.Request.URL.Path
		}
		return time.Since(t0), ""
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			q, qerr := page("/csrs?state=pending")
			h, herr := page("/")
			t0 := time.Now()
			_, lerr := admin.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
			l := time.Since(t0)
			mu.Lock()
			for _, e := range []string{qerr, herr} {
				if e != "" {
					out.failures = append(out.failures, e)
				}
			}
			if lerr != nil {
				out.failures = append(out.failures, "LIST: "+lerr.Error())
			}
			if qerr == "" && herr == "" && lerr == nil {
				out.queue, out.home, out.list = append(out.queue, q), append(out.home, h), append(out.list, l)
			}
			mu.Unlock()
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() pageTimes {
		close(quit)
		<-finished
		c.Stop()
		mu.Lock()
		defer mu.Unlock()
		if len(out.failures) > 0 {
			tb.Errorf("during the storm, %d page loads failed; the first: %s", len(out.failures), out.failures[0])
		}
		if len(out.queue) == 0 {
			tb.Error("no page was timed during the storm")
		}
		return out
	}
}
