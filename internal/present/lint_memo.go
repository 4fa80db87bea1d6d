package present

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lintMemoSize bounds the remembered lint counts: an entry is a key and two
// ints (~200 bytes), so 16,384 entries are ~3 MiB, room for every webhook
// configuration and CRD of a large cluster, twice over (the hour turning).
const lintMemoSize = 16384

// lintMemo remembers each object version's lint counts for the list pages.
// Linting is cheap except for caBundles: parsing every certificate of 2,000
// webhook configurations on every view of the list took seconds
// (BenchmarkWebhookListLints). An object's findings change only with its
// resourceVersion, or with time through certificate expiry, which the lints
// judge by the day (expired, expiring within 30 days): counts are
// remembered per hour, so a list is at most an hour behind an expiry, and
// the detail page is never behind.
var lintMemo = func() *lru.Cache[lintMemoKey, lintCounts] {
	c, err := lru.New[lintMemoKey, lintCounts](lintMemoSize)
	if err != nil {
		panic(err) // only for a size <= 0
	}
	return c
}()

type lintMemoKey struct {
	kind, name, uid, resourceVersion string
	hour                             int64
}

// memoLints returns lint() for o at now, remembered per object version and
// hour. Objects without a resourceVersion (built in tests) are never
// remembered.
func memoLints(kind string, o metav1.Object, now time.Time, lint func() lintCounts) lintCounts {
	rv := o.GetResourceVersion()
	if rv == "" {
		return lint()
	}
	key := lintMemoKey{kind: kind, name: o.GetName(), uid: string(o.GetUID()), resourceVersion: rv, hour: now.Unix() / 3600}
	if c, ok := lintMemo.Get(key); ok {
		return c
	}
	c := lint()
	lintMemo.Add(key, c)
	return c
}
