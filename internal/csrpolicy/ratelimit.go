package csrpolicy

import (
	"errors"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// RateLimit is a policy's per-requester rate: at most MaxApprovals approvals
// of requests with the same spec.username whose Approved condition's
// lastUpdateTime lies within Period, whoever approved them (a person, the
// approver, another tool). The approver holds a request over the limit
// pending and tries it again when the window frees; the console's "why is
// this request pending" applies the same rule (HeldByRateLimit), so both
// always agree.
type RateLimit struct {
	MaxApprovals int
	Period       time.Duration
}

// The bounds of a rate limit, also in the CRD's schema
// (deploy/base/csrapprovalpolicies.yaml).
const (
	maxRateApprovals = 1_000_000
	maxRatePeriod    = 366 * 24 * time.Hour
)

// check refuses a rate that cannot mean anything: nil is no rate.
func (rl *RateLimit) check() error {
	switch {
	case rl == nil:
		return nil
	case rl.MaxApprovals < 1 || rl.MaxApprovals > maxRateApprovals:
		return fmt.Errorf("maxApprovals must be between 1 and %d, not %d", maxRateApprovals, rl.MaxApprovals)
	case rl.Period < time.Second || rl.Period > maxRatePeriod:
		return fmt.Errorf("period must be between 1s and %v, not %v", maxRatePeriod, rl.Period)
	}
	return nil
}

// ErrNoRequester is HeldByRateLimit's answer for a request without
// spec.username: nobody's rate can be counted, so it is held.
var ErrNoRequester = errors.New("the request names no requester (spec.username)")

// RecentApprovals counts, among requests (those of one requester, as an
// index by spec.username gives them; others are skipped), the approvals of
// requests whose spec.username is username and whose Approved condition's
// lastUpdateTime is within period before now. oldest is the earliest such
// time (zero when none): the window frees one approval at oldest+period.
func RecentApprovals(requests []*certificatesv1.CertificateSigningRequest, username string, period time.Duration, now time.Time) (n int, oldest time.Time) {
	since := now.Add(-period)
	for _, c := range requests {
		if c.Spec.Username != username {
			continue
		}
		at, ok := ApprovedAt(c)
		if !ok || !at.After(since) {
			continue
		}
		n++
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	return n, oldest
}

// ApprovedAt is the lastUpdateTime of c's Approved condition (its
// lastTransitionTime when the former is unset); ok is false when c is not
// approved.
func ApprovedAt(c *certificatesv1.CertificateSigningRequest) (time.Time, bool) {
	for _, cond := range c.Status.Conditions {
		if cond.Type != certificatesv1.CertificateApproved || cond.Status == corev1.ConditionFalse {
			continue
		}
		if !cond.LastUpdateTime.IsZero() {
			return cond.LastUpdateTime.Time, true
		}
		return cond.LastTransitionTime.Time, true
	}
	return time.Time{}, false
}

// Holds reports whether approved approvals of a requester within Period
// (RecentApprovals) leave rl no room for one more: the rule the approver
// (HeldByRateLimit) and the console's queue (csrwhy's RateLimited) share.
func (rl *RateLimit) Holds(approved int) bool { return rl != nil && approved >= rl.MaxApprovals }

// HeldByRateLimit reports whether rl holds the approval of c: the requester
// already has MaxApprovals approvals within Period before now among
// requests (the requester's requests; c itself is not counted, being
// pending). until is when the window frees enough for one more.
func HeldByRateLimit(rl *RateLimit, c *certificatesv1.CertificateSigningRequest, requests []*certificatesv1.CertificateSigningRequest, now time.Time) (held bool, until time.Time, err error) {
	if rl == nil {
		return false, time.Time{}, nil
	}
	if c.Spec.Username == "" {
		return true, time.Time{}, ErrNoRequester
	}
	n, _ := RecentApprovals(requests, c.Spec.Username, rl.Period, now)
	if !rl.Holds(n) {
		return false, time.Time{}, nil
	}
	// The window frees once n-MaxApprovals+1 approvals have left it: the
	// (n-MaxApprovals+1)th oldest's time plus the period.
	times := make([]time.Time, 0, n)
	since := now.Add(-rl.Period)
	for _, r := range requests {
		if r.Spec.Username != c.Spec.Username {
			continue
		}
		if at, ok := ApprovedAt(r); ok && at.After(since) {
			times = append(times, at)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	return true, times[n-rl.MaxApprovals].Add(rl.Period), nil
}
