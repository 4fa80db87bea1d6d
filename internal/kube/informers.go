package kube

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// newInformer returns the (not yet started) informer of k at its served version.
// report receives the outcome of every LIST and WATCH request the informer makes.
func (c *Cache) newInformer(k Kind, report func(error)) cache.SharedIndexInformer {
	var lw cache.ListerWatcher
	var obj runtime.Object
	switch gv := k.ID + "/" + KindID(k.Version); gv {
	case CSRs + "/v1":
		lw = listWatch[*certificatesv1.CertificateSigningRequestList](c.k8s.CertificatesV1().CertificateSigningRequests(), report)
		obj = &certificatesv1.CertificateSigningRequest{}
	case FlowSchemas + "/v1":
		lw = listWatch[*flowcontrolv1.FlowSchemaList](c.k8s.FlowcontrolV1().FlowSchemas(), report)
		obj = &flowcontrolv1.FlowSchema{}
	case FlowSchemas + "/v1beta3":
		lw = listWatch[*flowcontrolv1beta3.FlowSchemaList](c.k8s.FlowcontrolV1beta3().FlowSchemas(), report)
		obj = &flowcontrolv1beta3.FlowSchema{}
	case PriorityLevels + "/v1":
		lw = listWatch[*flowcontrolv1.PriorityLevelConfigurationList](c.k8s.FlowcontrolV1().PriorityLevelConfigurations(), report)
		obj = &flowcontrolv1.PriorityLevelConfiguration{}
	case PriorityLevels + "/v1beta3":
		lw = listWatch[*flowcontrolv1beta3.PriorityLevelConfigurationList](c.k8s.FlowcontrolV1beta3().PriorityLevelConfigurations(), report)
		obj = &flowcontrolv1beta3.PriorityLevelConfiguration{}
	case CRDs + "/v1":
		lw = listWatch[*apiextensionsv1.CustomResourceDefinitionList](pagedCRDs{
			client: c.ext.ApiextensionsV1().CustomResourceDefinitions(), transform: Transform(c.schemas)}, report)
		obj = &apiextensionsv1.CustomResourceDefinition{}
	case Webhooks + "/v1":
		lw = listWatch[*admissionregistrationv1.ValidatingWebhookConfigurationList](c.k8s.AdmissionregistrationV1().ValidatingWebhookConfigurations(), report)
		obj = &admissionregistrationv1.ValidatingWebhookConfiguration{}
	case MutatingWebhooks + "/v1":
		lw = listWatch[*admissionregistrationv1.MutatingWebhookConfigurationList](c.k8s.AdmissionregistrationV1().MutatingWebhookConfigurations(), report)
		obj = &admissionregistrationv1.MutatingWebhookConfiguration{}
	case CSIDrivers + "/v1":
		lw = listWatch[*storagev1.CSIDriverList](c.k8s.StorageV1().CSIDrivers(), report)
		obj = &storagev1.CSIDriver{}
	default:
		// candidateVersions and this switch must agree; a mismatch is a programming error.
		panic(fmt.Sprintf("kube: no informer for %s", gv))
	}
	// No resync: nothing here reconciles, so periodic replays of the store would only
	// wake the live hub for nothing.
	inf := cache.NewSharedIndexInformerWithOptions(lw, obj, cache.SharedIndexInformerOptions{ObjectDescription: k.Singular})
	// What no page uses stays out of the cache, and CRD schemas stay packed
	// (see Transform). SetTransform fails only on a started informer, and this
	// one is new.
	if err := inf.SetTransform(Transform(c.schemas)); err != nil {
		panic(fmt.Sprintf("kube: %s informer: %v", k.ID, err))
	}
	return inf
}

// listWatchClient is the part of a generated typed client an informer needs.
type listWatchClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// listWatch adapts a typed client to an informer, reporting each request's outcome.
// While the API server cannot be reached, requests are retried at a quicker pace
// than the reflector's backoff (untilReachable).
//
// It opts out of client-go's WatchListClient feature (on by default since v0.35: the
// initial list is streamed as a WATCH with sendInitialEvents=true). API servers whose
// WatchList feature gate is off, 1.28 among them, refuse that request
// ("sendInitialEvents is forbidden for watch unless the WatchList feature gate is
// enabled", kubernetes#135583). The reflector does fall back to a plain LIST after any
// watch-list error (kubernetes#120984; #135591 lowered that log to V(4)), but then every
// (re)list against such a server starts with a refused request, and the requests, hence
// the errors Status reports, differ by server version. These collections hold tens or
// hundreds of objects, so streaming them saves nothing. The opt-out is per informer,
// through the interface the reflector consults
// (watchlist.DoesClientNotSupportWatchListSemantics, also used in-tree by the
// apiserver's cacher), not the process-wide gate (KUBE_FEATURE_WatchListClient=false or
// features.ReplaceFeatureGates), which belongs to the binary, not to a library.
func listWatch[L runtime.Object](c listWatchClient[L], report func(error)) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := untilReachable(ctx, func() (L, error) { return c.List(ctx, opts) }, report)
			report(err)
			if err != nil {
				return nil, err // not list: a typed nil pointer would be a non-nil runtime.Object
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := untilReachable(ctx, func() (watch.Interface, error) { return c.Watch(ctx, opts) }, report)
			report(err)
			return w, err
		},
	}, noWatchList{})
}

// noWatchList tells the reflector not to use watch-list requests; see listWatch.
type noWatchList struct{}

// IsWatchListSemanticsUnSupported is the method the reflector looks for.
func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
