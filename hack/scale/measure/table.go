package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// table prints the results file (one JSON object a line) as the benchmark's table, with the goals.
func table(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: measure table RESULTS.jsonl")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	num := func(v float64) string {
		if v == -1 {
			return "n/a"
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	fmt.Println("| runners | Jobs created s (from TestRun created / first runner Job / TargetReady*) | pods Ready s (from created / first runner Job / TargetReady*) | to Running s | start skew (stand-in / status) | end→done s | API writes (+events) | writes per runner (goal ≤ 1.5) | reconciles | manager CPU s | peak RSS MiB | rate-limiter wait |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var multis []multiResult
	var shapes []shapeResult
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var probe struct{ Scenario string }
		if json.Unmarshal(sc.Bytes(), &probe) != nil {
			continue
		}
		if probe.Scenario == "shape" {
			var r shapeResult
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				shapes = append(shapes, r)
			}
			continue
		}
		if probe.Scenario == "multi" {
			var m multiResult
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				multis = append(multis, m)
			}
			continue
		}
		var r singleResult
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Runners == 0 {
			continue // a run refused before it started writes null
		}
		perRunner := float64(r.Writes) / float64(max(r.Runners, 1))
		fmt.Printf("| %d | %s / %s / %s | %s / %s / %s | %s | %.1f ms / %s | %s (%s, %d finals) | %d (+%d) | %.2f %s | %.0f | %.2f | %.1f | %s |\n",
			r.Runners, num(r.JobsFromCreate), num(r.JobsFromFirstJob), num(r.JobsFromTargetReady),
			num(r.ReadyFromCreate), num(r.ReadyFromFirstJob), num(r.ReadyFromTarget), num(r.RunningFromCreate),
			r.SkewMs, r.StatusSkew, num(r.EndToDone), r.EndPhase, r.FinalsAnswered, r.Writes, r.EventWrites, perRunner, okText(perRunner <= 1.5),
			r.Reconciles, r.CPU, r.PeakRSSMiB, r.RateLimiterWait)
		if r.Phase != "Running" || (r.EndPhase != "" && r.EndPhase != "Succeeded") {
			fmt.Printf("|   | phase %s, then %s: %s |||||||||\n", r.Phase, r.EndPhase, r.Message)
		}
	}
	fmt.Println()
	fmt.Println("* TargetReady's lastTransitionTime has 1 s resolution (truncated), so these read up to 1 s long; with an external")
	fmt.Println("  target it is set in the reconcile that starts creating the runner Jobs, so \"first runner Job\" is the precise start;")
	fmt.Println("  a negative value means the condition was only written later (status patches refused, see writesByResource 422).")
	if len(shapes) > 0 {
		fmt.Println("\nThe control plane alone (measure shapes; client limits as the manager's, 200 QPS / 400 burst, 16 creates in flight):")
		fmt.Println("\n| pods | shape | client writes | created s | all pods Ready s |")
		fmt.Println("|---:|---|---:|---:|---:|")
		for _, r := range shapes {
			fmt.Printf("| %d | %s | %d | %s | %s |\n", r.Runners, shapeText[r.Shape], r.Writes, num(r.CreatedS), num(r.ReadyS))
		}
	}
	for _, m := range multis {
		fmt.Printf("\n%d TestRuns x %d runners at once: %d of %d reached Running; slowest %.2f s; testrun reconcile_time p99 %.3f s; reconciles %.0f; API writes %d; manager CPU %.2f s; peak RSS %.1f MiB; rate-limiter wait: %s\n",
			m.Runs, m.Runners, m.Reached, m.Runs, m.MaxToRunning, m.ReconcileP99, m.Reconciles, m.Writes, m.CPU, m.PeakRSSMiB, m.RateLimiterWait)
		keys := make([]string, 0, len(m.ToRunning))
		for k := range m.ToRunning {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.2f", strings.TrimPrefix(k, "fbscale-"), m.ToRunning[k]))
		}
		fmt.Println("  time to Running (s): " + strings.Join(parts, ", "))
		for ns, why := range m.Failed {
			fmt.Printf("  %s did not reach Running: %s\n", ns, why)
		}
	}
	return sc.Err()
}

var shapeText = map[string]string{"jobs": "N Jobs of 1 pod (the operator's)", "indexed": "1 Indexed Job, N completions", "pods": "N pods, no Job"}

func okText(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
