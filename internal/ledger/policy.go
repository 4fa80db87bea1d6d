package ledger

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// What each version of a CSR approval policy decided (issue 47, item 4): the
// decisions whose message names the policy's version (Entry.Policy) read
// back per version for the policy's page.

// PolicyStore is implemented by the SQL store (both backends).
type PolicyStore interface {
	// PolicyVersions returns what each version of the policy decided, the
	// newest generation first: at most MaxPolicyVersions versions, each with
	// its counts and its latest decisions (at most latest, at most
	// MaxPolicyLatest). Its cost grows with the policy's decisions for the
	// counts (an index-only scan, policy.go's measurements) and with the
	// versions shown for the latest, never with the ledger's size.
	PolicyVersions(ctx context.Context, policy string, latest int) (PolicyVersions, error)
}

// Bounds of PolicyVersions.
const (
	MaxPolicyVersions = 20
	MaxPolicyLatest   = 20
)

// PolicyVersions is what the versions of one policy decided.
type PolicyVersions struct {
	Versions []PolicyVersion
	// Older counts the versions beyond MaxPolicyVersions, left out.
	Older int
}

// PolicyVersion is what one version of a policy decided: each request
// counted once (a decision the console made has its record and the API
// server's event; they are one decision).
type PolicyVersion struct {
	Generation       int64
	Hash             string
	Approved, Denied int64
	// Latest are its newest decisions, newest first.
	Latest []PolicyDecision
}

// PolicyDecision is one decision a version of a policy made.
type PolicyDecision struct {
	Name, UID string
	Action    string // ActionApprove or ActionDeny
	User      string // who wrote it: the approver's identity, or a person's
	Time      time.Time
}

// policyCountsSQL counts each version's decisions per action, each request
// once, from ledger_entries_policy_counts alone (migration 00012). The
// "policy <> ”" repeats the partial index's predicate, so PostgreSQL's
// planner uses it with a parameter for the name too.
const policyCountsSQL = "SELECT policy_generation, policy_hash, action, COUNT(DISTINCT uid) FROM ledger_entries" +
	" WHERE policy = ? AND policy <> '' GROUP BY policy_generation, policy_hash, action"

// policyLatestSQL is one version's newest decisions, on ledger_entries_policy.
const policyLatestSQL = "SELECT name, uid, action, user_name, time_ns FROM ledger_entries" +
	" WHERE policy = ? AND policy <> '' AND policy_generation = ? AND policy_hash = ?" +
	" ORDER BY time_ns DESC, seq DESC LIMIT ?"

// PolicyVersions implements PolicyStore.
func (s *sqlStore) PolicyVersions(ctx context.Context, policy string, latest int) (PolicyVersions, error) {
	latest = min(max(latest, 0), MaxPolicyLatest)
	rows, err := s.r.QueryContext(ctx, s.d.bind(policyCountsSQL), textOf(policy))
	if err != nil {
		return PolicyVersions{}, fmt.Errorf("ledger: policy versions: %w", err)
	}
	type key struct {
		gen  int64
		hash string
	}
	by := map[key]*PolicyVersion{}
	for rows.Next() {
		var (
			k      key
			action string
			n      int64
		)
		if err := rows.Scan(&k.gen, &k.hash, &action, &n); err != nil {
			rows.Close()
			return PolicyVersions{}, fmt.Errorf("ledger: policy versions: %w", err)
		}
		v := by[k]
		if v == nil {
			v = &PolicyVersion{Generation: k.gen, Hash: k.hash}
			by[k] = v
		}
		switch action {
		case ActionApprove:
			v.Approved += n
		case ActionDeny:
			v.Denied += n
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return PolicyVersions{}, fmt.Errorf("ledger: policy versions: %w", err)
	}
	var out PolicyVersions
	for _, v := range by {
		out.Versions = append(out.Versions, *v)
	}
	// Newest generation first; two expressions under one generation (a
	// message written by hand) by hash, so the order is stable.
	slices.SortFunc(out.Versions, func(a, b PolicyVersion) int {
		return cmp.Or(cmp.Compare(b.Generation, a.Generation), cmp.Compare(a.Hash, b.Hash))
	})
	if len(out.Versions) > MaxPolicyVersions {
		out.Older = len(out.Versions) - MaxPolicyVersions
		out.Versions = out.Versions[:MaxPolicyVersions]
	}
	if latest == 0 {
		return out, nil
	}
	for i := range out.Versions {
		if out.Versions[i].Latest, err = s.policyLatest(ctx, policy, out.Versions[i], latest); err != nil {
			return PolicyVersions{}, err
		}
	}
	return out, nil
}

// policyLatest reads a version's newest decisions, each request once: twice
// as many rows as wanted, a console decision being two entries.
func (s *sqlStore) policyLatest(ctx context.Context, policy string, v PolicyVersion, latest int) ([]PolicyDecision, error) {
	rows, err := s.r.QueryContext(ctx, s.d.bind(policyLatestSQL), textOf(policy), v.Generation, v.Hash, 2*latest)
	if err != nil {
		return nil, fmt.Errorf("ledger: policy decisions: %w", err)
	}
	defer rows.Close()
	var out []PolicyDecision
	seen := map[string]bool{}
	for rows.Next() {
		var (
			d      PolicyDecision
			timeNS int64
		)
		if err := rows.Scan(&d.Name, &d.UID, &d.Action, &d.User, &timeNS); err != nil {
			return nil, fmt.Errorf("ledger: policy decisions: %w", err)
		}
		if seen[d.UID] || len(out) == latest {
			continue
		}
		seen[d.UID] = true
		d.Time = time.Unix(0, timeNS).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}
