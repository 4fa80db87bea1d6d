package approver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// The leader says on its Lease what only it knows and the console's pending
// reasons need (csrwhy.AnnotationDryRun, AnnotationRefused): whether it runs
// in dry run, and the signers the API server refused it. It writes them when
// it starts leading and when the refused signers change, with a merge patch
// of the annotations alone: leader election's next renewal, which updates
// the Lease it last read, meets a 409 once and reads it again (client-go's
// leaderelection falls back to a GET), so the two writers never lose each
// other's fields.

// publishStatus writes the annotations on the Lease (ns/name); errors are
// logged, the reasons are advisory.
func (a *Approver) publishStatus(ctx context.Context, ns, name string) {
	refused := a.ctrl.refusedSigners()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		csrwhy.AnnotationDryRun:  map[bool]string{true: "true", false: "false"}[a.cfg.DryRun],
		csrwhy.AnnotationRefused: strings.Join(refused, ","),
	}}})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := a.client.CoordinationV1().Leases(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		a.cfg.Log.Warn("approver: cannot write its state on its Lease; the console's pending reasons may lag", "err", err)
	}
}

// refusedSigners are the signers refused now, sorted.
func (c *Controller) refusedSigners() []string {
	c.why.mu.Lock()
	defer c.why.mu.Unlock()
	out := make([]string, 0, len(c.why.refused))
	for s := range c.why.refused {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
