#!/usr/bin/env bash
# repeat.sh: find the flaky tests the way issue 44 asked, so the next flake is
# found the same way. Runs the unit layer $REPEAT times (default 5) with the
# machine loaded ($LOAD busy loops beside it, default one per core: CI's 2
# cores are shared, and a test that waits for a fixed time or for the wrong
# condition fails when its goroutines wait for a core), then the integration
# and browser layers $REPEAT_SLOW times each (default 2; 0 skips them), each
# on a devcluster of its own as make test-integration and make e2e start one.
# Every run's output is kept in .cache/repeat/; at the end, every test that
# failed even once is listed with how many times. Exits 1 when any did.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-5} repeat_slow=${REPEAT_SLOW:-2} load=${LOAD:-$(nproc)}
out=.cache/repeat
rm -rf "$out" && mkdir -p "$out"

hogs=()
stop_hogs() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; hogs=(); }
trap stop_hogs EXIT
start_hogs() { for _ in $(seq 1 "$load"); do (while :; do :; done) & hogs+=($!); done; }

# run NAME CMD...: one run, its output in $out/NAME.log; a failing run is
# recorded, not fatal: the point is to see every test that fails.
run() {
  local name=$1; shift
  echo "repeat: $name"
  if "$@" >"$out/$name.log" 2>&1; then echo "  passed"; else echo "  FAILED (see $out/$name.log)"; fi
}

start_hogs
for i in $(seq 1 "$repeat"); do run "unit-$i" scripts/go-test-unit.sh; done
stop_hogs
for i in $(seq 1 "$repeat_slow"); do
  run "integration-$i" make --no-print-directory test-integration
  run "e2e-$i" make --no-print-directory e2e
done

# A Go test's failure is its "--- FAIL: Name" line (subtests included); a
# Playwright test's is its numbered line in the list reporter's summary,
# "  1) file.spec.ts:12:3 › title ────" (a project's name before the file
# when there is one).
report=$out/failures.txt
{
  grep -ho -- '--- FAIL: [^ ]*' "$out"/*.log 2>/dev/null | sed 's/--- FAIL: //' || true
  grep -hE '^ *[0-9]+\) (\[[^]]*\] › )?[^ ]+\.spec\.ts:[0-9]+:[0-9]+ › ' "$out"/*.log 2>/dev/null |
    sed -E 's/^ *[0-9]+\) //; s/ ─+$//' || true
} | sort | uniq -c | sort -rn >"$report"
if [ -s "$report" ]; then
  echo "repeat: tests that failed at least once (count, name):"
  cat "$report"
  exit 1
fi
echo "repeat: no test failed in $repeat unit runs (load $load) and $repeat_slow integration and browser runs"
