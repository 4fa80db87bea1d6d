#!/usr/bin/env bash
# on-devcluster.sh DIR CMD...
# Runs CMD on the devcluster already up in $DEVCLUSTER_DIR (make test starts one
# for its integration and browser layers), or, when none is, starts a seeded
# devcluster in DIR (from scratch) for CMD alone: so `make test-integration` and
# `make e2e` each work on their own, and inside `make test` share one cluster.
set -euo pipefail
dir=$1; shift
if [ -n "${DEVCLUSTER_DIR:-}" ] && [ -f "$DEVCLUSTER_DIR/ready.json" ]; then
  exec "$@"
fi
rm -rf "$dir"
exec "$(dirname "$0")/with-devcluster.sh" "$dir" --seed "$@"
