// Command target serves the fidelity corpus's routes (test/fidelity) on :8080 for make e2e,
// which runs corpus scripts as TestRuns against it and reads its count at fidelity.HitsPath.
package main

import (
	"log"
	"net/http"
	"time"

	"fleetbench.dev/fleetbench/test/fidelity"
)

func main() {
	srv := &http.Server{Addr: ":8080", Handler: fidelity.NewServer(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
