//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// laggingCluster is the console's real cache whose CSIDriver list can be
// frozen: from freeze on, it answers what the cache held then, as an informer
// that has not yet seen the newest changes does. It makes the cache's lag
// behind the API server, which is real but usually milliseconds long, last as
// long as the test needs.
type laggingCluster struct {
	Cluster
	mu     sync.Mutex
	frozen []*storagev1.CSIDriver
}

func (l *laggingCluster) CSIDrivers() ([]*storagev1.CSIDriver, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.frozen != nil {
		return l.frozen, nil
	}
	return l.Cluster.CSIDrivers()
}

// freeze makes the list answer what the cache holds now, from now on.
func (l *laggingCluster) freeze(t *testing.T) {
	t.Helper()
	items, err := l.Cluster.CSIDrivers()
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frozen = items
}

// TestCleanupDeletesOnlyWhatThePreviewListed is the attack on a selector
// cleanup: after the preview, a new object matching the selector is created
// and a listed one is deleted and created again under its name (a new UID),
// while the console's cache has seen neither (it lags). The confirmation
// finds the same set in the cache, so the fingerprint matches; a deletion
// by label selector (deletecollection) would then delete both unseen objects.
// Every deletion must carry the UID the preview listed: the two listed
// objects go, the replaced one is refused by the API server (conflict), and
// the newcomer and the replacement survive.
func TestCleanupDeletesOnlyWhatThePreviewListed(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	var lag *laggingCluster
	ls := newCleanupServer(t, testcluster.Admin, false, func(d *Deps) {
		lag = &laggingCluster{Cluster: d.Cluster}
		d.Cluster = lag
	})
	sess := ls.login(t)
	selector, names := cleanupDrivers(t, cs, 3)
	ls.waitDriversCached(t, cs, names...)

	doc, form := ls.previewForm(t, sess, "/csidrivers/-/cleanup?selector="+url.QueryEscape(selector))
	if n := previewCount(t, doc); n != 3 {
		t.Fatalf("preview counts %d, want 3", n)
	}
	lag.freeze(t)

	run := strings.TrimPrefix(selector, cleanupRunLabel+"=")
	newcomer := "it-cleanup-" + run + "-newcomer.example.com"
	newcomerUID := createDriver(t, cs, newcomer, run)
	if err := cs.StorageV1().CSIDrivers().Delete(context.Background(), names[1], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the driver to be gone", 10*time.Second, func() bool { return len(driverUIDs(t, cs, names[1:2])) == 0 })
	replacementUID := createDriver(t, cs, names[1], run)

	rec := ls.post(t, sess, "/csidrivers/-/cleanup/confirm", form)
	result := postDoc(t, rec)
	left := driverUIDs(t, cs, append([]string{newcomer}, names...))
	if left[newcomer] != newcomerUID {
		t.Errorf("the object created after the preview, never listed, was deleted: %v", left)
	}
	if left[names[1]] != replacementUID {
		t.Errorf("the object created under a listed name after the preview (a new UID) was deleted: %v", left)
	}
	for _, n := range []string{names[0], names[2]} {
		if _, ok := left[n]; ok {
			t.Errorf("%s, listed by the preview, is still there", n)
		}
	}
	if rec.Code != http.StatusOK || resultCount(result, "deleted") != 2 || resultCount(result, "conflict") != 1 {
		t.Errorf("confirm: status %d, %d deleted, %d conflict, want 200, 2 and 1: %.600s",
			rec.Code, resultCount(result, "deleted"), resultCount(result, "conflict"), squash(result.Selection))
	}
}
