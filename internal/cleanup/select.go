package cleanup

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Candidate is one object a cleanup may delete, with the facts filters read.
type Candidate struct {
	Namespace, Name, UID string
	Created              time.Time
	Labels               map[string]string
	// State and Signer are a CSR's state key and signerName ("" for other kinds).
	State, Signer string
}

// CandidateOf is an object's metadata as a candidate: what every kind's
// cleanup reads (the kind registry, handlers/kinds, and a CRD's custom
// resources, handlers/cleanup).
func CandidateOf(o metav1.Object) Candidate {
	return Candidate{Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID()),
		Created: o.GetCreationTimestamp().Time, Labels: o.GetLabels()}
}

// Ref is the candidate as a reference.
func (c Candidate) Ref() Ref { return Ref{Namespace: c.Namespace, Name: c.Name, UID: c.UID} }

// Selection is what a filter chose, sorted by namespace and name, and the
// ticked rows that are no longer there with the UID the person saw.
type Selection struct {
	Items []Candidate
	Gone  []Ref
}

// Select applies f to all as of cutoff (the age filter counts back from it).
// It is linear in len(all) plus a sort of what matches: a cleanup of tens of
// thousands of decided CSRs costs one pass over the cache, not one per object.
func Select(all []Candidate, f Filter, cutoff time.Time) Selection {
	var picked map[string]string // "namespace/name" -> UID
	if f.Picked != nil {
		picked = make(map[string]string, len(f.Picked))
		for _, r := range f.Picked {
			picked[r.Namespace+"/"+r.Name] = r.UID
		}
	}
	sel := f.selector
	if sel == nil && f.Selector == "" {
		sel = labels.Everything()
	}
	var out Selection
	seen := make(map[string]bool, len(picked))
	for _, c := range all {
		if picked != nil {
			uid, ok := picked[c.Namespace+"/"+c.Name]
			if !ok || uid != c.UID {
				continue
			}
			seen[c.Namespace+"/"+c.Name] = true
		}
		if !f.matches(c, sel, cutoff) {
			continue
		}
		out.Items = append(out.Items, c)
	}
	for _, r := range f.Picked {
		if !seen[r.Namespace+"/"+r.Name] {
			out.Gone = append(out.Gone, r)
		}
	}
	slices.SortFunc(out.Items, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func (f Filter) matches(c Candidate, sel labels.Selector, cutoff time.Time) bool {
	switch {
	case sel == nil: // a Filter built without WithSelector: match nothing rather than guess
		return false
	case !sel.Matches(labels.Set(c.Labels)):
		return false
	case f.OlderThan > 0 && !c.Created.Before(cutoff.Add(-f.OlderThan)):
		return false
	case f.Signer != "" && c.Signer != f.Signer:
		return false
	}
	switch f.State {
	case "":
		return true
	case Decided:
		return c.State != "" && c.State != "pending"
	}
	return c.State == f.State
}

// Fingerprint is a digest of exactly the objects in items (namespace, name
// and UID, in order): the preview puts it in the confirmation form, and the
// confirmation deletes only if the set it finds again has the same one. An
// object created, deleted or replaced under the same name in between changes
// it, so nothing the person did not see is deleted.
func Fingerprint(scope string, items []Candidate) string {
	h := sha256.New()
	h.Write([]byte(scope))
	for _, c := range items {
		h.Write([]byte{0})
		h.Write([]byte(c.Namespace))
		h.Write([]byte{0})
		h.Write([]byte(c.Name))
		h.Write([]byte{0})
		h.Write([]byte(c.UID))
	}
	return hex.EncodeToString(h.Sum(nil))
}
