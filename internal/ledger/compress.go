package ledger

import (
	"bytes"
	"compress/gzip"
	"io"
	"sync"
)

// Recorded writes' objects are stored gzip-compressed (Kubernetes objects'
// JSON shrinks 4-8×): the standard library's, at BestSpeed, so a batch of
// the audit webhook costs microseconds per object more and no dependency is
// added; writers and readers are pooled (a gzip.Writer is about 800 KiB of
// state to allocate).

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

var gzipReaders sync.Pool // *gzip.Reader; gzip.NewReader needs a stream to start

func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decompress inflates a stored object; nil stays nil.
func decompress(b []byte) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	var (
		r   *gzip.Reader
		err error
	)
	if pooled, ok := gzipReaders.Get().(*gzip.Reader); ok {
		r, err = pooled, pooled.Reset(bytes.NewReader(b))
	} else {
		r, err = gzip.NewReader(bytes.NewReader(b))
	}
	if err != nil {
		return nil, err
	}
	defer gzipReaders.Put(r)
	return io.ReadAll(r)
}
