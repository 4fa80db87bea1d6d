package live

import (
	"time"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrQueueRows renders, once for every open CSR queue, the queue rows of the
// changed CSRs and the state tabs' counts (the queue's rows are its own, not
// the generic list's). ok is false when the cache cannot say (not synced).
func (l *Updates) csrQueueRows(names []string, now time.Time) (live.Message, bool) {
	ch, err := l.csrQueue.Live(names, csrqueue.Env{Now: now, Words: present.CSRQueueWords{}})
	if err != nil {
		return live.Message{}, false
	}
	u := present.CSRQueueLiveOf(ch, present.CSRQueueEnv{Now: now})
	return live.Message{Topic: RowsTopic(kube.CSRs), Event: RowsTopic(kube.CSRs), Data: mustRender(pages.CSRQueueLiveRows(u))}, true
}
