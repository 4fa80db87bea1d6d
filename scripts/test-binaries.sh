# test-binaries.sh, sourced by the scripts that run go test (go-test-unit.sh,
# go-test-integration.sh, fuzz.sh, go-test-kept.sh): keeps every test binary
# between runs, so that a package whose binary is up to date is not linked
# again.
#
# Why: go test links each test binary again on every run (the Go build cache
# keeps compiled packages, not linked test binaries), and linking was one of
# make test's three largest costs: 471-526 of the ~3,000 CPU-s of a CI run,
# for about 150 binaries (stop 60's /proc sampler, CI5 and CI6), beside
# Chromium and the API servers. With -o DIR/, go test also writes each binary
# to DIR, and on the next run it compares the build ID inside that copy with
# the ID of the binary it would link (a hash of every input: sources,
# dependencies, flags, toolchain): the same ID, it runs the copy as it is; any
# other, it links a new one. Nothing is skipped but the link: every test runs.
#
# The binaries live outside the checkout (a clean clone finds them), in
# $CLUSTERDESK_TEST_BINARIES or the user's cache directory, one directory per
# pass (the caller's NAME) and group. go test -o DIR/ names a binary after the
# last element of its package's path, so packages that share one
# (internal/ledger and handlers/ledger) go to separate groups, each group its
# own go test and its own directory, NAME-1, NAME-2 and so on. Named by pass
# and group, not by the list of packages: a package added to a pass links its
# own binary, not the pass's again. A directory is locked while its go test
# runs: a second checkout testing at the same time uses a temporary one
# instead of overwriting a binary the first is running.

kept_binaries_root=${CLUSTERDESK_TEST_BINARIES:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterdesk-test-binaries}

# keep_binaries_in NAME: sets kept_dir to the kept binaries' directory NAME,
# locked until release_kept_dir (or the script's end); a temporary directory,
# removed by release_kept_dir, when another run holds it.
keep_binaries_in() {
  mkdir -p "$kept_binaries_root"
  # Directories not tested from for two weeks (a pass renamed or gone):
  # their binaries would never be run again.
  find "$kept_binaries_root" -mindepth 1 -maxdepth 1 -mtime +14 -exec rm -rf {} + 2>/dev/null || true
  kept_dir=$kept_binaries_root/$1
  mkdir -p "$kept_dir"
  # Both fresh, so that no other run's pruning takes them while in use.
  touch "$kept_dir" "$kept_dir.lock"
  kept_tmp=
  exec {kept_lock}>>"$kept_dir.lock"
  if ! flock -n "$kept_lock"; then
    exec {kept_lock}>&-
    kept_lock=
    kept_dir=$(mktemp -d)
    kept_tmp=$kept_dir
    echo "test-binaries: another run is using $kept_binaries_root/$1; linking into $kept_dir" >&2
  fi
}

release_kept_dir() {
  if [ -n "${kept_lock:-}" ]; then exec {kept_lock}>&-; fi
  if [ -n "${kept_tmp:-}" ]; then rm -rf "$kept_tmp"; fi
  kept_lock= kept_tmp=
}

# go_test_kept NAME GO_TEST_ARGS... -- PACKAGES...: go test GO_TEST_ARGS
# PACKAGES, keeping the binaries in the directories NAME-<group>. Runs every
# group even when one fails; fails when any did. Two runs at the same time
# (make test's passes and lanes) must have different NAMEs.
go_test_kept() {
  local name=$1 args=() groups=() rc=0 i
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] || { echo "go_test_kept: no -- before the packages" >&2; return 2; }
  shift
  [ $# -gt 0 ] || return 0
  # The k-th package of each last path element goes to group k.
  mapfile -t groups < <(printf '%s\n' "$@" | awk '{ base = $0; sub(/.*\//, "", base); n = ++seen[base]; group[n] = group[n] " " $0; if (n > max) max = n }
    END { for (i = 1; i <= max; i++) print substr(group[i], 2) }')
  for i in "${!groups[@]}"; do
    keep_binaries_in "$name-$((i + 1))"
    # shellcheck disable=SC2086 # a group is a list of packages
    go test -o "$kept_dir/" "${args[@]}" ${groups[$i]} || rc=1
    release_kept_dir
  done
  return $rc
}
