package kube

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// ObjectChange is one watch event of a cached object: Old is nil for an
// addition, New is nil for a deletion. The objects belong to the cache: read
// them, never change them.
type ObjectChange struct {
	Kind     KindID
	Old, New runtime.Object
}

// OnObject registers fn to be called with every change the informers observe
// after their initial list (objects that existed at start are not changes).
// fn runs on an informer goroutine and must not block: enqueue and return.
// Register before Run.
func (c *Cache) OnObject(fn func(ObjectChange)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objectListeners = append(c.objectListeners, fn)
}

// observeObjects feeds an informer's events to the OnObject listeners.
func (c *Cache) observeObjects(id KindID, inf cache.SharedIndexInformer) {
	c.mu.RLock()
	listeners := c.objectListeners
	c.mu.RUnlock()
	if len(listeners) == 0 {
		return
	}
	emit := func(ch ObjectChange) {
		for _, fn := range listeners {
			fn(ch)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if o, ok := obj.(runtime.Object); ok && !initial {
				emit(ObjectChange{Kind: id, New: o})
			}
		},
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(runtime.Object)
			n, ok2 := obj.(runtime.Object)
			if ok1 && ok2 {
				emit(ObjectChange{Kind: id, Old: o, New: n})
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if o, ok := obj.(runtime.Object); ok {
				emit(ObjectChange{Kind: id, Old: o})
			}
		},
	})
}
