package testcluster

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Compact compacts the devcluster's embedded etcd at its current revision
// (physically, so the history is really gone) and returns that revision. Any
// watch that later asks the API server to resume from an older resource
// version can then only be answered with 410 Gone ("too old resource
// version"). It talks to etcd's JSON gateway, so tests need no etcd client.
func Compact(t testing.TB) int64 {
	t.Helper()
	etcd := etcdURL(t)
	var status struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	etcdCall(t, etcd+"/v3/kv/range", map[string]any{"key": "AA=="}, &status) // key "\x00": only the header matters
	rev, err := strconv.ParseInt(status.Header.Revision, 10, 64)
	if err != nil {
		t.Fatalf("etcd revision %q: %v", status.Header.Revision, err)
	}
	etcdCall(t, etcd+"/v3/kv/compaction", map[string]any{"revision": rev, "physical": true}, nil)
	return rev
}

// etcdCall posts a JSON request to etcd's gRPC gateway and decodes the answer.
func etcdCall(t testing.TB, url string, req, resp any) {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	r, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("etcd %s: %v", url, err)
	}
	defer r.Body.Close()
	raw, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("etcd %s: %s: %s", url, r.Status, raw)
	}
	if resp != nil {
		if err := json.Unmarshal(raw, resp); err != nil {
			t.Fatalf("etcd %s: %v: %s", url, err, raw)
		}
	}
}

// EtcdPut writes key straight into the devcluster's etcd, bypassing the API
// server: what another writer does while the API server is down. The API
// server reads JSON objects from etcd as well as protobuf.
func EtcdPut(t testing.TB, key string, value []byte) {
	t.Helper()
	etcdCall(t, etcdURL(t)+"/v3/kv/put", map[string]any{"key": []byte(key), "value": value}, nil)
}

// EtcdDelete deletes key straight from the devcluster's etcd.
func EtcdDelete(t testing.TB, key string) {
	t.Helper()
	etcdCall(t, etcdURL(t)+"/v3/kv/deleterange", map[string]any{"key": []byte(key)}, nil)
}

func etcdURL(t testing.TB) string {
	t.Helper()
	s := Require(t)
	if s.Etcd == "" {
		t.Fatalf("devcluster ready.json has no etcd URL (a devcluster binary older than the fault tests: run `make devcluster`)")
	}
	return s.Etcd
}
