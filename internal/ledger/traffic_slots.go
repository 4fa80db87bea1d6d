package ledger

// A packed minute (traffic_minutes, migration 00011): one series' second
// buckets of one minute in one row, its slots a compact blob. A day of a
// busy cluster is tens of millions of second buckets but a few hundred
// thousand series-minutes, and a database pays per row read.

import (
	"encoding/binary"
	"errors"
	"time"
)

// slot is one second of a packed minute: the second's offset in the
// minute and its bucket's numbers (TrafficBucket's, in nanoseconds).
type slot struct {
	off                     int64 // 0..59
	requests, rejected      int64
	latSum, latMax, apfWait int64
	servedSum, servedMin    int64
	// owner is the scan's: the index of the packed row it came from.
	owner int
}

// slotsVersion is the blob's first byte: its layout, so a later one can
// read both.
const slotsVersion = 1

// encodeSlots writes slots (ascending offsets, each once) as the version
// byte, then per slot the offset's step from the previous one and its
// seven numbers, each a zigzag varint: about 20 bytes a second for a busy
// flow instead of a 56-byte row.
func encodeSlots(dst []byte, slots []slot) []byte {
	dst = append(dst[:0], slotsVersion)
	prev := int64(-1)
	for i := range slots {
		s := &slots[i]
		dst = binary.AppendUvarint(dst, uint64(s.off-prev))
		prev = s.off
		for _, v := range [...]int64{s.requests, s.rejected, s.latSum, s.latMax, s.apfWait, s.servedSum, s.servedMin} {
			dst = binary.AppendVarint(dst, v)
		}
	}
	return dst
}

var errSlots = errors.New("ledger: traffic: a packed minute that does not decode")

// decodeSlots appends blob's slots to dst.
func decodeSlots(dst []slot, blob []byte) ([]slot, error) {
	if len(blob) == 0 || blob[0] != slotsVersion {
		return dst, errSlots
	}
	p := blob[1:]
	prev := int64(-1)
	for len(p) > 0 {
		step, n := binary.Uvarint(p)
		if n <= 0 || step == 0 || prev+int64(step) > 59 {
			return dst, errSlots
		}
		p = p[n:]
		s := slot{off: prev + int64(step)}
		prev = s.off
		for _, v := range [...]*int64{&s.requests, &s.rejected, &s.latSum, &s.latMax, &s.apfWait, &s.servedSum, &s.servedMin} {
			x, n := binary.Varint(p)
			if n <= 0 {
				return dst, errSlots
			}
			*v, p = x, p[n:]
		}
		dst = append(dst, s)
	}
	return dst, nil
}

// add folds o into s as the bucket upsert does (bucketSums): sums added,
// maximum kept, the smaller positive served minimum kept.
func (s *slot) add(o *slot) {
	s.requests += o.requests
	s.rejected += o.rejected
	s.latSum += o.latSum
	s.latMax = max(s.latMax, o.latMax)
	s.apfWait += o.apfWait
	s.servedSum += o.servedSum
	if o.servedMin > 0 && (s.servedMin <= 0 || o.servedMin < s.servedMin) {
		s.servedMin = o.servedMin
	}
}

// mergeSlots adds b's slots into a's (both ascending), returning the
// union in order.
func mergeSlots(a, b []slot) []slot {
	out := make([]slot, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].off < b[j].off):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].off < a[i].off:
			out = append(out, b[j])
			j++
		default:
			s := a[i]
			s.add(&b[j])
			out = append(out, s)
			i++
			j++
		}
	}
	return out
}

// bucketOf fills b with slot s of the minute starting at minute (unix
// seconds), a second wide.
func (s *slot) bucketOf(b *TrafficBucket, minute, seriesID int64) {
	b.Start, b.Width, b.SeriesID = time.Unix(minute+s.off, 0).UTC(), TrafficSecond, seriesID
	b.Requests, b.Rejected = s.requests, s.rejected
	b.LatencySum, b.LatencyMax, b.APFWaitSum = time.Duration(s.latSum), time.Duration(s.latMax), time.Duration(s.apfWait)
	b.ServedLatencySum, b.ServedLatencyMin = time.Duration(s.servedSum), time.Duration(s.servedMin)
}

// slotOfBucket is b's numbers as a slot at offset off.
func slotOfBucket(b *TrafficBucket, off int64) slot {
	return slot{off: off, requests: b.Requests, rejected: b.Rejected, latSum: int64(b.LatencySum), latMax: int64(b.LatencyMax),
		apfWait: int64(b.APFWaitSum), servedSum: int64(b.ServedLatencySum), servedMin: int64(b.ServedLatencyMin)}
}
