#!/usr/bin/env bash
# with-devcluster.sh DIR [--seed] CMD...
# Starts the devcluster with its state in DIR, waits until it is ready, runs CMD
# with DEVCLUSTER_DIR=DIR exported, and stops the cluster however CMD ends.
# --seed loads the demo data (and $FIXTURES, the shared real-world manifests, when present).
# $DEVCLUSTER_APISERVER_VERSION (e.g. 1.28) runs that Kubernetes release instead of the default.
# $DEVCLUSTER_APISERVERS (e.g. 2) runs that many kube-apiserver instances (default 1);
# the kubeconfigs point at the first; with $DEVCLUSTER_STANDBY=1 the others are paused once ready
# (devcluster up --standby) until a test resumes them (internal/testcluster.APIServers).
# $DEVCLUSTER_TOOL and $DEVCLUSTER_BIN_DIR override the devcluster binary and the control-plane
# binaries' directory (default: both in .cache/bin), e.g. to try a devcluster built from a branch.
set -euo pipefail
dir=$(realpath -m "$1"); shift
seed=()
if [ "${1:-}" = "--seed" ]; then
  shift
  seed=(--seed demo)
  if [ -n "${FIXTURES:-}" ] && [ -d "$FIXTURES" ]; then seed+=(--fixtures "$FIXTURES"); fi
fi
if [ -n "${DEVCLUSTER_APISERVER_VERSION:-}" ]; then seed+=(--apiserver-version "$DEVCLUSTER_APISERVER_VERSION"); fi
if [ -n "${DEVCLUSTER_APISERVERS:-}" ]; then seed+=(--apiservers "$DEVCLUSTER_APISERVERS"); fi
if [ "${DEVCLUSTER_STANDBY:-}" = 1 ]; then seed+=(--standby); fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DEVCLUSTER_BIN_DIR:-$root/.cache/bin}
tool=${DEVCLUSTER_TOOL:-$bin/devcluster}
mkdir -p "$dir"
rm -f "$dir/ready.json"

"$tool" up --dir "$dir" --bin-dir "$bin" "${seed[@]}" >"$dir/devcluster.out" 2>&1 &
pid=$!
began=$SECONDS
# children_cpu sets cpu_user and cpu_system to the CPU seconds of this
# shell's children that have ended, from bash's `times` (its second line),
# run here: in a subshell (a command substitution) it would report the
# subshell's own children.
times_file=$(mktemp)
children_cpu() {
  times >"$times_file"
  read -r cpu_user cpu_system < <(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f %.0f\n", u[1]*60+u[2], s[1]*60+s[2] }' "$times_file")
}
stop() {
  children_cpu
  local user=$cpu_user system=$cpu_system
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # What the cluster itself cost (its API servers, etcd, controller manager,
  # OIDC provider), apart from CMD's: issue 44 asks where CI's CPU goes.
  children_cpu
  rm -f "$times_file"
  echo "with-devcluster.sh: the devcluster in $dir used $((cpu_user - user)) s user + $((cpu_system - system)) s system CPU over $((SECONDS - began)) s" >&2
}
trap stop EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 600); do
  [ -f "$dir/ready.json" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "devcluster exited before it was ready; its output:" >&2
    cat "$dir/devcluster.out" >&2
    exit 1
  fi
  sleep 0.5
done
if [ ! -f "$dir/ready.json" ]; then
  echo "devcluster was not ready after 300 s; its output:" >&2
  cat "$dir/devcluster.out" >&2
  exit 1
fi
echo "devcluster ready: kubeconfigs in $dir/kubeconfigs (log: $dir/devcluster.out)"
export DEVCLUSTER_DIR=$dir
"$@"
