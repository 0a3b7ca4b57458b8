package fidelity

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// token is what POST /login hands out and GET /items/{id} wants.
const token = "fidelity-token"

// HitsPath answers how many requests the counted routes served since the last ask, and resets
// the count; it is not counted itself, so a driver can read it between runs.
const HitsPath = "/_fidelity/hits"

// Hits is HitsPath's answer.
type Hits struct {
	HTTP int64 `json:"http"`
}

// Server is the corpus's HTTP system under test: a few routes, and a count of what it served.
type Server struct {
	served atomic.Int64
	routes *http.ServeMux
}

// NewServer builds the routes the corpus scripts call.
func NewServer() *Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }) //nolint:errcheck
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "bad status", http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d", code)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		writeJSON(w, map[string]string{"method": r.Method, "query": r.URL.RawQuery, "body": string(body)})
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		time.Sleep(time.Duration(min(max(ms, 0), 1000)) * time.Millisecond)
		io.WriteString(w, "slow") //nolint:errcheck
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"token": token})
	})
	mux.HandleFunc("POST /logout", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, _ *http.Request) {
		items := make([]map[string]any, 25)
		for i := range items {
			items[i] = map[string]any{"id": i + 1, "price": 5 * (i + 1)}
		}
		writeJSON(w, items)
	})
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, map[string]int{"id": id})
	})
	// Cookies and redirects, in the shape of httpbin's (which k6's cookie examples call).
	mux.HandleFunc("GET /cookies/set", func(w http.ResponseWriter, r *http.Request) {
		for name, values := range r.URL.Query() {
			http.SetCookie(w, &http.Cookie{Name: name, Value: values[0], Path: "/"})
		}
		http.Redirect(w, r, "/cookies", http.StatusFound)
	})
	mux.HandleFunc("GET /cookies", func(w http.ResponseWriter, r *http.Request) {
		cookies := map[string]string{}
		for _, c := range r.Cookies() {
			cookies[c.Name] = c.Value
		}
		writeJSON(w, map[string]any{"cookies": cookies})
	})
	mux.HandleFunc("GET /redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		switch {
		case err != nil || n < 0 || n > 20:
			http.Error(w, "bad count", http.StatusBadRequest)
		case n == 0:
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			http.Redirect(w, r, "/redirect/"+strconv.Itoa(n-1), http.StatusFound)
		}
	})
	return &Server{routes: mux}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == HitsPath {
		writeJSON(w, s.Reset())
		return
	}
	s.served.Add(1)
	s.routes.ServeHTTP(w, r)
}

// Reset returns what was served since the last reset.
func (s *Server) Reset() Hits { return Hits{HTTP: s.served.Swap(0)} }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}
