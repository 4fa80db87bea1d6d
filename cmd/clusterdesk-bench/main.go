// Command clusterdesk-bench measures live updates end to end on the devcluster
// (run it under scripts/with-devcluster.sh; `make bench` does). It starts the
// console's live path in a child process (this binary, "serve"), connects 1, 100,
// 1,000 and 5,000 server-sent event clients to the CSR stream over loopback,
// each a simulated browser and person with a session of its own (the console
// allows one user a dozen tabs), patches
// CSR annotations on the real API server at a fixed rate, and prints the
// write → event latency, the server's goroutines and memory, and the watches the
// console holds on the API server. A last round adds a client that reads
// nothing. Every round is bounded in time; nothing leaves the machine. A round
// in which a tab does not subscribe, or an event does not reach every tab,
// fails the run (make test runs a short round for exactly that).
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
