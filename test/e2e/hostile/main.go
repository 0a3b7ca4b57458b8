// Command hostile is the e2e suite's stand-in for a hostile tenant's runner image: what a user
// who may set spec.runner.image, or create a pod carrying a run's runner labels, can make a
// "runner" answer the manager. It never runs k6.
//
//	MODE=redirect  every call but GET /v1/status and the readiness path (which keep the pod
//	               Ready) is answered with a 307 to $REDIRECT plus the path: a manager that
//	               follows it sends its request, method and body to whatever the tenant names.
//	MODE=bomb      answers like a k6 that starts and ends at once, and every result envelope is
//	               a well-formed decompression bomb (15 MiB of JSON, within the manager's
//	               limit on JSON, that would decode into gigabytes; tens of KiB gzipped).
//
// `hostile check ...` (the script pre-flight) exits 0. GET :8080/requests says how many calls
// it got that were not the kubelet's probes.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// The runner's ports and paths (pkg/runners, pkg/measure), written out: this image stands for
// a tenant's code, which does not import fleetbench.
const (
	apiPort     = ":6565"
	livePort    = ":6566"
	readyPath   = "/v1/fleetbench/ready"
	countPort   = ":8080"
	beginMarker = "--- fleetbench-result v1 begin ---"
	endMarker   = "--- fleetbench-result v1 end ---"
)

var calls atomic.Int64

func main() {
	// The operator's pre-flight (fleetbench-runner check; k6 inspect before it): a tenant's
	// image may pass it by exiting 0.
	if len(os.Args) > 1 && (os.Args[1] == "check" || os.Args[1] == "inspect") {
		fmt.Println("{}")
		return
	}
	mode, redirect := os.Getenv("MODE"), os.Getenv("REDIRECT")
	bomb := bombEnvelope()
	var resumed atomic.Int64
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := strings.HasPrefix(r.UserAgent(), "kube-probe/")
		if !probe {
			calls.Add(1)
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == readyPath:
			// The runner's readiness (the kubelet's probe, the manager's ask before the start).
			fmt.Fprintln(w, "ok")
		case r.Method == http.MethodGet && r.URL.Path == "/v1/status":
			// k6's execution status: 9 (ended) a few seconds after the resume, so the manager
			// goes on to collect the final envelope.
			status := 7
			if at := resumed.Load(); at > 0 && time.Since(time.Unix(0, at)) > 3*time.Second {
				status = 9
			}
			fmt.Fprintf(w, `{"data":{"type":"status","id":"default","attributes":{"status":%d,"paused":%v,"stopped":false,"running":true,"tainted":false,"vus":1,"vus-max":1}}}`,
				status, resumed.Load() == 0)
		case mode == "redirect":
			http.Redirect(w, r, redirect+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		case r.Method == http.MethodPatch && r.URL.Path == "/v1/status":
			resumed.CompareAndSwap(0, time.Now().UnixNano())
			fmt.Fprint(w, `{"data":{"type":"status","id":"default","attributes":{}}}`)
		case strings.HasPrefix(r.URL.Path, "/v1/fleetbench/"):
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(bomb)
		default:
			fmt.Fprint(w, `{"data":{"type":"status","id":"default","attributes":{}}}`)
		}
	})
	count := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, calls.Load()) })
	go serve(livePort, api)
	go serve(countPort, count)
	serve(apiPort, api)
}

func serve(addr string, h http.Handler) {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// bombEnvelope is an envelope with a valid checksum whose JSON is 15 MiB of empty timeline
// windows (five million), each of which a plain decode turns into a whole window struct.
func bombEnvelope() []byte {
	var raw bytes.Buffer
	raw.WriteString(`{"version":1,"final":true,"metrics":[{"name":"http_reqs","type":"counter","series":[{"total":{},"windows":[{}`)
	for raw.Len() < 15<<20 {
		raw.WriteString(`,{}`)
	}
	raw.WriteString(`]}]}]}`)
	sum := sha256.Sum256(raw.Bytes())
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = zw.Write(raw.Bytes())
	_ = zw.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nencoding=gzip+base64 bytes=%d sha256=%s\n", beginMarker, raw.Len(), hex.EncodeToString(sum[:]))
	enc := base64.StdEncoding.EncodeToString(z.Bytes())
	for len(enc) > 0 {
		n := min(76, len(enc))
		b.WriteString(enc[:n] + "\n")
		enc = enc[n:]
	}
	b.WriteString(endMarker + "\n")
	return b.Bytes()
}
