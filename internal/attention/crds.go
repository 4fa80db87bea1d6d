package attention

import (
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Drift is a CRD's stored-version drift as the CRD pages lint it
// (crd.Lint): a stored version no longer served (Warning: its objects must
// be migrated before it can go), or several stored versions (Notice: a
// storage migration would let the older go).
type Drift struct {
	Severity Severity
	Stored   []string // status.storedVersions
	Notes    []string // the lint titles
}

// DriftOf judges one CRD; ok is false without drift.
func DriftOf(c *apiextensionsv1.CustomResourceDefinition) (Drift, bool) {
	var d Drift
	found := false
	for _, f := range crd.Lint(c, c.CreationTimestamp.Time) {
		switch f.Code {
		case crd.CodeStoredNotServed:
			d.Severity = Warning
		case crd.CodeSeveralStored:
		default:
			continue
		}
		found = true
		d.Notes = append(d.Notes, f.Title)
	}
	if !found {
		return Drift{}, false
	}
	d.Stored = slices.Clone(c.Status.StoredVersions)
	return d, true
}

// CRDDriftHref is the CRD list filtered to the CRDs with stored-version
// drift (lint=drift: the same findings as DriftOf's, crd.IsDrift).
var CRDDriftHref = urls.ListWithLint(kube.CRDs, urls.LintDrift)

// severityOf maps a lint's severity.
func severityOf(s admission.Severity) Severity {
	switch s {
	case admission.Error:
		return Danger
	case admission.Warning:
		return Warning
	}
	return Notice
}

// CRDs is the CRDs with stored-version drift; each entry links the CRD's
// page (its versions and the lint), the item CRDDriftHref.
func CRDs(drifted map[string]Drift) (Item, bool) {
	if len(drifted) == 0 {
		return Item{}, false
	}
	it := Item{Concern: CRDDrift, Kinds: []kube.KindID{kube.CRDs}, Count: len(drifted), Href: CRDDriftHref}
	entries := make([]Entry, 0, len(drifted))
	for name, d := range drifted {
		entries = append(entries, Entry{Name: name, Severity: d.Severity, Note: d.Notes, Href: urls.Object(kube.CRDs, name)})
	}
	it.Entries, it.Severity = top(entries)
	return it, true
}
