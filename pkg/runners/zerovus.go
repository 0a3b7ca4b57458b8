package runners

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// ScenarioVUs is what one k6 scenario asks of VUs, as its consolidated options say.
type ScenarioVUs struct {
	Name, Executor string
	// VUs is what the scenario runs with: vus (constant-vus, per-vu-iterations,
	// shared-iterations), the most a ramping-vus scenario reaches, or an arrival-rate
	// scenario's preAllocatedVUs.
	VUs int64
	// MaxVUs is an arrival-rate scenario's maxVUs (preAllocatedVUs when unset, as k6 does).
	MaxVUs int64
}

func (s ScenarioVUs) arrivalRate() bool { return strings.HasSuffix(s.Executor, "arrival-rate") }

// maxScenarios bounds what is read of a tenant's options: k6 would run more, but a warning
// per scenario past this helps nobody.
const maxScenarios = 64

// ScenariosFromOptions reads the scenarios of k6 options JSON: the consolidated options `k6
// inspect --execution-requirements` prints (its `scenarios` hold the derived default scenario
// too), or the --config file LoadConfig writes. raw may have log lines before the JSON (k6
// warnings); the first line starting with "{" begins it. ok is false when no options were found.
func ScenariosFromOptions(raw []byte) (out []ScenarioVUs, ok bool) {
	start := -1
	for off := 0; off < len(raw); {
		line := raw[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		if bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("{")) {
			start = off
			break
		}
		off += len(line)
	}
	if start < 0 {
		return nil, false
	}
	var opts struct {
		Scenarios map[string]struct {
			Executor        string `json:"executor"`
			VUs             *int64 `json:"vus"`
			StartVUs        *int64 `json:"startVUs"`
			PreAllocatedVUs *int64 `json:"preAllocatedVUs"`
			MaxVUs          *int64 `json:"maxVUs"`
			Stages          []struct {
				Target *int64 `json:"target"`
			} `json:"stages"`
		} `json:"scenarios"`
	}
	// Decode reads one value and stops: what k6 logs after it does not matter.
	if err := json.NewDecoder(bytes.NewReader(raw[start:])).Decode(&opts); err != nil || opts.Scenarios == nil {
		return nil, false
	}
	names := make([]string, 0, len(opts.Scenarios))
	for name := range opts.Scenarios {
		names = append(names, name)
	}
	sort.Strings(names)
	or := func(v *int64, def int64) int64 {
		if v == nil {
			return def
		}
		return *v
	}
	for _, name := range names[:min(len(names), maxScenarios)] {
		sc := opts.Scenarios[name]
		s := ScenarioVUs{Name: name, Executor: sc.Executor}
		switch sc.Executor {
		case "constant-vus", "per-vu-iterations", "shared-iterations":
			s.VUs = or(sc.VUs, 1)
		case "ramping-vus":
			s.VUs = or(sc.StartVUs, 1)
			for _, st := range sc.Stages {
				s.VUs = max(s.VUs, or(st.Target, 0))
			}
		case "constant-arrival-rate", "ramping-arrival-rate":
			s.VUs = or(sc.PreAllocatedVUs, 0)
			s.MaxVUs = max(or(sc.MaxVUs, s.VUs), s.VUs)
		default:
			continue // externally-controlled, or an executor this version does not know
		}
		out = append(out, s)
	}
	return out, true
}

// ZeroVUWarnings names, per scenario, the runners whose execution segment gets no VU of it (or
// no pre-allocated VU of an arrival-rate scenario) when parallelism runners split it as k6 does
// (SplitInt over Segments), and the VU count or parallelism that avoids it. runner names
// runner i for the message.
func ZeroVUWarnings(scenarios []ScenarioVUs, parallelism int, runner func(int) string) []string {
	if parallelism < 2 {
		return nil
	}
	seq := Segments(parallelism)[0].Sequence
	var out []string
	for _, s := range scenarios {
		if s.VUs < 0 || s.MaxVUs < 0 {
			continue
		}
		pre, err := SplitInt(s.VUs, seq)
		if err != nil {
			continue
		}
		maxShares := pre
		if s.arrivalRate() {
			if maxShares, err = SplitInt(s.MaxVUs, seq); err != nil {
				continue
			}
		}
		var idle, starved []int
		for i := range pre {
			switch {
			case maxShares[i] == 0:
				idle = append(idle, i)
			case pre[i] == 0:
				starved = append(starved, i)
			}
		}
		name := fmt.Sprintf("%q", clip(s.Name, 64))
		fix := func(what string, total int64) string {
			if total == 0 {
				return fmt.Sprintf("set %s to at least %d", what, parallelism)
			}
			return fmt.Sprintf("set %s to at least %d, or spec.parallelism to at most %d", what, parallelism, total)
		}
		if len(starved) > 0 {
			out = append(out, fmt.Sprintf("scenario %s: %s get 0 of its %d pre-allocated VUs (k6 splits them %s over %d runners), "+
				"so %s start their share of the arrival rate with no VU and drop iterations until k6 has allocated some "+
				"(one k6 process would not); %s",
				name, runnerList(starved, runner), s.VUs, shares(pre), parallelism, pronoun(starved), fix("preAllocatedVUs", s.VUs)))
		}
		if len(idle) > 0 {
			what, total := "vus", s.VUs
			if s.arrivalRate() {
				what, total = "maxVUs", s.MaxVUs
			}
			out = append(out, fmt.Sprintf("scenario %s: %s get 0 of its %d VUs (k6 splits them %s over %d runners) and run none of it, "+
				"so the scenario runs on fewer runners than spec.parallelism; %s",
				name, runnerList(idle, runner), total, shares(maxShares), parallelism, fix(what, total)))
		}
	}
	return out
}

func pronoun(idx []int) string {
	if len(idx) == 1 {
		return "it would"
	}
	return "they would"
}

// runnerList names runners compactly: a runner, or the first and last of a run of them.
func runnerList(idx []int, runner func(int) string) string {
	if len(idx) == 1 {
		return fmt.Sprintf("runner %d (%s) would", idx[0], runner(idx[0]))
	}
	if idx[len(idx)-1]-idx[0] == len(idx)-1 {
		return fmt.Sprintf("runners %d to %d (%s to %s) would", idx[0], idx[len(idx)-1], runner(idx[0]), runner(idx[len(idx)-1]))
	}
	parts := make([]string, 0, min(len(idx), 8))
	for _, i := range idx[:min(len(idx), 8)] {
		parts = append(parts, fmt.Sprint(i))
	}
	more := ""
	if len(idx) > 8 {
		more = fmt.Sprintf(" and %d more", len(idx)-8)
	}
	return fmt.Sprintf("runners %s%s would", strings.Join(parts, ", "), more)
}

// shares renders a split as "1,1,0", eliding the middle of a long one.
func shares(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	if len(parts) > 12 {
		parts = append(append(parts[:6:6], "…"), parts[len(parts)-5:]...)
	}
	return strings.Join(parts, ",")
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
