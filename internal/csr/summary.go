package csr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A decided request's spec.request, in clusterdesk's CSR cache, is its
// summary (issue 27): the decoded Request, which is all the queue's rows,
// search, checks and policies read of it, in place of the PEM, whose key
// and signature they never show. Tens of thousands of decided requests
// each kept half a kilobyte or more of PEM; the summary of a usual request
// is a third of that. Decode reads a summary as it reads a PEM, so every
// reader of a cached object keeps working; the request's own page reads
// the PEM from the API server (handlers/csrs, certificate.go).
//
// The API server validates spec.request as a PEM on every write, so no
// object it serves starts with SummaryPrefix: a summary is only ever the
// cache's own.

// SummaryPrefix starts a summary: short, as every decided request holds
// it (the cached object's YAML shows spec.request in base64 anyway).
const SummaryPrefix = "(clusterdesk summary)"

// summary is the Request as a summary holds it: short keys, empty fields
// left out.
type summary struct {
	Subject    string      `json:"s,omitempty"`
	CN         string      `json:"cn,omitempty"`
	O          []string    `json:"o,omitempty"`
	OU         []string    `json:"ou,omitempty"`
	DNS        []string    `json:"dns,omitempty"`
	IP         []string    `json:"ip,omitempty"`
	Email      []string    `json:"em,omitempty"`
	URI        []string    `json:"uri,omitempty"`
	PublicKey  string      `json:"pk,omitempty"` // left out when keyText says it
	KeyAlg     string      `json:"ka,omitempty"`
	KeyBits    int         `json:"kb,omitempty"`
	SigAlg     string      `json:"sa,omitempty"`
	Extensions []extension `json:"ext,omitempty"`
	CA         bool        `json:"ca,omitempty"`
}

// extension is an Extension without its name: extensionName(OID) is it.
type extension struct {
	OID      string `json:"o"`
	Critical bool   `json:"c,omitempty"`
}

// Summarize returns the summary of a PEM request, and false when the PEM
// does not decode (it is kept as it is, so that it still reads as a bad
// request) or is a summary already.
func Summarize(pemBytes []byte) ([]byte, bool) {
	if IsSummary(pemBytes) {
		return nil, false
	}
	r, err := Decode(pemBytes)
	if err != nil {
		return nil, false
	}
	s := summary{Subject: r.Subject, CN: r.CommonName, O: r.Organizations, OU: r.OrganizationalUnit,
		DNS: r.DNSNames, IP: r.IPAddresses, Email: r.EmailAddresses, URI: r.URIs,
		PublicKey: r.PublicKey, KeyAlg: r.KeyAlgorithm, KeyBits: r.KeyBits, SigAlg: r.SignatureAlgorithm, CA: r.RequestsCA}
	if s.PublicKey == keyText(s.KeyAlg, s.KeyBits) {
		s.PublicKey = ""
	}
	for _, e := range r.Extensions {
		s.Extensions = append(s.Extensions, extension{OID: e.OID, Critical: e.Critical})
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, false
	}
	out := make([]byte, 0, len(SummaryPrefix)+len(raw))
	return append(append(out, SummaryPrefix...), raw...), true
}

// IsSummary reports whether b, a cached object's spec.request, is a summary.
func IsSummary(b []byte) bool {
	return bytes.HasPrefix(b, []byte(SummaryPrefix))
}

// ErrSummary is what reading the key of a summary answers: the cache keeps
// no key; read the request from the API server.
var ErrSummary = errors.New("spec.request is clusterdesk's summary of the request, without its key: read the request from the API server")

// fromSummary decodes a summary (IsSummary).
func fromSummary(b []byte) (*Request, error) {
	var s summary
	if err := json.Unmarshal(b[len(SummaryPrefix):], &s); err != nil {
		return nil, err
	}
	r := &Request{Subject: s.Subject, CommonName: s.CN, Organizations: s.O, OrganizationalUnit: s.OU,
		DNSNames: s.DNS, IPAddresses: s.IP, EmailAddresses: s.Email, URIs: s.URI,
		PublicKey: s.PublicKey, KeyAlgorithm: s.KeyAlg, KeyBits: s.KeyBits, SignatureAlgorithm: s.SigAlg, RequestsCA: s.CA}
	if r.PublicKey == "" {
		r.PublicKey = keyText(r.KeyAlgorithm, r.KeyBits)
	}
	for _, e := range s.Extensions {
		r.Extensions = append(r.Extensions, Extension{Name: extensionName(e.OID), OID: e.OID, Critical: e.Critical})
	}
	return r, nil
}

// keyText is describeKey's text of the usual keys, from their algorithm and
// size ("" for any other: the summary keeps its text).
func keyText(alg string, bits int) string {
	switch {
	case alg == "RSA":
		return fmt.Sprintf("RSA %d", bits)
	case alg == "ECDSA" && (bits == 224 || bits == 256 || bits == 384 || bits == 521):
		return fmt.Sprintf("ECDSA P-%d", bits)
	case alg == "Ed25519":
		return "Ed25519"
	}
	return ""
}
