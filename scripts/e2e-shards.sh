#!/usr/bin/env bash
# e2e-shards.sh N LOGDIR
# Runs the browser tests as N shards side by side, each on a devcluster of its
# own: shard 1 on the one in $DEVCLUSTER_DIR (already up and seeded), shards
# 2..N each on a seeded devcluster they start. Each spec file runs in exactly
# one shard, one test at a time as before (one Playwright worker per shard):
# the tests change cluster state (approve CSRs, stop the API server in
# live.spec.ts), so two shards never share a cluster.
#
# Why: one worker keeps about 0.7 of CI's 2 cores busy (Chromium, the API
# server, Playwright's round trips), and the browser layer was the longest
# part of make test (1,506 s for 136 tests, beside the integration layer).
#
# Files are dealt longest first to the shard with the least work so far, by
# the seconds in e2e/shard-seconds.tsv (20 s for a file not listed there);
# shard 1 starts about a minute before the others (their clusters come up
# meanwhile), so it is credited with that minute less.
# Each shard's output goes to LOGDIR/e2e-K.log; all are printed at the end,
# and e2e-shards.sh fails when any shard failed.
set -euo pipefail
n=$1 logdir=$2
cd "$(dirname "$0")/.."
root=$PWD
: "${DEVCLUSTER_DIR:?e2e-shards.sh runs shard 1 on the devcluster in DEVCLUSTER_DIR}"
mkdir -p "$logdir"
cache=$root/.cache

mapfile -t assignment < <(ls e2e/*.spec.ts | awk -v n="$n" -v weights=e2e/shard-seconds.tsv '
  BEGIN { while ((getline line < weights) > 0) { if (line ~ /^#/) continue; split(line, f, "\t"); w[f[1]] = f[2] } }
  { file = $0; base = file; sub(/.*\//, "", base); cost[file] = (base in w) ? w[base] : 20; files[++count] = file }
  END {
    load[1] = -60
    for (k = 2; k <= n; k++) load[k] = 0
    # longest first: a selection sort is enough for ~40 files
    for (i = 1; i <= count; i++) for (j = i + 1; j <= count; j++) if (cost[files[j]] > cost[files[i]]) { t = files[i]; files[i] = files[j]; files[j] = t }
    for (i = 1; i <= count; i++) {
      best = 1
      for (k = 2; k <= n; k++) if (load[k] < load[best]) best = k
      load[best] += cost[files[i]]
      print best "\t" files[i]
    }
  }')

shard_files() { for a in "${assignment[@]}"; do [ "${a%%$'\t'*}" = "$1" ] && echo "$root/${a#*$'\t'}"; done; }

# Screenshots of every shard go to one e2e/artifacts (the global setup of a
# shard leaves it alone): cleared once, here.
rm -rf e2e/artifacts

pids=()
for k in $(seq 1 "$n"); do
  mapfile -t files < <(shard_files "$k")
  echo "e2e-shards: shard $k/$n runs ${#files[@]} files: $(printf '%s ' "${files[@]##*/}")"
  run=(env E2E_SHARD="$k" XDG_STATE_HOME="$cache/test-state-e2e-$k" npm run --silent e2e -- "${files[@]}")
  if [ "$k" = 1 ]; then
    "${run[@]}" >"$logdir/e2e-$k.log" 2>&1 &
  else
    rm -rf "$cache/devcluster-test-e2e-$k"
    DEVCLUSTER_APISERVERS=${DEVCLUSTER_APISERVERS:-1} \
      scripts/with-devcluster.sh "$cache/devcluster-test-e2e-$k" --seed "${run[@]}" >"$logdir/e2e-$k.log" 2>&1 &
  fi
  pids+=($!)
done
failed=()
for k in $(seq 1 "$n"); do
  wait "${pids[$((k - 1))]}" || failed+=("$k")
done
for k in $(seq 1 "$n"); do
  echo "---- e2e-shards: shard $k/$n ($logdir/e2e-$k.log) ----"
  cat "$logdir/e2e-$k.log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "e2e-shards: shard(s) ${failed[*]} of $n failed" >&2
  exit 1
fi
