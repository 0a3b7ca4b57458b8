package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Metrics of the manager, parsed from the Prometheus text format.
type metrics map[string]float64

func (e *env) scrape() (metrics, error) {
	resp, err := http.Get(e.metrics)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	m := metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// sum adds every series whose name is name and whose labels contain all of want.
func (m metrics) sum(name string, want ...string) float64 {
	total := 0.0
	for k, v := range m {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for _, w := range want {
			if !strings.Contains(k, w) {
				ok = false
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

func (m metrics) has(prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// quantile of the delta of a histogram between two scrapes.
func quantile(before, after metrics, name, label string, q float64) float64 {
	type bucket struct{ le, n float64 }
	var bs []bucket
	for k, v := range after {
		if !strings.HasPrefix(k, name+"_bucket{") || !strings.Contains(k, label) {
			continue
		}
		i := strings.Index(k, `le="`)
		if i < 0 {
			continue
		}
		rest := k[i+4:]
		leS := rest[:strings.IndexByte(rest, '"')]
		le := math.Inf(1)
		if leS != "+Inf" {
			le, _ = strconv.ParseFloat(leS, 64)
		}
		bs = append(bs, bucket{le, v - before[k]})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].n == 0 {
		return -1
	}
	total := bs[len(bs)-1].n
	prevLe, prevN := 0.0, 0.0
	for _, b := range bs {
		if b.n >= q*total {
			if math.IsInf(b.le, 1) {
				return prevLe
			}
			// linear inside the bucket, as Prometheus' histogram_quantile
			return prevLe + (b.le-prevLe)*(q*total-prevN)/math.Max(b.n-prevN, 1e-9)
		}
		prevLe, prevN = b.le, b.n
	}
	return -1
}

// proc is the manager's CPU seconds and peak RSS.
type proc struct {
	cpu     float64
	peakMiB float64
}

func (e *env) readProc() (proc, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.pid))
	if err != nil {
		return proc{}, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	// fields after the command: state is f[0]; utime and stime are stat fields 14 and 15.
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	p := proc{cpu: (ut + st) / 100} // USER_HZ is 100 on Linux
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.pid))
	if err != nil {
		return p, err
	}
	for _, l := range strings.Split(string(s), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			p.peakMiB = math.Round(kb/1024*10) / 10
		}
	}
	return p, nil
}

// resetPeak makes VmHWM start again from the current RSS (clear_refs 5).
func (e *env) resetPeak() {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", e.pid), []byte("5"), 0o200)
}

// standinStats is what the harness reads of GET /standin/stats (it also serves every arrival).
type standinStats struct {
	Resumed int            `json:"resumed"`
	Finals  int            `json:"finals"`
	SkewMs  float64        `json:"skewMs"`
	Calls   map[string]int `json:"calls"`
}

func (e *env) standinReset() error {
	resp, err := http.Post(e.standin+"/standin/reset", "", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// standinEnd ends every runner at once (their final envelopes answered, k6's status ended).
func (e *env) standinEnd() error {
	resp, err := http.Post(e.standin+"/standin/end", "", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (e *env) standinStats() (standinStats, error) {
	var s standinStats
	resp, err := http.Get(e.standin + "/standin/stats")
	if err != nil {
		return s, err
	}
	defer func() { _ = resp.Body.Close() }()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// writes counts the manager's write requests per namespace in the audit log from offset on.
type writeCount struct {
	Total, Events int
	ByResource    map[string]int
}

func (e *env) auditSize() int64 {
	fi, err := os.Stat(e.auditLog)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (e *env) writes(offset int64, namespaces map[string]bool) (map[string]*writeCount, error) {
	f, err := os.Open(e.auditLog)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	out := map[string]*writeCount{}
	for ns := range namespaces {
		out[ns] = &writeCount{ByResource: map[string]int{}}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	writeVerbs := map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			Verb  string `json:"verb"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Resource, Namespace, Subresource string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" || !writeVerbs[ev.Verb] || ev.User.Username != e.managerUser {
			continue
		}
		w := out[ev.ObjectRef.Namespace]
		if w == nil {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		if res == "events" {
			w.Events++
			continue
		}
		w.Total++
		key := ev.Verb + " " + res
		if ev.ResponseStatus.Code >= 300 {
			key += fmt.Sprintf(" (%d)", ev.ResponseStatus.Code)
		}
		w.ByResource[key]++
	}
	return out, sc.Err()
}
