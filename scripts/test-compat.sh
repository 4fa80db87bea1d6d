#!/usr/bin/env bash
# test-compat.sh: the FlowSchema integration tests again, on the devcluster in
# $DEVCLUSTER_DIR, which must run Kubernetes $DEVCLUSTER_KUBE_VERSION (make
# test-compat starts kube-apiserver v1.28.15: flowcontrol v1beta3, no v1).
# Each test named below must run and pass: a test renamed or deleted (so -run
# no longer finds it) fails this script instead of passing unnoticed.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DEVCLUSTER_DIR:?run under scripts/with-devcluster.sh}" "${DEVCLUSTER_KUBE_VERSION:?the Kubernetes version the tests must find}"
[ -f "$DEVCLUSTER_DIR/ready.json" ] || { echo "test-compat: no devcluster is ready in $DEVCLUSTER_DIR" >&2; exit 1; }

# package:Test pairs
tests=(
  internal/kube:TestClusterCacheSyncsEveryKind
  internal/apf:TestClassifierAgreesWithAPIServer
  handlers:TestFlowSchemaOverviewOnTheDevcluster
  handlers:TestClassifierPageOnTheDevcluster
  handlers:TestClassifierForbiddenWithoutFlowSchemaAccess
  handlers:TestCreateThenDeleteAFlowSchema
  handlers:TestEditErrorsNeverWrite
  handlers:TestFlowSchemaPagesAtTheServedVersion
  handlers:TestFlowSchemaFormCreateThenEdit
)

# The build flags and kept binaries of the other layers (test-build-flags.sh,
# test-binaries.sh): with -trimpath a clean clone reuses the compiled packages,
# and a binary whose inputs did not change is not linked again.
source scripts/test-build-flags.sh
source scripts/test-binaries.sh

declare -A byPkg=()
for t in "${tests[@]}"; do
  byPkg[${t%%:*}]+="${byPkg[${t%%:*}]:+|}${t#*:}"
done
log=$DEVCLUSTER_DIR/test-compat.log
: >"$log"
status=0
for pkg in "${!byPkg[@]}"; do
  out=$DEVCLUSTER_DIR/test-compat.${pkg//\//-}.log
  go_test_kept compat "${test_build_flags[@]}" -count=1 -tags integration -p 1 -v -run "^(${byPkg[$pkg]})\$" -- "./$pkg" >"$out" 2>&1 || status=1
  cat "$out" >>"$log"
  # the verdicts and failures, without the passing tests' chatter
  grep -E '^\s*(--- (PASS|FAIL)|ok |FAIL|panic:|# )|\.go:[0-9]+:' "$out" | grep -v -- '--- PASS: .*/' || true
done
for t in "${tests[@]}"; do
  if ! grep -qE "^--- PASS: ${t#*:} " "$log"; then
    echo "test-compat: ${t#*:} (./${t%%:*}) did not pass on Kubernetes $DEVCLUSTER_KUBE_VERSION; full output in $log" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "test-compat: ${#tests[@]} tests passed on Kubernetes $DEVCLUSTER_KUBE_VERSION"
exit "$status"
