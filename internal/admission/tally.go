package admission

import "time"

// Tally is what a list row shows of an object's lints: how many error
// (the console's "danger") and warning findings it has, notes not counted,
// and whether any finding has a code the caller marks (the CRD list's
// stored-version drift, crd.IsDrift, for its lint=drift filter).
type Tally struct {
	Errors, Warnings int
	Marked           bool
}

// TallyOf counts fs; mark (nil: none) picks the codes Marked is for.
func TallyOf(fs []Finding, mark func(code string) bool) Tally {
	var t Tally
	t.count(fs, mark)
	return t
}

func (t *Tally) count(fs []Finding, mark func(code string) bool) {
	for _, f := range fs {
		switch f.Severity {
		case Error:
			t.Errors++
		case Warning:
			t.Warnings++
		}
		if mark != nil && mark(f.Code) {
			t.Marked = true
		}
	}
}

// ConfigTally counts the findings of every webhook of a configuration, as
// its detail page lints them before any Service lookup.
func ConfigTally(cfg Config, now time.Time) Tally {
	var t Tally
	for _, h := range cfg.Hooks {
		t.count(Lint(cfg, h, now), nil)
	}
	return t
}
