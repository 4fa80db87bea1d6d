#!/usr/bin/env bash
# integration-lanes.sh: make test's Go integration layer in two lanes that run
# at the same time, each on its own seeded devcluster, each package in exactly
# one of them (scripts/go-test-integration.sh's INTEGRATION_ONLY/_EXCEPT with
# the one list $INTEGRATION_LANE_B).
#
# Why: packages run one at a time on a cluster (-p 1: several count or change
# its objects), and one at a time they kept CI's 2 cores 1.25 busy (stop 56:
# 1,456 s wall for the layer, most of it waits on API servers, informer
# syncs, token expiries, proxies and fail-overs). A second cluster lets a
# second package wait at the same time without seeing the first one's objects.
#
# Lane A: every package not in lane B, then the devcluster module's (all of
# them: lane B's list names packages of this module only), on a
# cluster of $DEVCLUSTER_APISERVERS API servers (make test: two, the second a
# standby, $DEVCLUSTER_STANDBY, resumed by the tests of the per-instance load:
# internal/testcluster.APIServers); the packages with such tests stay in lane A. Lane B: the packages of $INTEGRATION_LANE_B
# on a cluster of one API server seeded with the demo data only (no
# $FIXTURES: none of its tests reads the 180 real-world CRDs, which cost that
# cluster's API server and every console a test starts there the CPU of their
# megabyte schemas), with its own console state (XDG_STATE_HOME), so two
# consoles' default ledgers never meet.
#
# Then, on lane B's cluster, $LANE_B_AFTER when set (a shell command: make
# test's live-update benchmark rounds), also when lane B's tests failed.
#
# Needs $CACHE (make's .cache); $FIXTURES seeds lane A's cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CACHE:?integration-lanes.sh: CACHE (make test's cache directory) is not set}"
: "${INTEGRATION_LANE_B:?integration-lanes.sh: INTEGRATION_LANE_B (lane B's packages) is not set}"
export CLEANUP_BENCH_SIZES=50 # the cleanup's deletion benchmark: one round of 50 objects, not 1,000

rm -rf "$CACHE/devcluster-test-b"
lane_b="XDG_STATE_HOME=$CACHE/test-state-b DEVCLUSTER_APISERVERS=1 DEVCLUSTER_STANDBY= FIXTURES= \
  scripts/with-devcluster.sh $CACHE/devcluster-test-b --seed \
  env INTEGRATION_ONLY='$INTEGRATION_LANE_B' scripts/and-after.sh \"\${LANE_B_AFTER:-}\" scripts/go-test-integration.sh"
exec scripts/beside.sh "integration lane B" "$CACHE/test-integration-b.log" "$lane_b" "integration lane A" \
  scripts/with-devcluster.sh "$CACHE/devcluster-test" --seed \
  env INTEGRATION_EXCEPT="$INTEGRATION_LANE_B" bash -c 'scripts/go-test-integration.sh && INTEGRATION_EXCEPT= scripts/go-test-integration.sh devcluster'
