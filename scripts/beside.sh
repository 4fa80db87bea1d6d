#!/usr/bin/env bash
# beside.sh NAME LOG 'SHELL COMMAND' FG_NAME CMD...
# Runs SHELL COMMAND (called NAME) in the background, its output into LOG, while
# CMD (called FG_NAME) runs in the foreground; both run to their end (so one run reports the
# failures of both), then LOG is printed and beside.sh fails when either failed.
# The wall and CPU time of each side (bash's `time`: the processes it waited
# for) close the output, so the log says whether the overlap paid.
#
# make test runs the browser tests beside the Go integration tests this way,
# each layer on its own devcluster: alone, neither keeps 2 cores busy (they
# wait on API servers, informer syncs, Chromium, polls), and the browser tests
# cannot share the integration tests' cluster (e2e/live.spec.ts stops its API
# server; several Go tests count a kind's objects).
set -euo pipefail
name=$1 log=$2 beside=$3 fgname=$4; shift 4
mkdir -p "$(dirname "$log")"
echo "beside.sh: $name runs in the background (its output: $log, printed when both sides end)"

# setsid gives the background side its own process group: a script's
# background job ignores SIGINT, so an interrupted make reaches it only
# through the trap below, which signals the whole group (the test runner, its
# consoles, with-devcluster.sh and its cluster).
setsid bash -c 'TIMEFORMAT="beside.sh: $1 took %0R s wall, %0U s user + %0S s system CPU"; time bash -c "$2"' \
  _ "$name" "$beside" >"$log" 2>&1 </dev/null &
bg=$!
stop_beside() {
  kill -TERM -- "-$bg" 2>/dev/null || true
  wait "$bg" 2>/dev/null || true
}
trap 'stop_beside; exit 130' INT TERM

fg=0 began=$SECONDS
"$@" || fg=$?
wall=$((SECONDS - began))
# The shell's children's CPU so far is the foreground's alone: the background
# side's is counted only once it is waited for (below).
times >"$log.times"
cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f s user + %.0f s system", u[1]*60+u[2], s[1]*60+s[2] }' "$log.times")
rm -f "$log.times"
bgrc=0
wait "$bg" || bgrc=$?
trap - INT TERM

echo "---- beside.sh: $name's output ($log) ----"
cat "$log"
echo "---- beside.sh: end of $name's output ----"
echo "beside.sh: $fgname took $wall s wall, $cpu CPU"
grep -h '^beside.sh: .* took ' "$log" || true
if [ "$fg" -ne 0 ] || [ "$bgrc" -ne 0 ]; then
  echo "beside.sh: failed: $name exited $bgrc, $fgname exited $fg" >&2
  exit 1
fi
