package attention

import (
	"errors"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Cluster is the part of kube.Cache the kept findings read; a kube.Cache
// also reports changes (OnChange), which keeps them per change.
type Cluster interface {
	CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error)
	CRD(name string) (*apiextensionsv1.CustomResourceDefinition, error)
	Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error)
	Webhook(name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error)
	MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error)
	MutatingWebhook(name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error)
}

// Sources is one server's kept findings: CRD drift and webhook
// configurations' danger lints and webhooks, each judged once per change of
// its object. Build it once per server (it follows the cache from then on).
type Sources struct {
	crds                 *Kept[Drift]
	validating, mutating *Kept[webhookFacts]

	mu sync.Mutex
	// stormsOf is the storm index the largest storms were picked from:
	// picked again only when the queue rebuilt it (after a CSR change).
	stormsOf   *csrqueue.Storms
	stormsAt   uint64 // its Version then
	storms     []*csrqueue.Storm
	stormCount int
	byHook     map[apfload.WebhookKey][]HookRef // every configured webhook, by its metrics name
	danger     map[string]Dangerous             // configKey → danger lints
}

// webhookFacts is what is kept of one webhook configuration.
type webhookFacts struct {
	hooks  []HookRef
	danger Dangerous
	risky  bool
}

// NewSources follows cl's CRDs and webhook configurations; now is the
// clock the CA expiry lints read when a configuration is judged.
func NewSources(cl Cluster, now func() time.Time) *Sources {
	s := &Sources{byHook: map[apfload.WebhookKey][]HookRef{}, danger: map[string]Dangerous{}}
	s.crds = newKept(cl, kube.CRDs, func() ([]string, error) {
		items, err := cl.CRDs()
		return namesOf(items, err, func(c *apiextensionsv1.CustomResourceDefinition) string { return c.Name })
	}, func(name string) (Drift, bool, error) {
		c, err := cl.CRD(name)
		if err != nil {
			return Drift{}, false, err
		}
		d, ok := DriftOf(c)
		return d, ok, nil
	})
	lint := func(cfg admission.Config, h admission.Hook) []admission.Finding { return admission.Lint(cfg, h, now()) }
	webhooks := func(kind kube.KindID, cfg admission.Config) (webhookFacts, bool, error) {
		f := webhookFacts{}
		for _, h := range cfg.Hooks {
			f.hooks = append(f.hooks, HookRef{Kind: kind, Config: cfg.Name, Hook: h})
		}
		f.danger, f.risky = DangerOf(kind, cfg, lint)
		return f, len(f.hooks) > 0 || f.risky, nil
	}
	s.validating = newKept(cl, kube.Webhooks, func() ([]string, error) {
		items, err := cl.Webhooks()
		return namesOf(items, err, func(c *admissionregistrationv1.ValidatingWebhookConfiguration) string { return c.Name })
	}, func(name string) (webhookFacts, bool, error) {
		c, err := cl.Webhook(name)
		if err != nil {
			return webhookFacts{}, false, err
		}
		return webhooks(kube.Webhooks, admission.FromValidating(c))
	})
	s.mutating = newKept(cl, kube.MutatingWebhooks, func() ([]string, error) {
		items, err := cl.MutatingWebhooks()
		return namesOf(items, err, func(c *admissionregistrationv1.MutatingWebhookConfiguration) string { return c.Name })
	}, func(name string) (webhookFacts, bool, error) {
		c, err := cl.MutatingWebhook(name)
		if err != nil {
			return webhookFacts{}, false, err
		}
		return webhooks(kube.MutatingWebhooks, admission.FromMutating(c))
	})
	s.validating.changed = s.webhookChanged(kube.Webhooks)
	s.mutating.changed = s.webhookChanged(kube.MutatingWebhooks)
	return s
}

func namesOf[T any](items []T, err error, name func(T) string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out, nil
}

// webhookChanged keeps byHook and danger in step with one kind's kept facts
// (called under that Kept's lock).
func (s *Sources) webhookChanged(kind kube.KindID) func(string, webhookFacts, bool, webhookFacts, bool) {
	return func(name string, old webhookFacts, had bool, cur webhookFacts, has bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if had {
			for _, r := range old.hooks {
				k := r.healthKey()
				refs := s.byHook[k][:0:0]
				for _, x := range s.byHook[k] {
					if x.Kind != kind || x.Config != name {
						refs = append(refs, x)
					}
				}
				if len(refs) == 0 {
					delete(s.byHook, k)
				} else {
					s.byHook[k] = refs
				}
			}
			delete(s.danger, configKey(kind, name))
		}
		if has {
			for _, r := range cur.hooks {
				s.byHook[r.healthKey()] = append(s.byHook[r.healthKey()], r)
			}
			if cur.risky {
				s.danger[configKey(kind, name)] = cur.danger
			}
		}
	}
}

// Facts is what one computation of the items reads besides the kept
// findings: the queue's storm index, whether nobody in particular may
// approve a signer (GapOf; nil: not known), the sampler's load (nil: not shown or not read), and the
// rejecting levels (RejectingOf the load, or the per-instance sampler's).
type Facts struct {
	Storms    *csrqueue.Storms
	Gap       func(signer string) (Severity, bool)
	Load      *apfload.Load
	Rejecting []Rejecting
	Statuses  []kube.KindStatus
	Now       time.Time
	// Read says which kinds' kept findings to read: those some reader may
	// list (and the cache holds), so no other kind is read at all.
	Read func(kube.KindID) bool
}

// Items computes every item from f and the kept findings, for every user:
// Visible then keeps what one user may list. A kind whose cache cannot be
// read (not synced, forbidden to the console) gives no item; its status
// says why.
func (s *Sources) Items(f Facts) []Item {
	var out []Item
	add := func(it Item, ok bool) {
		if ok {
			out = append(out, it)
		}
	}
	signers := f.Storms.Signers()
	add(Pending(signers, f.Now))
	top, count := s.topStorms(f.Storms)
	add(Storms(top, count, f.Now))
	add(Unapproved(signers, f.Gap, f.Now))
	read := func(k kube.KindID) bool { return f.Read != nil && f.Read(k) }
	out = append(out, s.lints(read(kube.Webhooks), read(kube.MutatingWebhooks))...) // first: it brings the webhooks Failing looks up to the cache
	if f.Load != nil {
		out = append(out, Failing(*f.Load, s.hooksOf)...)
		add(Levels(f.Rejecting))
	}
	if read(kube.CRDs) {
		add(s.drift())
	}
	out = append(out, Watches(f.Statuses, f.Now)...)
	return out
}

// errSkipped marks a kind not read.
var errSkipped = errors.New("not read")

// topStorms are the largest storms of storms and how many there are.
func (s *Sources) topStorms(storms *csrqueue.Storms) ([]*csrqueue.Storm, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The index is kept per change (one pointer): its version says when
	// the storms changed.
	if v := storms.Version(); storms != s.stormsOf || v != s.stormsAt {
		s.stormsOf, s.stormsAt, s.storms, s.stormCount = storms, v, TopStorms(storms.All()), storms.Len()
	}
	return s.storms, s.stormCount
}

// hooksOf is the configured webhooks a metrics key names (after a Sync).
func (s *Sources) hooksOf(k apfload.WebhookKey) []HookRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byHook[k]
}

func (s *Sources) lints(validating, mutating bool) []Item {
	vErr, mErr := errSkipped, errSkipped
	if validating {
		vErr = s.validating.Sync()
	}
	if mutating {
		mErr = s.mutating.Sync()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	danger := s.danger
	if vErr != nil || mErr != nil { // keep only the kinds read now
		danger = map[string]Dangerous{}
		for k, d := range s.danger {
			if (d.Kind == kube.Webhooks && vErr == nil) || (d.Kind == kube.MutatingWebhooks && mErr == nil) {
				danger[k] = d
			}
		}
	}
	return Lints(danger)
}

func (s *Sources) drift() (Item, bool) {
	drifted := map[string]Drift{}
	if err := s.crds.Each(func(name string, d Drift) { drifted[name] = d }); err != nil {
		return Item{}, false
	}
	return CRDs(drifted)
}
