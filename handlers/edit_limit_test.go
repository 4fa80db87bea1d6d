package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEditorRoutesTakeLargerBodies: the editor's routes accept bodies up to
// editorBody (6 MiB), every other route keeps maxBody (1 MiB); over the limit
// is a 413 naming the route's limit, also for a chunked body. The console has
// no cluster here, so a body that passes the limit ends in the handler's 404
// (no such kind): what matters is that it is not a 413.
func TestEditorRoutesTakeLargerBodies(t *testing.T) {
	ts := newTestServer(t, false)
	sess := ts.login(t)
	srv := httptest.NewServer(ts.e)
	t.Cleanup(srv.Close)

	const editorLimit = 6 << 20
	if editorBodyBytes != editorLimit || bodyLimitFor("/:kind/:name/apply") != "6MiB" {
		t.Fatalf("editorBody %q / editorBodyBytes %d disagree with this test", editorBody, editorBodyBytes)
	}
	for _, tt := range []struct {
		name, path string
		size       int
		chunked    bool
		want       int
		says       string
	}{
		{"editor preview, 3 MiB", "/csidrivers/x/preview", 3 << 20, false, http.StatusNotFound, ""},
		{"editor apply, exactly 6 MiB", "/csidrivers/x/apply", editorLimit, false, http.StatusNotFound, ""},
		{"editor apply, 6 MiB + 1", "/csidrivers/x/apply", editorLimit + 1, false, http.StatusRequestEntityTooLarge, "larger than 6MiB"},
		{"editor create, 7 MiB chunked", "/csidrivers/create", 7 << 20, true, http.StatusRequestEntityTooLarge, "larger than 6MiB"},
		{"custom resource apply, 5 MiB chunked", "/crds/a.b/instances/ns/o/apply", 5 << 20, true, http.StatusNotFound, ""},
		{"custom resource preview, 6 MiB + 1", "/crds/a.b/instances/ns/o/preview", editorLimit + 1, false, http.StatusRequestEntityTooLarge, "larger than 6MiB"},
		{"another route keeps 1 MiB", "/csrs/x/approve", 1<<20 + 1, false, http.StatusRequestEntityTooLarge, "larger than 1MiB"},
		{"the delete form keeps 1 MiB", "/csidrivers/x/delete", 2 << 20, false, http.StatusRequestEntityTooLarge, "larger than 1MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "yaml="
			var body io.Reader = strings.NewReader(prefix + strings.Repeat("x", tt.size-len(prefix)))
			if tt.chunked {
				body = io.MultiReader(body)
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("X-CSRF-Token", pageCSRFToken(t, ts.e, withCookie(sess)))
			req.AddCookie(sess)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !strings.Contains(string(got), tt.says) {
				t.Errorf("status %d, want %d saying %q: %.200s", resp.StatusCode, tt.want, tt.says, got)
			}
		})
	}
}

func TestEditorRouteMustBeListed(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("editorRoute accepted a route that is not in editorBodyRoutes")
		}
	}()
	editorRoute("/:kind/:name/somewhere")
}
