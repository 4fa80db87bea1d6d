//go:build integration

package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestRecordedWritesOnTheDevcluster: as the devcluster API server's audit
// webhook (its shipped policy), the receiver records a ConfigMap's create
// and patch with the object after and before each, and a Secret's writes
// leave its data nowhere in the SQLite file: the policy keeps Secrets at
// Metadata, so no event carries it.
func TestRecordedWritesOnTheDevcluster(t *testing.T) {
	testcluster.Require(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	store, err := ledger.Open(context.Background(), "sqlite:"+path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ws := store.(ledger.WriteStore)
	webhookUnderTest(t, store, Options{Writes: ws}, true)

	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ns := "recorded-writes-" + strings.ToLower(time.Now().UTC().Format("150405.000000"))
	ns = strings.ReplaceAll(ns, ".", "-")
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testcluster.DeleteNamespace(t, admin, ns) })

	const secretValue = "hunter2-the-secret-value-never-recorded"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}, Data: map[string]string{"mode": "before-patch"}}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ConfigMaps(ns).Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"mode":"after-patch"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns}, StringData: map[string]string{"password": secretValue}}
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Secrets(ns).Patch(ctx, "creds", types.MergePatchType, []byte(`{"stringData":{"other":"`+secretValue+`-2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// A write after the Secret's, waited for: once it is recorded, the
	// Secret's events (sent before it) were received too.
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "last", Namespace: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writes := waitWrites(t, ws, ns, func(ws []ledger.Write) bool {
		for _, w := range ws {
			if w.Name == "last" {
				return true
			}
		}
		return false
	})
	var patch *ledger.Write
	for i, w := range writes {
		if w.Resource == "secrets" {
			t.Errorf("a Secret's write was recorded: %s %s/%s", w.Verb, w.Namespace, w.Name)
		}
		if w.Resource == "configmaps" && w.Name == "settings" && w.Verb == "patch" {
			patch = &writes[i]
		}
	}
	if patch == nil {
		t.Fatalf("the ConfigMap's patch was not recorded (%d writes in %s)", len(writes), ns)
	}
	if patch.Operation != ledger.OpUpdate || patch.User != testcluster.Admin || patch.Code != 200 {
		t.Errorf("the patch: %+v", patch)
	}
	after, before := configMapData(t, patch.Object), configMapData(t, patch.OldObject)
	if after["mode"] != "after-patch" || before["mode"] != "before-patch" {
		t.Errorf("the patch's object after %v, before %v", after, before)
	}
	// The Secret's data nowhere in the database: not in any recorded
	// write's objects or annotations as read back (decompressed: the
	// objects are stored gzip'd, which a grep of the file cannot see
	// through), and not in clear in the database's files.
	secretBytes := [][]byte{[]byte(secretValue), []byte("aHVudGVyMi10aGUtc2VjcmV0")} // and its base64 start
	if err := ws.ScanWrites(ctx, ledger.WriteQuery{}, func(w *ledger.Write) error {
		anns, _ := json.Marshal(w.Annotations)
		for _, b := range [][]byte{w.Object, w.OldObject, anns} {
			for _, v := range secretBytes {
				if bytes.Contains(b, v) {
					t.Errorf("recorded write %s %s/%s holds the Secret's data %q", w.Verb, w.Resource, w.Name, v)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(path + "*")
	for _, f := range matches {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range secretBytes {
			if bytes.Contains(b, v) {
				t.Errorf("%s holds the Secret's data %q", filepath.Base(f), v)
			}
		}
	}
}

// waitWrites waits until the writes recorded in namespace ns satisfy done.
func waitWrites(t *testing.T, ws ledger.WriteStore, ns string, done func([]ledger.Write) bool) []ledger.Write {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var got []ledger.Write
		if err := ws.ScanWrites(context.Background(), ledger.WriteQuery{}, func(w *ledger.Write) error {
			if w.Namespace == ns {
				c := *w
				got = append(got, c)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writes in %s were not recorded within 60 s (%d so far)", ns, len(got))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func configMapData(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	var cm corev1.ConfigMap
	if err := json.Unmarshal(raw, &cm); err != nil {
		t.Fatalf("object %q: %v", raw, err)
	}
	return cm.Data
}
