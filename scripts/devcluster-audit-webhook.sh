#!/usr/bin/env bash
# Prints the console's audit webhook flags for the devcluster in DIR (its
# ready.json's auditWebhook), one per line, so that `make run` serves as the
# devcluster API server's audit webhook backend and fills the ledger.
set -euo pipefail
dir=${1:?usage: $0 DEVCLUSTER_DIR}
field() { grep -o "\"$1\": *\"[^\"]*\"" "$dir/ready.json" | head -1 | sed 's/.*: *"\(.*\)"/\1/'; }
listen=$(field listen)
if [ -z "$listen" ]; then
  echo "$0: $dir/ready.json has no auditWebhook: rebuild the devcluster (make devcluster)" >&2
  exit 1
fi
echo "--audit-webhook-listen=$listen"
echo "--audit-webhook-tls-cert=$(field certFile)"
echo "--audit-webhook-tls-key=$(field keyFile)"
echo "--audit-webhook-client-ca=$(field clientCAFile)"
