package auth

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// serviceAccountToken is shaped like a devcluster TokenRequest token (992
// bytes measured by TestReplicasShareSessionsAndSignOuts).
var serviceAccountToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9." + strings.Repeat("eyJhdWQiOlsiaHR0cHM6Ly9rdWJlcm5ldGVzIl19", 20) + "." + strings.Repeat("s", 342)

// BenchmarkCheckSharedSession is what each request pays for its session on a
// replica: parse the cookie, open the sealed session (AES-256-GCM, JSON),
// check its clocks and look it up in a full set of shared revocations
// (DefaultSharedSessionRevocations sessions, a user-wide one, no API call).
func BenchmarkCheckSharedSession(b *testing.B) {
	s := NewSessionsWithKeys(RandomKeys())
	cluster := &fakeCluster{objects: map[string]kube.Revocation{}}
	shared := NewSharedRevoker(cluster, s.Absolute)
	cluster.replicas = append(cluster.replicas, shared)
	shared.SetReady(func() bool { return true })
	shared.Beat(context.Background())
	s.Revocations = shared
	now := time.Now()
	for i := range DefaultSharedSessionRevocations {
		shared.Apply(kube.Revocation{Name: SessionRevocationName(fmt.Sprint(i)), Scope: kube.RevokeSession, Since: now, Until: now.Add(time.Hour)})
	}
	shared.Apply(kube.Revocation{Name: userRevocationName("someone-else"), Scope: kube.RevokeUser, Since: now, Until: now.Add(time.Hour)})
	rec := httptest.NewRecorder()
	if _, err := s.StartWith(rec, nil, Session{User: "system:serviceaccount:team:reader",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"},
		Creds:  Credentials{Token: serviceAccountToken}}); err != nil {
		b.Fatal(err)
	}
	r := requestWith(rec.Result().Cookies()[0])
	w := httptest.NewRecorder()
	b.ReportAllocs()
	b.ReportMetric(float64(len(rec.Result().Cookies()[0].Value)), "cookie-bytes")
	for b.Loop() {
		if _, err := s.Check(w, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRevokedLookup is the revocation part alone.
func BenchmarkRevokedLookup(b *testing.B) {
	shared := NewSharedRevoker(&fakeCluster{objects: map[string]kube.Revocation{}}, 8*time.Hour)
	now := time.Now()
	for i := range DefaultSharedSessionRevocations {
		shared.Apply(kube.Revocation{Name: SessionRevocationName(fmt.Sprint(i)), Scope: kube.RevokeSession, Since: now, Until: now.Add(time.Hour)})
	}
	sess := Session{ID: "0123456789abcdef0123456789abcdef", User: "alice", IssuedAt: now}
	b.ReportAllocs()
	for b.Loop() {
		if shared.Revoked(sess) {
			b.Fatal("revoked")
		}
	}
}

// BenchmarkSealSession is the cookie rewrite (sign-in, and the idle clock
// once a minute): plain, and deflated as a session over one cookie is.
func BenchmarkSealSession(b *testing.B) {
	k := RandomKeys()
	sess := Session{ID: "0123456789abcdef0123456789abcdef", User: "system:serviceaccount:team:reader", Creds: Credentials{Token: serviceAccountToken}}
	for _, compress := range []bool{false, true} {
		b.Run(fmt.Sprintf("deflate=%v", compress), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.Seal(sessionPurpose, sess, compress); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIdentifyTokenSession is the whole per-request identification in
// token mode (Gate.IdentifySession over BenchmarkCheckSharedSession's setup,
// without the once-per-5-minutes token review).
func BenchmarkIdentifyTokenSession(b *testing.B) {
	s := NewSessionsWithKeys(RandomKeys())
	cluster := &fakeCluster{objects: map[string]kube.Revocation{}}
	shared := NewSharedRevoker(cluster, s.Absolute)
	cluster.replicas = append(cluster.replicas, shared)
	shared.SetReady(func() bool { return true })
	shared.Beat(context.Background())
	s.Revocations = shared
	now := time.Now()
	for i := range DefaultSharedSessionRevocations {
		shared.Apply(kube.Revocation{Name: SessionRevocationName(fmt.Sprint(i)), Scope: kube.RevokeSession, Since: now, Until: now.Add(time.Hour)})
	}
	g := &Gate{Mode: ModeToken, Sessions: s}
	rec := httptest.NewRecorder()
	if err := g.SignIn(rec, requestWith(nil), kube.Identity{User: "system:serviceaccount:team:reader",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"},
		Act:    kube.ActWithToken, Token: serviceAccountToken}); err != nil {
		b.Fatal(err)
	}
	r := requestWith(rec.Result().Cookies()[0])
	w := httptest.NewRecorder()
	b.ReportAllocs()
	b.ReportMetric(float64(len(rec.Result().Cookies()[0].Value)), "cookie-bytes")
	for b.Loop() {
		if _, err := g.Identify(w, r); err != nil {
			b.Fatal(err)
		}
	}
}
