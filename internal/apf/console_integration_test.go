//go:build integration

package apf_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// consoleView returns the FlowSchemas and priority levels as the console sees
// them: through kube.Cache's informers at the served version, converted to v1
// when the server serves only v1beta3 (Kubernetes 1.28). It waits until the
// cache holds the same objects as want, the apiserver's own list: the same
// names, UIDs and generations (so the same specs; a status update by the
// apiserver's APF controller does not count).
func consoleView(ctx context.Context, t *testing.T, cfg *rest.Config, want []*flowcontrolv1.FlowSchema, wantLevels []*flowcontrolv1.PriorityLevelConfiguration) ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration) {
	t.Helper()
	c, err := kube.NewCache(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go c.Run(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		schemas, errFS := c.FlowSchemas()
		levels, errPL := c.PriorityLevels()
		if errFS == nil && errPL == nil && sameObjects(schemas, want) && sameObjects(levels, wantLevels) {
			k, _ := c.Kind(kube.FlowSchemas)
			t.Logf("console cache: flowcontrol %s, %d FlowSchemas, %d priority levels", k.Version, len(schemas), len(levels))
			return schemas, levels
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console's cache does not hold the apiserver's FlowSchemas and priority levels after 30 s (errors %v, %v; states %+v)", errFS, errPL, c.Statuses())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sameObjects[T interface {
	*flowcontrolv1.FlowSchema | *flowcontrolv1.PriorityLevelConfiguration
	GetName() string
	GetUID() types.UID
	GetGeneration() int64
}](got, want []T) bool {
	key := func(o T) string { return fmt.Sprintf("%s/%s/%d", o.GetName(), o.GetUID(), o.GetGeneration()) }
	a, b := make([]string, 0, len(got)), make([]string, 0, len(want))
	for _, o := range got {
		a = append(a, key(o))
	}
	for _, o := range want {
		b = append(b, key(o))
	}
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
