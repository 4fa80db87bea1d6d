package apfload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// readsAtOnce bounds how many instances one scrape reads at the same time,
// and so the scrape's peak memory (each read keeps at most Limits).
const readsAtOnce = 4

type instanceRead struct {
	name    string
	totals  Totals
	err     error
	dump    map[string]LevelDump
	dumpErr error
}

// scrapeInstances reads every instance at its own address and stores their
// load and its sum. done is false when the sampler must read through the
// fallback fetch instead, and fallback says why: the instances cannot be
// listed, or none of them can be reached from here (the console runs outside
// the cluster), which is then remembered for DirectRetry so every scrape
// does not wait for unroutable addresses first. Instances that were reached
// but did not answer in time are stored as such: a flooded cluster slows
// every instance at once, and that is when the per-instance view matters.
func (s *Sampler) scrapeInstances(ctx context.Context, start time.Time) (done bool, fallback string) {
	if s.opt.Now().Before(s.directRetryAt) {
		return false, s.fallbackWhy
	}
	list, err := s.opt.Instances(ctx)
	switch {
	case errors.Is(err, kube.ErrInstancesInsecure):
		// Not a failure to list: the instances are never read with this
		// kubeconfig, and the pages say why in its own words.
		return s.fallBack(err.Error())
	case err != nil:
		return s.fallBack("the API server instances cannot be listed (EndpointSlices of default/kubernetes): " + err.Error())
	case len(list) == 0:
		return s.fallBack("default/kubernetes lists no API server instance")
	case len(list) > maxInstances:
		return s.fallBack(fmt.Sprintf("default/kubernetes lists %d API server instances, more than the %d the console reads one by one", len(list), maxInstances))
	}
	reads := make([]instanceRead, len(list))
	sem := make(chan struct{}, readsAtOnce)
	var wg sync.WaitGroup
	for i, inst := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			reads[i] = s.readInstance(ctx, inst)
		}()
	}
	wg.Wait()
	if !slices.ContainsFunc(reads, func(r instanceRead) bool { return r.err == nil || !cannotReach(r.err) }) {
		return s.fallBack(fmt.Sprintf("no API server instance answered at its own address (%s: %v)", reads[0].name, reads[0].err))
	}
	s.storeInstances(reads, start)
	return true, ""
}

// cannotReach tells whether a read's error says the instance's address
// cannot be reached from here: the connection was refused or never made
// (kube's instance dialer gives up on a connect before a scrape's deadline,
// so an unroutable address ends in a dial error, not the scrape's timeout),
// or the instance's certificate is not trusted. Any other error (a timeout
// after the connection was made, an error status, a body that does not
// parse) came from an instance that is there.
func cannotReach(err error) bool {
	var dial *net.OpError
	if errors.As(err, &dial) && dial.Op == "dial" {
		return true
	}
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid)
}

func (s *Sampler) fallBack(why string) (bool, string) {
	s.directRetryAt = s.opt.Now().Add(s.opt.DirectRetry)
	s.fallbackWhy = why
	return false, why
}

func (s *Sampler) readInstance(ctx context.Context, inst Instance) instanceRead {
	r := instanceRead{name: inst.Name}
	r.totals, r.err = s.read(ctx, inst.Metrics)
	if r.err == nil && inst.Dump != nil {
		r.dump, r.dumpErr = s.readDump(ctx, inst.Dump)
	}
	return r
}

// storeInstances turns one scrape's reads into each instance's load, with
// rates from that instance's previous read, and their sum. The state of
// instances no longer listed is dropped.
func (s *Sampler) storeInstances(reads []instanceRead, start time.Time) {
	took := time.Since(start)
	at := s.opt.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrapes++
	s.err = nil
	s.prev = nil // the fallback's rates must not span a spell of direct reads
	states := make(map[string]*instanceState, len(reads))
	parts := make([]InstanceLoad, 0, len(reads))
	cost := Cost{Duration: took}
	for _, r := range reads {
		st := s.instances[r.name]
		if st == nil || s.spansIdle(st.prevAt, at) {
			st = &instanceState{}
		}
		states[r.name] = st
		if r.err != nil {
			parts = append(parts, InstanceLoad{Name: r.name, Err: r.err})
			continue
		}
		il := st.instanceLoad(r.name, r.totals, at)
		il.Load.Dump, il.Load.DumpErr = r.dump, r.dumpErr
		parts = append(parts, il)
		cost.BytesRead += r.totals.BytesRead
		cost.KeptBytes += r.totals.KeptBytes
	}
	s.instances = states
	sortInstances(parts)
	ld := sumLoads(at, parts)
	s.load = &ld
	s.lastCost = cost
	close(s.updated)
	s.updated = make(chan struct{})
}
