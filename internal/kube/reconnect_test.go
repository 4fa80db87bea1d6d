package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNotConnected(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:1/api", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"wrapped", fmt.Errorf("list: %w", refused), true},
		{"dial timeout", &url.Error{Op: "Get", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout")}}, true},
		{"read reset: may have reached the server", &url.Error{Op: "Get", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, false},
		{"an answer", apierrors.NewServiceUnavailable("etcd is down"), false},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "csrs"}, "", errors.New("no")), false},
	} {
		if got := notConnected(tc.err); got != tc.want {
			t.Errorf("%s: notConnected = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// While the API server cannot be reached, the request is retried (each failure
// reported) until it gets through; an answer, even an error, ends the loop at once.
func TestUntilReachableRetriesOnlyWhileNotConnected(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	calls, reports := 0, 0
	v, err := untilReachable(context.Background(), func() (int, error) {
		calls++
		if calls < 3 {
			return 0, refused
		}
		return 42, nil
	}, func(error) { reports++ })
	if v != 42 || err != nil || calls != 3 || reports != 2 {
		t.Errorf("got %d, %v after %d calls and %d reports; want 42 after 3 calls, 2 reports", v, err, calls, reports)
	}

	calls = 0
	unavailable := apierrors.NewServiceUnavailable("x")
	if _, err := untilReachable(context.Background(), func() (int, error) { calls++; return 0, unavailable }, func(error) {}); err != unavailable || calls != 1 {
		t.Errorf("an answer from the server: %v after %d calls; want it returned after 1", err, calls)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := untilReachable(ctx, func() (int, error) { return 0, refused }, func(error) {}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("when ctx ends: %v, want the last error", err)
	}
}
