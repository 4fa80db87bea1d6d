package main

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// The queue page's table carries the dictionary its view's updates are
// deflated against (handlers/page.DeflateCSRView); a tab inflates each
// update as web/js/live-csr.js does.
var (
	dictIDAtt = regexp.MustCompile(`data-live-dict-id="([0-9a-f]+)"`)
	dictAtt   = regexp.MustCompile(`data-live-dict="([A-Za-z0-9+/=]+)"`)
)

// viewDict is the dictionary a page names, nil when it names none.
type viewDict struct {
	id  string
	raw []byte
}

func dictOf(page string) (*viewDict, error) {
	id, b64 := dictIDAtt.FindStringSubmatch(page), dictAtt.FindStringSubmatch(page)
	if id == nil || b64 == nil {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(b64[1])
	if err != nil {
		return nil, fmt.Errorf("the page's dictionary: %w", err)
	}
	return &viewDict{id: id[1], raw: raw}, nil
}

// inflate is a csrs-view event's HTML.
func (d *viewDict) inflate(data string) (string, error) {
	if d == nil {
		return data, nil
	}
	z, ok := strings.CutPrefix(data, d.id+":")
	if !ok {
		return "", fmt.Errorf("an update deflated against another dictionary than %s", d.id)
	}
	b, err := base64.StdEncoding.DecodeString(z)
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(flate.NewReaderDict(bytes.NewReader(b), d.raw))
	return string(out), err
}
