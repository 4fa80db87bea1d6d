package kinds

import (
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestKindRegistryHalvesAgree: every kind the cache watches (kube.AllKinds)
// has a declaration here with list, detail, live row and search wiring, a
// shortcut of its own and, unless read-only, an example for its create page;
// and nothing is registered here that the cache does not watch. A kind
// registered in one half only, or half-registered, fails here.
func TestKindRegistryHalvesAgree(t *testing.T) {
	keys := map[string]kube.KindID{"h": "home"} // "g h" is the overview
	var ids []kube.KindID
	for _, k := range kube.AllKinds() {
		ids = append(ids, k.ID)
		kp, ok := byID[k.ID]
		if !ok {
			t.Errorf("%s: in kube.AllKinds but not in handlers/kinds' registry", k.ID)
			continue
		}
		if kp.ID != k.ID {
			t.Errorf("%s: entry says it is %s", k.ID, kp.ID)
		}
		if kp.List == nil || kp.Detail == nil || kp.Row == nil || kp.Objects == nil {
			t.Errorf("%s: list %t, detail %t, live row %t, search %t: every kind needs all four",
				k.ID, kp.List != nil, kp.Detail != nil, kp.Row != nil, kp.Objects != nil)
		}
		if k.Title == "" || k.Singular == "" || k.Resource == "" {
			t.Errorf("%s: titles or resource missing: %+v", k.ID, k)
		}
		if len(kp.Shortcut) != 1 {
			t.Errorf("%s: shortcut %q is not one key", k.ID, kp.Shortcut)
		} else if other, taken := keys[kp.Shortcut]; taken {
			t.Errorf("%s: shortcut g %s is %s's already", k.ID, kp.Shortcut, other)
		} else {
			keys[kp.Shortcut] = k.ID
		}
		_, hasExample, err := edit.Example(k.Singular, k.Group+"/v1")
		if err != nil {
			t.Errorf("%s: example: %v", k.ID, err)
		}
		if Editable(k.ID) != hasExample {
			t.Errorf("%s: editable %t but example %t: an editable kind's create page starts from its example in internal/edit/examples.go (keyed %q), a read-only kind has none",
				k.ID, Editable(k.ID), hasExample, k.Singular)
		}
	}
	for _, kp := range registry {
		if !slices.Contains(ids, kp.ID) {
			t.Errorf("%s: registered in handlers but not in kube.AllKinds (no informer, no status)", kp.ID)
		}
	}
	if len(registry) != len(byID) {
		t.Errorf("%d entries, %d distinct ids", len(registry), len(byID))
	}
}

// TestEveryKindListHasColumnPriorities: each registered kind's list page,
// rendered through the registry, is keyed by the kind's id (the key of its
// column priorities) and has a column that gives way in a narrow table. A
// kind whose columns are missing from internal/present/column_priority.go
// would scroll sideways in a 1280 px window; this names it.
func TestEveryKindListHasColumnPriorities(t *testing.T) {
	now := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	for _, kp := range registry {
		page, err := kp.List(noObjects{}, present.ListQuery{}, now)
		if err != nil {
			t.Errorf("%s: list: %v", kp.ID, err)
			continue
		}
		if page.KindID != string(kp.ID) {
			t.Errorf("%s: its list presenter says it lists %q: column priorities, links and live rows are keyed by the kind's id", kp.ID, page.KindID)
		}
		givesWay := slices.ContainsFunc(page.Columns, func(c model.Column) bool { return c.Priority != model.PrimaryColumn })
		if !givesWay {
			t.Errorf("%s: no column of its list gives way in a narrow table: add its columns to internal/present/column_priority.go (keyed %q)", kp.ID, kp.ID)
		}
	}
}

// noObjects is a synced cache that holds no object of any kind.
type noObjects struct{ ports.Cluster }

func (noObjects) List(kube.KindID) ([]runtime.Object, error) { return nil, nil }
func (noObjects) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) {
	return nil, nil
}
func (noObjects) FlowSchemas() ([]*flowcontrolv1.FlowSchema, error) { return nil, nil }
func (noObjects) PriorityLevels() ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
	return nil, nil
}
func (noObjects) CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) { return nil, nil }
func (noObjects) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, nil
}
func (noObjects) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, nil
}
func (noObjects) CSIDrivers() ([]*storagev1.CSIDriver, error) { return nil, nil }
