#!/usr/bin/env bash
# go-install-tool.sh DEST VERSION PACKAGE [LDFLAGS]: the tool PACKAGE@VERSION
# (a main package on the Go module proxy) built with go install into DEST,
# once: nothing is done when DEST.version already says VERSION.
#
# A built tool is also kept in a cache shared by every checkout,
# $TOOL_CACHE (default $XDG_CACHE_HOME/clusterdesk-tools, ~/.cache/...; "off"
# for none), under its name, version, ldflags and Go toolchain, and a fresh
# clone takes it from there. Why: DEST is the checkout's .cache/bin, and CI
# runs on a fresh clone, where go install linked oauth2-proxy, helm and helm
# v3 again although the Go build cache held every compiled package (links of
# ~100 MB binaries, most of a minute of CI's 2 cores).
set -euo pipefail
dest=$1 version=$2 pkg=$3 ldflags=${4:-}
name=$(basename "$dest")
if [ -x "$dest" ] && [ "$(cat "$dest.version" 2>/dev/null)" = "$version" ]; then
  echo "$name $version is up to date ($dest)"
  exit 0
fi
cache=${TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterdesk-tools}
key=$(printf '%s\n' "$pkg" "$version" "$ldflags" "$(go env GOVERSION)" | sha256sum | cut -c1-16)
cached=$cache/$name-$version-$key
mkdir -p "$(dirname "$dest")"
if [ "$cache" != off ] && [ -x "$cached" ]; then
  echo "$name $version taken from the shared cache ($cached)"
  # A hard link when on one file system, else a copy; renamed into place so
  # a running tool is never overwritten.
  if ! [ "$cached" -ef "$dest" ]; then # already the same file when only the .version was missing
    ln -f "$cached" "$dest.tmp.$$" 2>/dev/null || cp "$cached" "$dest.tmp.$$"
    mv -f "$dest.tmp.$$" "$dest"
  fi
else
  echo "installing $name $version into $dest"
  gobin=$(mktemp -d "$(dirname "$dest")/.go-install.XXXXXX")
  trap 'rm -rf "$gobin"' EXIT
  GOBIN=$(cd "$gobin" && pwd) go install -ldflags "$ldflags" "$pkg@$version"
  built=("$gobin"/*)
  [ ${#built[@]} -eq 1 ] || { echo "go-install-tool.sh: go install $pkg made ${#built[@]} files, want 1" >&2; exit 1; }
  mv -f "${built[0]}" "$dest"
  if [ "$cache" != off ] && mkdir -p "$cache"; then
    ln -f "$dest" "$cached.tmp.$$" 2>/dev/null || cp "$dest" "$cached.tmp.$$"
    mv -f "$cached.tmp.$$" "$cached"
  fi
fi
echo "$version" > "$dest.version"
