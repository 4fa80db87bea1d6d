package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/seed"
)

// seed loads the --seed data set and the --fixtures directory. Objects that
// fail to load are reported as warnings; only an unusable client or a missing
// fixtures directory stops the start.
func (c *cluster) seed(ctx context.Context, opts upOptions) error {
	admin, err := c.restConfig("admin")
	if err != nil {
		return err
	}
	if opts.seed == "demo" {
		approver, err := c.restConfig("approver")
		if err != nil {
			return err
		}
		start := time.Now()
		res, err := seed.Demo(ctx, seed.Clients{Admin: admin, Approver: approver})
		if err != nil {
			return fmt.Errorf("seed demo: %w", err)
		}
		report("demo data", res, time.Since(start))
		key, value, err := seed.LegacyCSR()
		if err == nil {
			err = c.etcd.Put(ctx, key, value)
		}
		if err != nil {
			return fmt.Errorf("seed legacy CSR: %w", err)
		}
		fmt.Printf("devcluster: demo data: wrote CSR %s with an invalid request straight into etcd (the API server refuses it on create)\n", seed.LegacyCSRName)
	}
	if opts.fixtures != "" {
		dyn, err := dynamic.NewForConfig(admin)
		if err != nil {
			return err
		}
		start := time.Now()
		res, ignored, err := seed.Fixtures(ctx, dyn, opts.fixtures)
		if err != nil {
			return err
		}
		report("fixtures from "+opts.fixtures, res, time.Since(start))
		if ignored > 0 {
			fmt.Printf("devcluster: fixtures: forced failurePolicy Ignore on %d webhooks, because the Services they call do not exist here\n", ignored)
		}
	}
	return nil
}

func report(what string, res seed.Result, took time.Duration) {
	fmt.Printf("devcluster: %s: %d created, %d already there, %d of kinds not served, %d warnings (%s)\n", what, res.Created, res.Existing, res.NotServed, len(res.Warnings), took.Round(time.Millisecond))
	for _, w := range res.Warnings {
		fmt.Printf("devcluster: warning: %s\n", w)
	}
}
