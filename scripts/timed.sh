#!/usr/bin/env bash
# timed.sh NAME CMD...: runs CMD and then says how long it took, wall and CPU
# (its own and its children's), so make test's log gives the minutes of each
# layer (issue 44: CI's time per layer is reported from these lines).
set -uo pipefail
name=$1; shift
TIMEFORMAT="timed: $name took %0R s wall, %0U s user + %0S s system CPU"
time "$@"
