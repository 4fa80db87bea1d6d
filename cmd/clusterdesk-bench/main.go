// Command clusterdesk-bench measures live updates end to end on the devcluster
// (run it under scripts/with-devcluster.sh; `make bench` does). It starts the
// console's live path in a child process (this binary, "serve"), connects 1, 100
// and 1,000 server-sent event clients to the CSR stream over loopback, patches
// CSR annotations on the real API server at a fixed rate, and prints the
// write → event latency, the server's goroutines and memory, and the watches the
// console holds on the API server. A last round adds a client that reads
// nothing. Every round is bounded in time; nothing leaves the machine.
package main

import (
	"fmt"
	"os"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		err = serve()
	} else {
		err = run(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clusterdesk-bench:", err)
		os.Exit(1)
	}
}
