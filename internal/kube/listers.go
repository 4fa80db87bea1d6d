package kube

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// The listers below return the cache's own objects, sorted by name, with an empty
// TypeMeta: callers must not modify them (DeepCopy first). Before the kind's first
// sync they return a *NotSyncedError (errors.Is(err, ErrNotSynced)); for a kind the
// cache may not read, the Forbidden API error; for one the server does not serve, an
// error wrapping ErrNotServed. The single-object getters return a NotFound API error
// for a missing name. FlowSchemas and PriorityLevels are always flowcontrol v1 types,
// converted from v1beta3 on servers that serve only that (fresh objects each call).

// CSRs returns every CertificateSigningRequest.
func (c *Cache) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) {
	return list[*certificatesv1.CertificateSigningRequest](c, CSRs)
}

// CSR returns one CertificateSigningRequest.
func (c *Cache) CSR(name string) (*certificatesv1.CertificateSigningRequest, error) {
	return get[*certificatesv1.CertificateSigningRequest](c, CSRs, name)
}

// CRDs returns every CustomResourceDefinition. Each version's openAPIV3Schema
// is a stub (IsSchemaStub): the cache keeps schemas packed (CRDSchemas).
func (c *Cache) CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return list[*apiextensionsv1.CustomResourceDefinition](c, CRDs)
}

// CRD returns one CustomResourceDefinition, its schemas stubs as in CRDs: for
// what needs no schema (names, scope, versions, status).
func (c *Cache) CRD(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	return get[*apiextensionsv1.CustomResourceDefinition](c, CRDs, name)
}

// CRDWithSchemas returns a deep copy of one CustomResourceDefinition with
// every version's schema decoded, for the pages that show schemas. It costs
// the decoding of those schemas (milliseconds to tens of milliseconds for
// the largest real CRDs): call it once per page view, not per row.
func (c *Cache) CRDWithSchemas(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd, err := c.CRD(name)
	if err != nil {
		return nil, err
	}
	return c.schemas.Unpack(crd)
}

// CSIDrivers returns every CSIDriver.
func (c *Cache) CSIDrivers() ([]*storagev1.CSIDriver, error) {
	return list[*storagev1.CSIDriver](c, CSIDrivers)
}

// CSIDriver returns one CSIDriver.
func (c *Cache) CSIDriver(name string) (*storagev1.CSIDriver, error) {
	return get[*storagev1.CSIDriver](c, CSIDrivers, name)
}

// Webhooks returns every ValidatingWebhookConfiguration.
func (c *Cache) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return list[*admissionregistrationv1.ValidatingWebhookConfiguration](c, Webhooks)
}

// Webhook returns one ValidatingWebhookConfiguration.
func (c *Cache) Webhook(name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return get[*admissionregistrationv1.ValidatingWebhookConfiguration](c, Webhooks, name)
}

// MutatingWebhooks returns every MutatingWebhookConfiguration.
func (c *Cache) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return list[*admissionregistrationv1.MutatingWebhookConfiguration](c, MutatingWebhooks)
}

// MutatingWebhook returns one MutatingWebhookConfiguration.
func (c *Cache) MutatingWebhook(name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return get[*admissionregistrationv1.MutatingWebhookConfiguration](c, MutatingWebhooks, name)
}

// FlowSchemas returns every FlowSchema as a flowcontrol v1 object.
func (c *Cache) FlowSchemas() ([]*flowcontrolv1.FlowSchema, error) {
	return listAs[*flowcontrolv1.FlowSchema](c.List(FlowSchemas))
}

// FlowSchema returns one FlowSchema as a flowcontrol v1 object.
func (c *Cache) FlowSchema(name string) (*flowcontrolv1.FlowSchema, error) {
	return getAs[*flowcontrolv1.FlowSchema](c.Get(FlowSchemas, name))
}

// PriorityLevels returns every PriorityLevelConfiguration as a flowcontrol v1 object.
func (c *Cache) PriorityLevels() ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
	return listAs[*flowcontrolv1.PriorityLevelConfiguration](c.List(PriorityLevels))
}

// PriorityLevel returns one PriorityLevelConfiguration as a flowcontrol v1 object.
func (c *Cache) PriorityLevel(name string) (*flowcontrolv1.PriorityLevelConfiguration, error) {
	return getAs[*flowcontrolv1.PriorityLevelConfiguration](c.Get(PriorityLevels, name))
}

// List returns every cached object of one kind, sorted by name, as the Go type
// the typed listers return (flowcontrol v1 also where only v1beta3 is
// served): for code that handles any registered kind, so that a new kind
// needs no lister of its own.
func (c *Cache) List(id KindID) ([]runtime.Object, error) {
	objs, err := list[cached](c, id)
	if err != nil {
		return nil, err
	}
	toV1, err := c.conversion(id)
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		if toV1 == nil {
			out = append(out, o)
			continue
		}
		v, cerr := toV1(o)
		if cerr != nil {
			return nil, cerr
		}
		out = append(out, v.(runtime.Object))
	}
	return out, nil
}

// Get returns one cached object of one kind, as List does.
func (c *Cache) Get(id KindID, name string) (runtime.Object, error) {
	obj, _, err := lookup(c, id, name)
	if err != nil {
		return nil, err
	}
	toV1, err := c.conversion(id)
	if err != nil || toV1 == nil {
		return obj.(runtime.Object), err
	}
	v, err := toV1(obj)
	if err != nil {
		return nil, err
	}
	return v.(runtime.Object), nil
}

// conversion returns how a cached object of id becomes the listers' Go type
// (nil: it is that type). The version is set once, by discovery, before the
// informer exists.
func (c *Cache) conversion(id KindID) (func(any) (any, error), error) {
	k, _ := c.Kind(id)
	served, err := servedAs(k)
	return served.toV1, err
}

// listAs and getAs give List's and Get's objects their Go type.
func listAs[T runtime.Object](objs []runtime.Object, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(T))
	}
	return out, nil
}

func getAs[T runtime.Object](obj runtime.Object, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return obj.(T), nil
}

// Object returns a deep copy of one cached object as the API server served it, with
// apiVersion and kind set to the served version (flowcontrol v1beta3 stays v1beta3),
// for the YAML view and audit records. A CRD's schemas are decoded, which costs
// (see CRDWithSchemas): what needs only metadata reads Meta.
func (c *Cache) Object(id KindID, name string) (runtime.Object, error) {
	obj, k, err := lookup(c, id, name)
	if err != nil {
		return nil, err
	}
	var out runtime.Object
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		if out, err = c.schemas.Unpack(crd); err != nil {
			return nil, err
		}
	} else {
		out = obj.(runtime.Object).DeepCopyObject()
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Singular})
	return out, nil
}

// Meta returns the metadata of one cached object (uid, resourceVersion,
// managedFields): the cache's own, not a copy, so callers must not modify it.
// It costs nothing, for what polls or reads no more than that.
func (c *Cache) Meta(id KindID, name string) (metav1.Object, error) {
	obj, _, err := lookup(c, id, name)
	if err != nil {
		return nil, err
	}
	return obj.(metav1.Object), nil
}

// cached is what informers store for every kind.
type cached interface {
	runtime.Object
	metav1.Object
}

func list[T cached](c *Cache, id KindID) ([]T, error) {
	store, _, err := c.store(id)
	if err != nil {
		return nil, err
	}
	objs := store.List()
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(T))
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out, nil
}

func get[T cached](c *Cache, id KindID, name string) (T, error) {
	obj, _, err := lookup(c, id, name)
	if err != nil {
		var zero T
		return zero, err
	}
	return obj.(T), nil
}

// lookup returns the cached object id/name and its kind.
func lookup(c *Cache, id KindID, name string) (any, Kind, error) {
	store, k, err := c.store(id)
	if err != nil {
		return nil, k, err
	}
	// The store keys cluster-scoped objects by name.
	obj, ok, err := store.GetByKey(name)
	if err != nil {
		return nil, k, err
	}
	if !ok {
		return nil, k, apierrors.NewNotFound(schema.GroupResource{Group: k.Group, Resource: k.Resource}, name)
	}
	return obj, k, nil
}

// store returns the informer store of id, or the error its listers must return.
func (c *Cache) store(id KindID) (cache.Store, Kind, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ks, ok := c.kinds[id]
	switch {
	case !ok:
		return nil, Kind{}, fmt.Errorf("unknown kind %q", id)
	case ks.state == StateForbidden:
		return nil, ks.kind, ks.err
	case ks.decided && ks.informer == nil:
		return nil, ks.kind, ks.err // not served
	case !ks.synced:
		return nil, ks.kind, &NotSyncedError{Kind: id, LastErr: ks.err}
	}
	return ks.informer.GetStore(), ks.kind, nil
}
