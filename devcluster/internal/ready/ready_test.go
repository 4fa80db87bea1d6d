package ready

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteProducesTheDocumentedShape(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ready.json")
	info := Info{
		Server:      "https://127.0.0.1:6443",
		Version:     "v1.36.3",
		PID:         42,
		Kubeconfigs: map[string]string{"admin": "/a", "auditor": "/b", "approver": "/c"},
	}
	if err := Write(path, info); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"server", "version", "pid", "kubeconfigs"} {
		if _, ok := got[key]; !ok {
			t.Errorf("ready.json lacks %q: %s", key, data)
		}
	}
	if len(got) != 4 {
		t.Errorf("ready.json has %d keys, want 4: %s", len(got), data)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("temporary file left behind: %v", entries)
	}
	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}
