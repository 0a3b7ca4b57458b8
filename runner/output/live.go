package output

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// serveLive starts the live endpoint on cfg.Live; it stops with the output.
func (o *Output) serveLive() error {
	ln, err := net.Listen("tcp", o.cfg.Live)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// The operator merges these mid-run (peak steps); the encoding is the log's, markers included.
	mux.HandleFunc("GET "+measure.LivePath, func(w http.ResponseWriter, _ *http.Request) {
		o.mu.Lock()
		b := o.encode(false, nil)
		o.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		// The operator reserves memory for an answer by its announced length.
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b) //nolint:errcheck // the reader retries on its next evaluation
	})
	mux.HandleFunc("GET "+measure.ReadyPath, func(w http.ResponseWriter, _ *http.Request) {
		if !o.reached() {
			http.Error(w, "waiting until the target accepts connections from this runner", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET "+measure.FinalPath, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-o.finalReady:
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", strconv.Itoa(len(o.final)))
			w.Write(o.final) //nolint:errcheck // the operator falls back to the log
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST "+measure.ReleasePath, func(w http.ResponseWriter, _ *http.Request) {
		o.releaseOnce.Do(func() {
			// The load and teardown() are over: print the final envelope before ending the
			// linger, so the log holds it however k6's shutdown goes (Stop prints it again,
			// and a reader takes the last).
			_, _ = o.printFinal(nil) // Stop prints it again and reports a failing stdout
			o.release()
		})
		w.WriteHeader(http.StatusAccepted)
	})
	o.live = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go o.live.Serve(ln) //nolint:errcheck // ErrServerClosed once stopped
	return nil
}

// interruptSelf sends this process SIGINT: k6 ends a linger on it (a second one would kill).
func interruptSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

func (o *Output) stopLive() {
	if o.live == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := o.live.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = o.live.Close()
	}
}
