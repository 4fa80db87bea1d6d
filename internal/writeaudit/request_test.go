package writeaudit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestRecordNamesTheRequestsUser: a write is recorded under the identity its
// request's context carries (the sign-in middleware puts it there), and only
// without one under the console's own name; the trail reads no HTTP.
func TestRecordNamesTheRequestsUser(t *testing.T) {
	for _, tt := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"signed in", kube.WithIdentity(context.Background(), kube.Identity{User: "alice", Groups: []string{"team"}}), "alice"},
		{"identity without a name", kube.WithIdentity(context.Background(), kube.Identity{}), "console"},
		{"no identity", context.Background(), "console"},
	} {
		var buf bytes.Buffer
		trail := &Trail{Log: slog.New(slog.NewJSONHandler(&buf, nil)), User: "console"}
		trail.For(tt.ctx).Record(editing.Write{Verb: "update", Kind: "FlowSchema", Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas", Name: "fs"})
		var line struct {
			Msg, Who, Verb, Name string
		}
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("%s: the log line %q: %v", tt.name, buf.String(), err)
		}
		if line.Msg != "write" || line.Who != tt.want || line.Verb != "update" || line.Name != "fs" {
			t.Errorf("%s: logged %+v, want a write of fs by %q", tt.name, line, tt.want)
		}
	}
}
