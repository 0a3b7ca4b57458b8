// Command standin is the ONE stand-in of the scale benchmark (hack/scale/run.sh): kwok simulates
// nodes and pods but runs no containers, so no k6 answers on a simulated pod's IP. This server
// answers k6's REST API as a runner started with --paused would, on every pod IP at once (the
// benchmark routes the whole pod CIDR to the loopback device of its own network namespace and
// this listens on 0.0.0.0), plus fleetbench's live port. Everything else in the benchmark is
// real: etcd, kube-apiserver, kube-controller-manager (the Job controller), kube-scheduler and
// the fleetbench manager.
//
// It records, per pod IP, when the PATCH /v1/status that un-paused it arrived (monotonic clock)
// and serves what it recorded on the control address: GET /standin/stats, POST /standin/reset.
// POST /standin/end ends every runner at once, as k6 ending its test: each held final-envelope
// request is answered with a clean final envelope and k6's status reads ended.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// k6's lib.ExecutionStatus values the operator reads (runner_access.go: >= 9 is ended).
const (
	statusPaused  = 5
	statusRunning = 8
	statusEnded   = 9
)

type runner struct {
	resumedAt time.Duration // since process start, monotonic; 0 = still paused
	stopped   bool
}

type server struct {
	start time.Time
	mu    sync.Mutex
	by    map[string]*runner
	calls map[string]int
	// ended is closed by POST /standin/end; reset makes a new one. finals counts the final
	// envelopes answered since.
	ended  chan struct{}
	finals int
}

func (s *server) ip(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if host, _, err := net.SplitHostPort(a.String()); err == nil {
			return host
		}
	}
	return "unknown"
}

func (s *server) runner(ip string) *runner {
	rn := s.by[ip]
	if rn == nil {
		rn = &runner{}
		s.by[ip] = rn
	}
	return rn
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func statusDoc(rn *runner, ended bool) map[string]any {
	st, paused := statusPaused, true
	if rn.resumedAt != 0 {
		st, paused = statusRunning, false
	}
	if ended {
		st = statusEnded
	}
	return map[string]any{"data": map[string]any{"type": "status", "id": "default", "attributes": map[string]any{
		"status": st, "paused": paused, "stopped": rn.stopped, "running": !paused, "tainted": false, "vus": 0, "vus-max": 0,
	}}}
}

// k6API is port 6565: status, setup and teardown.
func (s *server) k6API(w http.ResponseWriter, r *http.Request) {
	// Taken before the lock: the arrival time must not include waiting for other requests.
	now := time.Since(s.start)
	ip := s.ip(r)
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[r.Method+" "+r.URL.Path+" ("+r.UserAgent()+")"]++
	rn := s.runner(ip)
	ended := isClosed(s.ended)
	switch {
	case r.URL.Path == "/v1/status" && r.Method == http.MethodGet:
		writeJSON(w, statusDoc(rn, ended))
	case r.URL.Path == "/v1/status" && r.Method == http.MethodPatch:
		var req struct {
			Data struct {
				Attributes struct {
					Paused  *bool `json:"paused"`
					Stopped *bool `json:"stopped"`
				} `json:"attributes"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"errors": []map[string]string{{"title": "bad body", "detail": err.Error()}}})
			return
		}
		if p := req.Data.Attributes.Paused; p != nil && !*p && rn.resumedAt == 0 {
			rn.resumedAt = max(now, 1)
		}
		if st := req.Data.Attributes.Stopped; st != nil && *st {
			rn.stopped = true
		}
		writeJSON(w, statusDoc(rn, ended))
	case r.URL.Path == "/v1/setup" && (r.Method == http.MethodPost || r.Method == http.MethodPut):
		writeJSON(w, map[string]any{"data": map[string]any{"type": "setupData", "id": "default", "attributes": map[string]any{"data": nil}}})
	case r.URL.Path == "/v1/teardown" && r.Method == http.MethodPost:
		writeJSON(w, map[string]any{"data": map[string]any{"type": "teardown", "id": "default"}})
	default:
		http.NotFound(w, r)
	}
}

// live is fleetbench's live port: the readiness, an empty but valid envelope, the linger release
// and the final envelope's held request.
func (s *server) live(w http.ResponseWriter, r *http.Request) {
	ip := s.ip(r)
	s.mu.Lock()
	s.calls[r.Method+" "+r.URL.Path]++
	rn := s.runner(ip)
	resumed := rn.resumedAt
	ended := s.ended
	s.mu.Unlock()
	switch {
	case r.URL.Path == measure.LivePath && r.Method == http.MethodGet:
		s.envelope(w, ip, resumed, false)
	case r.URL.Path == measure.ReadyPath && r.Method == http.MethodGet:
		w.WriteHeader(http.StatusOK) // the script loaded and the target reached, as a real runner's
	case r.URL.Path == measure.ReleasePath && r.Method == http.MethodPost:
		w.WriteHeader(http.StatusOK)
	case r.URL.Path == measure.FinalPath && r.Method == http.MethodGet:
		// Held, as k6 holds it, until the runner ends (POST /standin/end) or the caller gives up.
		select {
		case <-r.Context().Done():
			return
		case <-ended:
		}
		s.envelope(w, ip, resumed, true)
		s.mu.Lock()
		s.finals++
		s.mu.Unlock()
	default:
		http.NotFound(w, r)
	}
}

// envelope answers an empty but valid envelope of the runner at ip, final or live.
func (s *server) envelope(w http.ResponseWriter, ip string, resumed time.Duration, final bool) {
	now := time.Now().UnixNano()
	startNs := now
	if resumed != 0 {
		startNs = s.start.Add(resumed).UnixNano()
	}
	env := measure.Envelope{Runner: ip, K6Version: "standin", StartUnixNano: startNs, EndUnixNano: now, Final: final,
		WindowNanos: int64(time.Second), Accuracy: measure.RelativeAccuracy, Metrics: []measure.Metric{}}
	var b bytes.Buffer
	if err := measure.Encode(&b, &env); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(b.Bytes())
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// end ends every runner: held final requests answer, k6's status reads ended.
func (s *server) end(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	if !isClosed(s.ended) {
		close(s.ended)
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// stats is the control endpoint: every un-pause arrival, and the spread of them.
func (s *server) stats(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type arrival struct {
		IP string `json:"ip"`
		Ns int64  `json:"ns"`
	}
	var arr []arrival
	for ip, rn := range s.by {
		if rn.resumedAt != 0 {
			arr = append(arr, arrival{ip, int64(rn.resumedAt)})
		}
	}
	sort.Slice(arr, func(i, j int) bool { return arr[i].Ns < arr[j].Ns })
	out := map[string]any{"resumed": len(arr), "seen": len(s.by), "calls": s.calls, "arrivals": arr, "finals": s.finals}
	if len(arr) > 0 {
		out["firstNs"], out["lastNs"] = arr[0].Ns, arr[len(arr)-1].Ns
		out["skewMs"] = float64(arr[len(arr)-1].Ns-arr[0].Ns) / 1e6
	}
	writeJSON(w, out)
}

func (s *server) reset(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	s.by, s.calls, s.ended, s.finals = map[string]*runner{}, map[string]int{}, make(chan struct{}), 0
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func serve(addr string, h http.Handler) {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

func main() {
	control := flag.String("control", "127.0.0.1:6599", "Address of /standin/stats and /standin/reset.")
	flag.Parse()
	s := &server{start: time.Now(), by: map[string]*runner{}, calls: map[string]int{}, ended: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/standin/stats", s.stats)
	mux.HandleFunc("/standin/reset", s.reset)
	mux.HandleFunc("/standin/end", s.end)
	go serve(*control, mux)
	go serve(":"+strconv.Itoa(runners.LivePort), http.HandlerFunc(s.live))
	log.Printf("stand-in for paused k6 runners on :%d and :%d, control on %s", runners.APIPort, runners.LivePort, *control)
	serve(":"+strconv.Itoa(runners.APIPort), http.HandlerFunc(s.k6API))
}
