package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func writeStore(t *testing.T, dsn string, o ledger.Options) ledger.WriteStore {
	t.Helper()
	ws, ok := open(t, dsn, o).(ledger.WriteStore)
	if !ok {
		t.Fatal("the store keeps no recorded writes")
	}
	return ws
}

var w0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func cmWrite(id string, at int, op, verb string, code int, data string) ledger.Write {
	w := ledger.Write{ID: id, AuditID: "a-" + id, Time: w0.Add(time.Duration(at) * time.Second), User: "alice", Groups: []string{"dev"},
		Verb: verb, Operation: op, APIVersion: "v1", Resource: "configmaps", Namespace: "team", Name: "cm", Code: code,
		Annotations: map[string]string{"validation.policy.admission.k8s.io/validation_failure": `[{"message":"x"}]`}}
	if data != "" {
		w.Object = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"team"},"data":{"k":"` + data + `"}}`)
	}
	return w
}

func scanAll(t *testing.T, ws ledger.WriteStore, q ledger.WriteQuery) []ledger.Write {
	t.Helper()
	var out []ledger.Write
	err := ws.ScanWrites(context.Background(), q, func(w *ledger.Write) error {
		out = append(out, *w)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordedWritesKeepTheObjectBefore: each write reads the object its
// object's previous applied write left, in the same batch or an earlier one;
// a create, a refused write, a dry run and a delete never become "before".
func TestRecordedWritesKeepTheObjectBefore(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ws := writeStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		dry := cmWrite("4", 4, ledger.OpUpdate, "update", 200, "dry")
		dry.DryRun = true
		batch1 := []ledger.Write{
			cmWrite("1", 1, ledger.OpCreate, "create", 201, "v1"),
			cmWrite("2", 2, ledger.OpUpdate, "patch", 200, "v2"),  // before: v1, same batch
			cmWrite("3", 3, ledger.OpUpdate, "update", 403, "no"), // refused: before v2, never a before
			dry,
		}
		if n, err := ws.AppendWrites(ctx, batch1); err != nil || n != 4 {
			t.Fatalf("AppendWrites: %d, %v", n, err)
		}
		// The API server retries a batch it got no answer for: stored once.
		if n, err := ws.AppendWrites(ctx, batch1); err != nil || n != 0 {
			t.Fatalf("retried batch: %d new, %v", n, err)
		}
		batch2 := []ledger.Write{
			cmWrite("5", 5, ledger.OpUpdate, "update", 200, "v3"), // before: v2 (not the refused, not the dry run)
			cmWrite("6", 6, ledger.OpDelete, "delete", 200, ""),   // before: v3
			cmWrite("7", 7, ledger.OpCreate, "create", 201, "v4"), // a create: none
			cmWrite("8", 8, ledger.OpUpdate, "update", 200, "v5"), // before: v4, not the delete
		}
		if _, err := ws.AppendWrites(ctx, batch2); err != nil {
			t.Fatal(err)
		}
		got := scanAll(t, ws, ledger.WriteQuery{})
		want := map[string]string{"1": "", "2": "v1", "3": "v2", "4": "v2", "5": "v2", "6": "v3", "7": "", "8": "v4"}
		if len(got) != len(want) {
			t.Fatalf("%d writes, want %d", len(got), len(want))
		}
		for i, w := range got {
			if i > 0 && w.Seq <= got[i-1].Seq {
				t.Errorf("not in order: %d after %d", w.Seq, got[i-1].Seq)
			}
			before := ""
			if w.OldObject != nil {
				before = string(w.OldObject)
				before = before[strings.Index(before, `"k":"`)+5 : strings.LastIndex(before, `"}}`)]
			}
			if before != want[w.ID] {
				t.Errorf("write %s: before %q, want %q", w.ID, before, want[w.ID])
			}
		}
		if w := got[0]; w.User != "alice" || len(w.Groups) != 1 || w.Annotations["validation.policy.admission.k8s.io/validation_failure"] == "" ||
			!w.Time.Equal(w0.Add(time.Second)) || w.Resource != "configmaps" || w.Namespace != "team" || w.Code != 201 {
			t.Errorf("first write read back as %+v", w)
		}
		// A window.
		if n := len(scanAll(t, ws, ledger.WriteQuery{Since: w0.Add(5 * time.Second), Until: w0.Add(7 * time.Second)})); n != 2 {
			t.Errorf("window [5s, 7s): %d writes, want 2", n)
		}
	})
}

// TestRecordedWritesAreBounded: by age (PruneWrites), by count (MaxWrites,
// trimmed as writes come in), a too large object dropped and counted; all
// of it in WriteStats.
func TestRecordedWritesAreBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ws := writeStore(t, dsn, ledger.Options{MaxWrites: 100, WriteRetention: time.Hour})
		ctx := context.Background()
		var batch []ledger.Write
		for i := range 150 {
			batch = append(batch, cmWrite(fmt.Sprint(i), i, ledger.OpCreate, "create", 201, "v"))
		}
		big := cmWrite("big", 200, ledger.OpCreate, "create", 201, strings.Repeat("x", ledger.MaxObjectBytes))
		batch = append(batch, big)
		if _, err := ws.AppendWrites(ctx, batch); err != nil {
			t.Fatal(err)
		}
		st, err := ws.WriteStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Writes != 100 || st.PrunedForSize != 51 || st.ObjectsDropped != 1 || st.MaxWrites != 100 || st.Retention != time.Hour {
			t.Errorf("stats after the size bound: %+v", st)
		}
		got := scanAll(t, ws, ledger.WriteQuery{})
		if last := got[len(got)-1]; last.ID != "big" || !last.ObjectDropped || last.Object != nil {
			t.Errorf("the big write: %+v", last.ID)
		}
		n, err := ws.PruneWrites(ctx, w0.Add(120*time.Second))
		if err != nil || n != 69 {
			t.Errorf("PruneWrites: %d, %v; want the 69 writes of seconds 51-119", n, err)
		}
		if st, _ := ws.WriteStats(ctx); st.Writes != 31 || st.PrunedForAge != 69 || !st.Oldest.Equal(w0.Add(120*time.Second)) {
			t.Errorf("stats after pruning: %+v", st)
		}
	})
}

// TestRecordedObjectsAreCompressed: the object's bytes are not in the
// SQLite file as written (gzip), and read back whole.
func TestRecordedObjectsAreCompressed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	ws := writeStore(t, "sqlite:"+path, ledger.Options{})
	value := strings.Repeat("compress-me-", 200)
	if _, err := ws.AppendWrites(context.Background(), []ledger.Write{cmWrite("1", 1, ledger.OpCreate, "create", 201, value)}); err != nil {
		t.Fatal(err)
	}
	got := scanAll(t, ws, ledger.WriteQuery{})
	if len(got) != 1 || !bytes.Contains(got[0].Object, []byte(value)) {
		t.Fatalf("object not read back whole")
	}
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("compress-me-compress-me-")) {
			t.Errorf("%s holds the object uncompressed", filepath.Base(f))
		}
	}
}

// TestScanWritesStopsWhenAsked: an error of each or a cancelled context
// ends the scan.
func TestScanWritesStopsWhenAsked(t *testing.T) {
	ws := writeStore(t, sqliteBackend.dsn(t), ledger.Options{})
	var batch []ledger.Write
	for i := range 450 {
		batch = append(batch, cmWrite(fmt.Sprint(i), i, ledger.OpCreate, "create", 201, "v"))
	}
	if _, err := ws.AppendWrites(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	err := ws.ScanWrites(ctx, ledger.WriteQuery{}, func(*ledger.Write) error {
		if seen++; seen == 250 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen != 250 {
		t.Errorf("cancelled scan: %v after %d writes", err, seen)
	}
}

// TestCountWritesCountsTheWindow: the count the replay's progress bar
// measures against is the scan's, for a window and for no bound.
func TestCountWritesCountsTheWindow(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ws := writeStore(t, dsn, ledger.Options{})
		var batch []ledger.Write
		for i := range 30 {
			batch = append(batch, cmWrite(fmt.Sprint(i), i, ledger.OpCreate, "create", 201, "v"))
		}
		if _, err := ws.AppendWrites(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		for _, q := range []ledger.WriteQuery{{}, {Since: w0.Add(10 * time.Second), Until: w0.Add(25 * time.Second)}, {Since: w0.Add(time.Hour)}} {
			n, err := ws.CountWrites(context.Background(), q)
			if want := len(scanAll(t, ws, q)); err != nil || n != int64(want) {
				t.Errorf("CountWrites(%v..%v) = %d, %v; the scan reads %d", q.Since, q.Until, n, err, want)
			}
		}
	})
}

// TestScanWritesPagesByBytes: writes whose objects do not compress (200 KiB
// each, 40 of them, twice the byte budget of a page) are all read, in order,
// each with its object and the object before it, across the pages the byte
// budget makes.
func TestScanWritesPagesByBytes(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ws := writeStore(t, dsn, ledger.Options{})
		var batch []ledger.Write
		for i := range 40 {
			op, code := ledger.OpUpdate, 200
			if i == 0 {
				op, code = ledger.OpCreate, 201
			}
			// Random bytes as hex do not shrink below half: 100 KiB stored each.
			noise := make([]byte, 100<<10)
			for j := range noise {
				noise[j] = byte((uint64(i*len(noise)+j) * 2654435761) >> 13)
			}
			batch = append(batch, cmWrite(fmt.Sprint(i), i, op, "update", code, fmt.Sprintf("%d-%x", i, noise)))
		}
		if _, err := ws.AppendWrites(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		got := scanAll(t, ws, ledger.WriteQuery{})
		if len(got) != len(batch) {
			t.Fatalf("read %d of %d writes", len(got), len(batch))
		}
		for i, w := range got {
			if w.ID != fmt.Sprint(i) || !bytes.Equal(w.Object, batch[i].Object) {
				t.Fatalf("write %d: %s, object of %d bytes", i, w.ID, len(w.Object))
			}
			if i > 0 && !bytes.Equal(w.OldObject, batch[i-1].Object) {
				t.Fatalf("write %d: its object before is not write %d's", i, i-1)
			}
		}
	})
}

// TestSubresourcesOfAnotherKindAreNotTheObjectBefore: a write to the scale
// subresource carries a Scale (a pod's binding a Binding, its eviction an
// Eviction), not the object: it is no later write's object before, and has
// no object before of its own (upstream's would be the old Scale, never
// recorded); a status write carries the object itself and is one.
func TestSubresourcesOfAnotherKindAreNotTheObjectBefore(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ws := writeStore(t, dsn, ledger.Options{})
		write := func(id string, op, sub, apiVersion, kind, mark string) ledger.Write {
			w := cmWrite(id, len(id), op, "update", 200, "")
			w.APIGroup, w.Resource, w.Subresource, w.Name = "apps", "deployments", sub, "web"
			w.Object = fmt.Appendf(nil, `{"apiVersion":%q,"kind":%q,"metadata":{"name":"web","namespace":"team"},"spec":{"mark":%q}}`, apiVersion, kind, mark)
			return w
		}
		writes := []ledger.Write{
			write("1", ledger.OpCreate, "", "apps/v1", "Deployment", "d1"),
			write("2", ledger.OpUpdate, "scale", "autoscaling/v1", "Scale", "s1"), // before: none
			write("3", ledger.OpUpdate, "status", "apps/v1", "Deployment", "d2"),  // before: d1
			write("4", ledger.OpUpdate, "", "apps/v1", "Deployment", "d3"),        // before: d2, not s1
			write("5", ledger.OpUpdate, "scale", "autoscaling/v1", "Scale", "s2"), // before: none
			write("6", ledger.OpUpdate, "", "apps/v1", "Deployment", "d4"),        // before: d3
		}
		if _, err := ws.AppendWrites(context.Background(), writes); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"1": "", "2": "", "3": "d1", "4": "d2", "5": "", "6": "d3"}
		for _, w := range scanAll(t, ws, ledger.WriteQuery{}) {
			before := ""
			if w.OldObject != nil {
				before = string(w.OldObject)
				before = before[strings.Index(before, `"mark":"`)+8 : strings.LastIndex(before, `"}}`)]
			}
			if before != want[w.ID] {
				t.Errorf("write %s (%s): before %q, want %q", w.ID, w.Subresource, before, want[w.ID])
			}
		}
	})
}

// TestRecordedWritesKeepTheRefusalBounded: a refused write's message is
// read back, cut at MaxRefusalBytes on a rune's start.
func TestRecordedWritesKeepTheRefusalBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ws := writeStore(t, dsn, ledger.Options{})
		short := cmWrite("1", 1, ledger.OpCreate, "create", 422, "x")
		short.Refusal = `ConfigMap "cm" is invalid: data: Invalid value`
		long := cmWrite("2", 2, ledger.OpCreate, "create", 422, "x")
		long.Refusal = "a" + strings.Repeat("é", ledger.MaxRefusalBytes)
		if _, err := ws.AppendWrites(context.Background(), []ledger.Write{short, long, cmWrite("3", 3, ledger.OpCreate, "create", 201, "x")}); err != nil {
			t.Fatal(err)
		}
		got := scanAll(t, ws, ledger.WriteQuery{})
		if got[0].Refusal != short.Refusal || got[2].Refusal != "" {
			t.Errorf("refusals %q, %q", got[0].Refusal, got[2].Refusal)
		}
		if r := got[1].Refusal; len(r) != ledger.MaxRefusalBytes-1 || !strings.HasPrefix(long.Refusal, r) {
			t.Errorf("a long refusal kept as %d bytes, want %d, a prefix", len(r), ledger.MaxRefusalBytes-1)
		}
	})
}
