package admission

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tallyMemoSize bounds the remembered tallies: an entry is a key and two
// ints (~200 bytes), so 16,384 entries are ~3 MiB, room for every webhook
// configuration and CRD of a large cluster, twice over (the hour turning).
const tallyMemoSize = 16384

// tallyMemo remembers each object version's tally for the list pages.
// Linting is cheap except for caBundles: parsing every certificate of 2,000
// webhook configurations on every view of the list took seconds
// (BenchmarkWebhookListLints in internal/present). An object's findings
// change only with its resourceVersion, or with time through certificate
// expiry, which the lints judge by the day (expired, expiring within 30
// days): tallies are remembered per hour, so a list is at most an hour
// behind an expiry, and the detail page is never behind. It lives here,
// beside the lints and the caBundle parsing it spares, for every list that
// counts them.
var tallyMemo = func() *lru.Cache[tallyMemoKey, Tally] {
	c, err := lru.New[tallyMemoKey, Tally](tallyMemoSize)
	if err != nil {
		panic(err) // only for a size <= 0
	}
	return c
}()

type tallyMemoKey struct {
	kind, name, uid, resourceVersion string
	hour                             int64
}

// ListTally returns tally() for o (of kind, the list's kind id) at now,
// remembered per object version and hour. Objects without a
// resourceVersion (built in tests) are never remembered.
func ListTally(kind string, o metav1.Object, now time.Time, tally func() Tally) Tally {
	rv := o.GetResourceVersion()
	if rv == "" {
		return tally()
	}
	key := tallyMemoKey{kind: kind, name: o.GetName(), uid: string(o.GetUID()), resourceVersion: rv, hour: now.Unix() / 3600}
	if c, ok := tallyMemo.Get(key); ok {
		return c
	}
	c := tally()
	tallyMemo.Add(key, c)
	return c
}

// ForgetTallies empties the memo (benchmarks of a cold list).
func ForgetTallies() { tallyMemo.Purge() }
