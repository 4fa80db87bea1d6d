package ledger

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestSlotsRoundTrip: a packed minute decodes to the seconds encoded,
// extreme and negative numbers included, and a damaged blob is an error,
// not seconds made up.
func TestSlotsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 11))
	for range 200 {
		var in []slot
		for off := int64(0); off < 60; off++ {
			if r.IntN(3) == 0 {
				continue
			}
			in = append(in, slot{off: off, requests: r.Int64N(1 << 40), rejected: r.Int64N(100), latSum: r.Int64() - 1<<62,
				latMax: r.Int64(), apfWait: -r.Int64N(1000), servedSum: r.Int64N(1 << 50), servedMin: r.Int64N(3)})
		}
		blob := encodeSlots(nil, in)
		out, err := decodeSlots(nil, blob)
		if err != nil || (len(in) > 0 || len(out) > 0) && !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip: %v\nin  %+v\nout %+v", err, in, out)
		}
		if len(blob) > 1 {
			if _, err := decodeSlots(nil, blob[:len(blob)-1]); err == nil {
				t.Fatalf("a truncated blob decoded")
			}
		}
	}
	if _, err := decodeSlots(nil, []byte{2}); err == nil {
		t.Error("an unknown version decoded")
	}
	if _, err := decodeSlots(nil, []byte{slotsVersion, 61}); err == nil {
		t.Error("a second past the minute decoded")
	}
}

// TestMergeSlotsAddsAsTheUpsertDoes: seconds in both are added (sums,
// largest maximum, smallest positive served minimum), the others kept,
// in order.
func TestMergeSlotsAddsAsTheUpsertDoes(t *testing.T) {
	a := []slot{{off: 1, requests: 2, latMax: 5, servedMin: 0}, {off: 5, requests: 1, latMax: 9, servedMin: 4}}
	b := []slot{{off: 0, requests: 1}, {off: 1, requests: 3, latMax: 7, servedMin: 3}, {off: 5, requests: 1, latMax: 1, servedMin: 0}}
	got := mergeSlots(a, b)
	want := []slot{{off: 0, requests: 1}, {off: 1, requests: 5, latMax: 7, servedMin: 3}, {off: 5, requests: 2, latMax: 9, servedMin: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %+v, want %+v", got, want)
	}
}
