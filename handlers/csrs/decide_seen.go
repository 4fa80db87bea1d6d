package csrs

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/present"
)

// decisionWait bounds how long a decision's redirect waits for the cache to
// show it (decisionSeen): the watch event comes within milliseconds on a
// quiet API server, and a busy one must not hold the person's click for long.
const decisionWait = 3 * time.Second

// decisionSeen waits until the cache shows the decision just written on
// after's request, so that the CSR's page the person is sent to says Approved
// or Denied, not Pending with a toast saying the opposite (pages read the
// cache, which the watch fills a moment after the write; under load the
// redirect's GET came first, and the detail page only offers a Reload for a
// change). Done when the cached request is decided (a decision is never
// taken back), is another request or is gone, or holds the written version;
// or when limit passes or ctx ends, when the page shows what the cache has.
// Polling every few milliseconds reads a map: nothing to subscribe to for one
// request's few hundred milliseconds.
func decisionSeen(ctx context.Context, read func(name string) (*certificatesv1.CertificateSigningRequest, error),
	after *certificatesv1.CertificateSigningRequest, every, limit time.Duration) bool {
	if after == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cur, err := read(after.Name)
		if err != nil || cur.UID != after.UID || cur.ResourceVersion == after.ResourceVersion || present.CSRDecided(cur) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
