package handlers

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

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestKindRegistryHalvesAgree: every kind the cache watches (kube.AllKinds)
// has a presentation entry with list, detail, live row and search wiring, a
// shortcut of its own and, unless read-only, an example for its create page;
// and nothing is registered here that the cache does not watch. A kind
// registered in one half only, or half-registered, fails here.
func TestKindRegistryHalvesAgree(t *testing.T) {
	keys := map[string]kube.KindID{"h": "home"} // "g h" is the overview
	var ids []kube.KindID
	for _, k := range kube.AllKinds() {
		ids = append(ids, k.ID)
		kp, ok := pagesByKind[k.ID]
		if !ok {
			t.Errorf("%s: in kube.AllKinds but not in handlers' registeredKinds", k.ID)
			continue
		}
		if kp.id != k.ID {
			t.Errorf("%s: entry says it is %s", k.ID, kp.id)
		}
		if kp.list == nil || kp.detail == nil || kp.row == nil || kp.objects == nil {
			t.Errorf("%s: list %t, detail %t, live row %t, search/activity %t: every kind needs all four",
				k.ID, kp.list != nil, kp.detail != nil, kp.row != nil, kp.objects != nil)
		}
		if k.Title == "" || k.Singular == "" || k.Resource == "" {
			t.Errorf("%s: titles or resource missing: %+v", k.ID, k)
		}
		if len(kp.shortcut) != 1 {
			t.Errorf("%s: shortcut %q is not one key", k.ID, kp.shortcut)
		} else if other, taken := keys[kp.shortcut]; taken {
			t.Errorf("%s: shortcut g %s is %s's already", k.ID, kp.shortcut, other)
		} else {
			keys[kp.shortcut] = k.ID
		}
		_, hasExample, err := edit.Example(k.Singular, k.Group+"/v1")
		if err != nil {
			t.Errorf("%s: example: %v", k.ID, err)
		}
		if editable(k.ID) != hasExample {
			t.Errorf("%s: editable %t but example %t: an editable kind's create page starts from its example in internal/edit/examples.go (keyed %q), a read-only kind has none",
				k.ID, editable(k.ID), hasExample, k.Singular)
		}
	}
	for _, kp := range registeredKinds {
		if !slices.Contains(ids, kp.id) {
			t.Errorf("%s: registered in handlers but not in kube.AllKinds (no informer, no status)", kp.id)
		}
	}
	if len(registeredKinds) != len(pagesByKind) {
		t.Errorf("%d entries, %d distinct ids", len(registeredKinds), len(pagesByKind))
	}
}

// TestEveryKindListHasColumnPriorities: each registered kind's list page,
// rendered through the registry, is keyed by the kind's id (the key of its
// column priorities) and has a column that gives way in a narrow table. A
// kind whose columns are missing from internal/present/column_priority.go
// would scroll sideways in a 1280 px window; this names it.
func TestEveryKindListHasColumnPriorities(t *testing.T) {
	now := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	for _, kp := range registeredKinds {
		page, err := kp.list(noObjects{}, present.ListQuery{}, now)
		if err != nil {
			t.Errorf("%s: list: %v", kp.id, err)
			continue
		}
		if page.KindID != string(kp.id) {
			t.Errorf("%s: its list presenter says it lists %q: column priorities, links and live rows are keyed by the kind's id", kp.id, page.KindID)
		}
		givesWay := slices.ContainsFunc(page.Columns, func(c model.Column) bool { return c.Priority != model.PrimaryColumn })
		if !givesWay {
			t.Errorf("%s: no column of its list gives way in a narrow table: add its columns to internal/present/column_priority.go (keyed %q)", kp.id, kp.id)
		}
	}
}

// noObjects is a synced cache that holds no object of any kind.
type noObjects struct{ Cluster }

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
