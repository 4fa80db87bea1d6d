package approver

import "sync"

// OtherLabel is the label value of everything beyond a label's bound.
const OtherLabel = "other"

// boundedLabels hands out label values as they come and, once max distinct
// values were handed out, OtherLabel for any new one: each value is a time
// series kept for the life of the process, so a label fed by names people or
// requesters choose (policy names, signer names) must not grow without end.
type boundedLabels struct {
	max  int
	mu   sync.Mutex
	seen map[string]struct{}
}

func newBoundedLabels(max int) *boundedLabels {
	return &boundedLabels{max: max, seen: map[string]struct{}{}}
}

// Label is v while v was seen before or there is room, else OtherLabel.
func (b *boundedLabels) Label(v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max || v == OtherLabel {
		return OtherLabel
	}
	b.seen[v] = struct{}{}
	return v
}
