#!/usr/bin/env bash
# integration-halves.sh LOG 'FIRST' 'SECOND'
# Runs the integration layer as two halves at the same time, each on a seeded
# devcluster of its own: SECOND (a shell command) in the background on
# .cache/devcluster-test-2 (one kube-apiserver), its output into LOG, while
# FIRST runs in the foreground on the devcluster already in $DEVCLUSTER_DIR.
# Both run to their end; then LOG is printed, and the script fails when
# either half failed.
#
# Why: the layer's packages run one at a time (-p 1: they share a cluster,
# count its objects, and internal/faults stops its API server), and it
# mostly waits (the API server, informer syncs, leases, token expiry): alone
# it kept about 0.6 of CI's 2 cores busy for 1,359 s, beside the browser
# tests. Two clusters make two such queues.
set -euo pipefail
log=$1 first=$2 second=$3
cd "$(dirname "$0")/.."
: "${DEVCLUSTER_DIR:?integration-halves.sh runs its first half on the devcluster in DEVCLUSTER_DIR}"
mkdir -p "$(dirname "$log")"
dir=$PWD/.cache/devcluster-test-2
rm -rf "$dir"
# setsid: the second half gets a process group of its own, which an
# interrupted run signals whole (its tests, consoles and cluster).
# Its consoles keep their default ledger ($XDG_STATE_HOME/clusterdesk) apart
# from the first half's: the two clusters' histories must not mix.
setsid env -u DEVCLUSTER_DIR DEVCLUSTER_APISERVERS=1 XDG_STATE_HOME="${XDG_STATE_HOME:-$PWD/.cache/test-state}-2" scripts/with-devcluster.sh "$dir" --seed \
  bash -c 'TIMEFORMAT="integration-halves.sh: the second half took %0R s wall, %0U s user + %0S s system CPU"; time bash -c "$1"' _ "$second" >"$log" 2>&1 </dev/null &
bg=$!
trap 'kill -TERM -- "-$bg" 2>/dev/null || true; wait "$bg" 2>/dev/null || true; exit 130' INT TERM
fg=0
bash -c 'TIMEFORMAT="integration-halves.sh: the first half took %0R s wall, %0U s user + %0S s system CPU"; time bash -c "$1"' _ "$first" || fg=$?
bgrc=0
wait "$bg" || bgrc=$?
trap - INT TERM
echo "---- integration-halves.sh: the second half's output ($log) ----"
cat "$log"
echo "---- integration-halves.sh: end of the second half's output ----"
if [ "$fg" -ne 0 ] || [ "$bgrc" -ne 0 ]; then
  echo "integration-halves.sh: failed: the first half exited $fg, the second $bgrc" >&2
  exit 1
fi
