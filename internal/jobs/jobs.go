// Package jobs runs long computations a person started from a page (a
// replay of the recorded writes, issue 45) in the background, so that no
// request waits on them: the page shows a job's progress, can cancel it,
// and reads its result when it is done.
//
// A job belongs to the identity that started it (the Kubernetes username
// the console acts as, as live.Streams counts streams per user): every
// lookup names the owner, and a job of another owner is not found, so an
// ID that leaks (a log, a shoulder) shows or cancels nothing. IDs are 128
// random bits all the same.
//
// Everything is bounded: running jobs per owner and overall (each keeps a
// core busy), finished jobs kept per owner and overall, and for how long.
// Jobs live in the process that runs them; behind a balancer without
// sticky sessions a page asks for its job at another replica and is told it
// is not there (the page says to start the replay again).
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"
)

// Limits bound a Registry; zero values take the defaults.
type Limits struct {
	// RunningPerOwner and Running bound the jobs running at once, of one
	// owner and overall: each keeps a core busy.
	RunningPerOwner, Running int
	// KeptPerOwner and Kept bound the jobs kept, finished or not: a new job
	// past them drops the oldest finished one (of its owner first).
	KeptPerOwner, Kept int
	// KeepFor is how long a finished job's result stays readable.
	KeepFor time.Duration
	// Timeout bounds one job's run, a backstop: a job's own work may be
	// bounded tighter (a replay's is).
	Timeout time.Duration
}

// The default limits: two cores (the console's pod), so one running job per
// person and two overall.
const (
	DefaultRunningPerOwner = 1
	DefaultRunning         = 2
	DefaultKeptPerOwner    = 4
	DefaultKept            = 64
	DefaultKeepFor         = 15 * time.Minute
	DefaultTimeout         = 5 * time.Minute
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.RunningPerOwner, DefaultRunningPerOwner)
	def(&l.Running, DefaultRunning)
	def(&l.KeptPerOwner, DefaultKeptPerOwner)
	def(&l.Kept, DefaultKept)
	if l.KeepFor <= 0 {
		l.KeepFor = DefaultKeepFor
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// Errors of Start.
var (
	// ErrOwnerBusy: the owner runs RunningPerOwner jobs already.
	ErrOwnerBusy = errors.New("jobs: you have a job running already")
	// ErrBusy: Running jobs run already.
	ErrBusy = errors.New("jobs: the console runs as many jobs as it may")
	// ErrNoOwner: a job needs an owner.
	ErrNoOwner = errors.New("jobs: no owner")
)

// State is where a job stands.
type State int

const (
	Running State = iota
	Done
	Failed
	Cancelled
)

// Snapshot is a job as a page shows it.
type Snapshot[P, R any] struct {
	ID       string
	State    State
	Progress P
	Result   R
	Err      error // Failed: why
	Started  time.Time
	Ended    time.Time
}

// Run is a job's work: it reports progress as it goes and returns when
// done or when ctx ends (then with ctx's error).
type Run[P, R any] func(ctx context.Context, progress func(P)) (R, error)

// Registry holds the jobs of one process. Safe for concurrent use.
type Registry[P, R any] struct {
	lim Limits
	now func() time.Time
	// OnChange, when set, is called after each progress report and once when
	// a job ends, outside the registry's lock (a page's live update).
	OnChange func(owner string, s Snapshot[P, R])
	// OnDrop, when set, is called with the ID of each finished job the
	// registry lets go (past KeepFor, or to make room), under its lock: it
	// must not call the registry (a page's stream forgets the job's topic).
	OnDrop func(id string)

	mu   sync.Mutex
	jobs map[string]*job[P, R]
}

type job[P, R any] struct {
	owner  string
	cancel context.CancelFunc
	done   chan struct{}
	snap   Snapshot[P, R]
}

// New returns a registry with lim (defaults for zero values).
func New[P, R any](lim Limits) *Registry[P, R] {
	return &Registry[P, R]{lim: lim.withDefaults(), now: time.Now, jobs: map[string]*job[P, R]{}}
}

// Start runs run as a job of owner, its progress initial until it reports,
// or says why not (ErrOwnerBusy, ErrBusy). The job's context is not the
// request's: it outlives it, ended by Cancel or Limits.Timeout.
func (r *Registry[P, R]) Start(owner string, initial P, run Run[P, R]) (Snapshot[P, R], error) {
	if owner == "" {
		return Snapshot[P, R]{}, ErrNoOwner
	}
	id, err := newID()
	if err != nil {
		return Snapshot[P, R]{}, err
	}
	r.mu.Lock()
	r.expire()
	running, mine := 0, 0
	for _, j := range r.jobs {
		if j.snap.State == Running {
			running++
			if j.owner == owner {
				mine++
			}
		}
	}
	switch {
	case mine >= r.lim.RunningPerOwner:
		r.mu.Unlock()
		return Snapshot[P, R]{}, ErrOwnerBusy
	case running >= r.lim.Running:
		r.mu.Unlock()
		return Snapshot[P, R]{}, ErrBusy
	}
	r.makeRoom(owner)
	ctx, cancel := context.WithTimeout(context.Background(), r.lim.Timeout)
	j := &job[P, R]{owner: owner, cancel: cancel, done: make(chan struct{}),
		snap: Snapshot[P, R]{ID: id, State: Running, Progress: initial, Started: r.now()}}
	r.jobs[id] = j
	snap := j.snap
	r.mu.Unlock()
	go r.run(ctx, j, run)
	return snap, nil
}

func (r *Registry[P, R]) run(ctx context.Context, j *job[P, R], run Run[P, R]) {
	defer close(j.done)
	defer j.cancel()
	res, err := run(ctx, func(p P) {
		r.mu.Lock()
		j.snap.Progress = p
		s := j.snap
		r.mu.Unlock()
		r.changed(j.owner, s)
	})
	r.mu.Lock()
	j.snap.Result, j.snap.Ended = res, r.now()
	switch {
	case err == nil:
		j.snap.State = Done
	case errors.Is(err, context.Canceled):
		j.snap.State = Cancelled
	default:
		j.snap.State, j.snap.Err = Failed, err
	}
	s := j.snap
	r.mu.Unlock()
	r.changed(j.owner, s)
}

func (r *Registry[P, R]) changed(owner string, s Snapshot[P, R]) {
	if r.OnChange != nil {
		r.OnChange(owner, s)
	}
}

// Get returns owner's job id; false for no such job, or another owner's.
func (r *Registry[P, R]) Get(owner, id string) (Snapshot[P, R], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire()
	j, ok := r.jobs[id]
	if !ok || owner == "" || j.owner != owner {
		return Snapshot[P, R]{}, false
	}
	return j.snap, true
}

// Cancel stops owner's job id and waits for it to end, at most wait; false
// for no such job, or another owner's (which goes on untouched).
func (r *Registry[P, R]) Cancel(owner, id string, wait time.Duration) (Snapshot[P, R], bool) {
	r.mu.Lock()
	j, ok := r.jobs[id]
	if !ok || owner == "" || j.owner != owner {
		r.mu.Unlock()
		return Snapshot[P, R]{}, false
	}
	r.mu.Unlock()
	j.cancel()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-j.done:
	case <-t.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return j.snap, true
}

// Running counts the jobs running now.
func (r *Registry[P, R]) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, j := range r.jobs {
		if j.snap.State == Running {
			n++
		}
	}
	return n
}

// expire drops the jobs finished longer than KeepFor ago (under r.mu).
func (r *Registry[P, R]) expire() {
	cut := r.now().Add(-r.lim.KeepFor)
	for id, j := range r.jobs {
		if j.snap.State != Running && j.snap.Ended.Before(cut) {
			r.drop(id)
		}
	}
}

// makeRoom drops the oldest finished jobs, of owner first, until a new job
// of owner fits KeptPerOwner and Kept (under r.mu). Running jobs stay:
// they are bounded by the running limits.
func (r *Registry[P, R]) makeRoom(owner string) {
	var mine, all []*job[P, R]
	var ids = map[*job[P, R]]string{}
	for id, j := range r.jobs {
		ids[j] = id
		if j.snap.State != Running {
			all = append(all, j)
			if j.owner == owner {
				mine = append(mine, j)
			}
		}
	}
	oldest := func(a, b *job[P, R]) int { return a.snap.Ended.Compare(b.snap.Ended) }
	slices.SortFunc(mine, oldest)
	slices.SortFunc(all, oldest)
	count := func() (m, n int) {
		for _, j := range r.jobs {
			if j.owner == owner {
				m++
			}
		}
		return m, len(r.jobs)
	}
	for _, j := range mine {
		if m, _ := count(); m < r.lim.KeptPerOwner {
			break
		}
		r.drop(ids[j])
	}
	for _, j := range all {
		if _, ok := r.jobs[ids[j]]; !ok {
			continue // dropped as the owner's above
		}
		if _, n := count(); n < r.lim.Kept {
			break
		}
		r.drop(ids[j])
	}
}

// drop lets the finished job id go (under r.mu).
func (r *Registry[P, R]) drop(id string) {
	delete(r.jobs, id)
	if r.OnDrop != nil {
		r.OnDrop(id)
	}
}

func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
