package csrqueue

import (
	"strings"
	"unsafe"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// A findings text names its request: "requested by kubernetes-admin for cn
// bench-user-00042: make sure kubernetes-admin may obtain a certificate for
// that identity" is every decided request's own text at the page benchmark's
// shapes (and a real cluster's whenever an admin or a controller asks for
// others), 45,000 texts of ~150 bytes, all different, none shared
// (sharedText). The filter keeps each as a template instead: the request's
// subject CN and its requester's name replaced by a mark byte each, which
// 45,000 requests share, and the CN found again in the request's own
// search text (facts.own, where the subject line has it) by its place.
// Expanding a template gives back the text byte for byte: the marks are
// bytes no lower-cased text holds (strings.ToLower writes valid UTF-8, where
// 0xfe and 0xff never occur; a text holding one is kept as it is), and
// each is put back where it was taken out, in the reverse order.
const (
	cnMark   = '\xfe'
	userMark = '\xff'
)

// Bits of facts.tmpl: which marks the findings text holds.
const (
	tmplCN   = 1 << iota // the subject CN, own[cnOff:cnOff+cnLen]
	tmplUser             // the requester's name (spec.username, lower case)
)

// setFindingText keeps text (the findings' words, lower-cased) as the
// filter's template of it (f.checkMu held, own worded).
func (f *facts) setFindingText(c *certificatesv1.CertificateSigningRequest, req *csr.Request, text string) {
	f.findingText, f.tmpl = text, 0
	if text == "" || strings.IndexByte(text, cnMark) >= 0 || strings.IndexByte(text, userMark) >= 0 {
		f.findingText = sharedText(text)
		return
	}
	if req != nil && req.CommonName != "" {
		cn := strings.ToLower(req.CommonName)
		if at := strings.Index(f.own, cn); at >= 0 && at <= maxCNOff && len(cn) <= maxCNLen && strings.Contains(text, cn) {
			text = strings.ReplaceAll(text, cn, string([]byte{cnMark}))
			f.tmpl |= tmplCN
			f.cnOff, f.cnLen = uint16(at), uint8(len(cn))
		}
	}
	if u := c.Spec.Username; u != "" && strings.ToLower(u) == u && strings.Contains(text, u) {
		text = strings.ReplaceAll(text, u, string([]byte{userMark}))
		f.tmpl |= tmplUser
	}
	f.findingText = sharedText(text)
}

// The CN's place in own is kept in 3 bytes of the facts' padding.
const (
	maxCNOff = 1<<16 - 1
	maxCNLen = 1<<8 - 1
)

// findingsContain reports whether the findings text (expanded from its
// template into scratch, the view's buffer) holds needle.
func (f *facts) findingsContain(c *certificatesv1.CertificateSigningRequest, text string, tmpl uint8, needle string, scratch *[]byte) bool {
	if tmpl == 0 {
		return strings.Contains(text, needle)
	}
	b := f.expand((*scratch)[:0], c, text, tmpl)
	*scratch = b
	return strings.Contains(unsafe.String(unsafe.SliceData(b), len(b)), needle)
}

// expand appends text with its marks put back (the reverse of
// setFindingText).
func (f *facts) expand(b []byte, c *certificatesv1.CertificateSigningRequest, text string, tmpl uint8) []byte {
	cn := ""
	if tmpl&tmplCN != 0 {
		cn = f.own[f.cnOff : int(f.cnOff)+int(f.cnLen)]
	}
	for len(text) > 0 {
		i := 0
		for i < len(text) && text[i] != cnMark && text[i] != userMark {
			i++
		}
		b = append(b, text[:i]...)
		if i == len(text) {
			break
		}
		if text[i] == cnMark {
			b = append(b, cn...)
		} else {
			b = append(b, c.Spec.Username...)
		}
		text = text[i+1:]
	}
	return b
}
