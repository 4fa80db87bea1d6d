package kube

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// fakeAPI is just enough of an old (1.28-like) API server for the Cache: discovery,
// SelfSubjectAccessReviews, and LIST and WATCH of the console's kinds. Like a 1.28
// server without the WatchList gate, it refuses watch-list requests, and counts them.
// Watches stay open without events until the test kicks them.
type fakeAPI struct {
	version string
	groups  map[string][]string // group → served versions, preferred first
	denied  map[string]bool     // resources whose list/watch access reviews say no
	items   map[string][]any    // resource → objects in LIST responses

	mu             sync.Mutex
	failing        map[string]bool // resources whose LIST and WATCH answer 503
	watchListTries int
	kick           chan struct{} // closed to end every open watch
	watchesStarted map[string]int
}

func newFakeAPI(t *testing.T, f *fakeAPI) *rest.Config {
	t.Helper()
	f.failing, f.watchesStarted, f.kick = map[string]bool{}, map[string]int{}, make(chan struct{})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// kickWatches ends every open watch, as an API server restart or a proxy would.
func (f *fakeAPI) kickWatches() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.kick)
	f.kick = make(chan struct{})
}

func (f *fakeAPI) watches(resource string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watchesStarted[resource]
}

func (f *fakeAPI) setFailing(resource string, failing bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing[resource] = failing
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/version":
		writeJSON(w, map[string]string{"gitVersion": f.version})
	case r.URL.Path == "/api":
		writeJSON(w, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case r.URL.Path == "/apis":
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for name, versions := range f.groups {
			g := metav1.APIGroup{Name: name}
			for _, v := range versions {
				g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
			}
			g.PreferredVersion = g.Versions[0]
			list.Groups = append(list.Groups, g)
		}
		writeJSON(w, list)
	case r.Method == http.MethodPost && r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
		// client-go sends built-in types as protobuf; the universal deserializer reads either.
		body, _ := io.ReadAll(r.Body)
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		review := obj.(*authorizationv1.SelfSubjectAccessReview)
		review.Status.Allowed = !f.denied[review.Spec.ResourceAttributes.Resource]
		writeJSON(w, review)
	case len(parts) == 4 && parts[0] == "apis" && r.Method == http.MethodGet:
		f.serveCollection(w, r, parts[1], parts[2], parts[3])
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAPI) serveCollection(w http.ResponseWriter, r *http.Request, group, version, resource string) {
	q := r.URL.Query()
	if version == "v1beta3" {
		w.Header().Set("Warning", `299 - "flowcontrol.apiserver.k8s.io/v1beta3 `+resource+` is deprecated"`)
	}
	watchList := q.Has("sendInitialEvents")
	f.mu.Lock()
	failing, kick := f.failing[resource], f.kick
	if watchList {
		f.watchListTries++
	}
	f.mu.Unlock()
	switch {
	case watchList:
		writeStatus(w, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", nil).Status(),
			"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")
	case failing:
		writeStatus(w, apierrors.NewServiceUnavailable("etcd is unavailable").Status(), "")
	case q.Get("watch") == "true":
		f.mu.Lock()
		f.watchesStarted[resource]++
		f.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-kick:
		}
	default:
		kind := ""
		for _, k := range AllKinds() {
			if k.Resource == resource {
				kind = k.Singular
			}
		}
		items := f.items[resource]
		if items == nil {
			items = []any{}
		}
		writeJSON(w, map[string]any{
			"apiVersion": group + "/" + version, "kind": kind + "List",
			"metadata": map[string]string{"resourceVersion": "10"}, "items": items,
		})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(fmt.Sprintf("fake API server: %v", err))
	}
}

func writeStatus(w http.ResponseWriter, st metav1.Status, message string) {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if message != "" {
		st.Message = message
	}
	w.WriteHeader(int(st.Code))
	writeJSON(w, st)
}
