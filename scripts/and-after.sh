#!/usr/bin/env bash
# and-after.sh 'SHELL COMMAND' CMD...
# Runs CMD, then SHELL COMMAND, also when CMD failed (so one run reports the
# failures of both); fails when either failed. An empty SHELL COMMAND is none.
#
# make test runs the live-update benchmark rounds this way after integration
# lane B's Go tests, on lane B's cluster (scripts/integration-lanes.sh).
set -uo pipefail
after=$1; shift
rc=0
"$@" || rc=$?
if [ -n "$after" ]; then
  bash -c "$after" || rc=1
fi
exit "$rc"
