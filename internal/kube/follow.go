package kube

import (
	"time"

	"k8s.io/client-go/tools/cache"
)

// policyCRDName is the CRD of the CSRApprovalPolicies, whose every change the
// Cache's CRD informer passes to the PolicyCache (Recheck): the kind appears
// as soon as the CRD is established and empties as soon as it is deleted,
// not at the next periodic recheck.
var policyCRDName = CSRApprovalPolicyResource.Resource + "." + CSRApprovalPolicyResource.Group

// Policies is the cache's informer of the CSRApprovalPolicies, for what
// compiles them (csrpolicy.Set): the same watch as the registry's kind.
func (c *Cache) Policies() *PolicyCache { return c.policies }

// followPolicies makes p the source of the registry's CSRApprovalPolicies
// kind: its listers, status, change notifications and observed changes read
// p's informer, so the kind costs no second watch. Until p's first answer
// the kind is syncing (and the cache not Ready); while p has no informer (the
// CRD not installed) the kind is not served, or forbidden, as p last found.
// NewCache calls it, before either runs.
func (c *Cache) followPolicies(p *PolicyCache) {
	id := CSRApprovalPolicies
	p.follower = policyFollower{
		starting: func(inf cache.SharedIndexInformer) { c.observeObjects(id, inf) },
		// Notified by p's own handler once its generation moved.
		changed: func(name string) { c.notify(id, name) },
		synced: func(inf cache.SharedIndexInformer) {
			c.mu.Lock()
			ks := c.kinds[id]
			ks.decided, ks.informer, ks.synced = true, inf, true
			ks.state, ks.err, ks.syncedAt = StateSynced, nil, time.Now()
			c.mu.Unlock()
			c.log.Info("kube: synced", "kind", id)
			c.notify(id, "")
		},
		absent: func(state State, err error) {
			c.mu.Lock()
			ks := c.kinds[id]
			had := ks.informer != nil
			ks.decided, ks.informer, ks.synced, ks.syncedAt = true, nil, false, time.Time{}
			c.mu.Unlock()
			// setState notifies only on a change: a CRD still missing at
			// the next recheck wakes no page.
			if !c.setState(id, state, err) && had {
				c.notify(id, "")
			}
		},
		report: func(err error) { c.observe(id, err) },
	}
	c.OnChange(func(kind KindID, name string) {
		if kind == CRDs && name == policyCRDName {
			p.Recheck()
		}
	})
}
