// Command devcluster runs a real Kubernetes control plane on loopback for
// clusterdesk's integration tests and demos: kube-apiserver and
// kube-controller-manager built from k8s.io/kubernetes, with etcd embedded.
//
//	devcluster build [--bin-dir DIR] [--version 1.36|1.28]
//	devcluster up [--dir DIR] [--bin-dir DIR] [--apiserver-version 1.36|1.28] [--apiservers N [--standby]] [--seed demo] [--fixtures PATH]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `devcluster runs a real Kubernetes control plane on 127.0.0.1 for clusterdesk.

Usage:
  devcluster build [--bin-dir DIR] [--version 1.36|1.28]
      Build kube-apiserver and kube-controller-manager from source into DIR.
      The first build takes ~5 minutes on 2 cores; it is skipped while the
      binaries match go.mod, go.sum and the Go toolchain.
      --version 1.28 builds kube-apiserver v1.28.15 alone (from the module in
      compat/v1.28) into DIR/v1.28.

  devcluster up [--dir DIR] [--bin-dir DIR] [--apiserver-version 1.36|1.28] [--apiservers N [--standby]] [--seed demo] [--fixtures PATH]
      Build if needed, then run etcd (embedded), kube-apiserver and
      kube-controller-manager (CSR signer and cleaner) in the foreground.
      --apiserver-version 1.28 runs kube-apiserver v1.28.15 (flowcontrol
      v1beta3, no v1) without a controller manager.
      --apiservers N runs N kube-apiserver instances on the one etcd, instance
      K on 127.0.0.K (same port), all listed in the default/kubernetes
      EndpointSlice; the kubeconfigs and the controller manager use the first.
      --standby pauses the instances after the first (SIGSTOP) once the
      cluster is ready (ready.json marks them "standby"): they cost no CPU
      until a test resumes one with SIGCONT.
      When the cluster is ready it writes DIR/kubeconfigs/{admin,auditor,approver}.kubeconfig
      and then DIR/ready.json. Logs go to DIR/logs, the audit log to DIR/audit.log.

Signals to a running "devcluster up":
  SIGINT, SIGTERM  stop everything, remove ready.json, exit 0
  SIGUSR1          stop kube-apiserver (simulate an outage; ready.json stays)
  SIGUSR2          start kube-apiserver again on the same port
  (instance 1; stop another instance with SIGSTOP/SIGCONT to its pid in ready.json)

Run "devcluster build -h" or "devcluster up -h" for the flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "up":
		err = runUp(os.Args[2:])
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "devcluster: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if errors.Is(err, errReported) {
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		os.Exit(1)
	}
}
