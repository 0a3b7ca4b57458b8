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
	fmt.Println("| runners | Jobs created s (from TestRun created / first runner Job / TargetReady*) | pods Ready s (from created / first runner Job / TargetReady*) | to Running s | start skew (stand-in / status) | API writes (+events) | writes per runner | goal 40+6N | reconciles | manager CPU s | peak RSS MiB | rate-limiter wait |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var multis []multiResult
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var probe struct{ Scenario string }
		if json.Unmarshal(sc.Bytes(), &probe) != nil {
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
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		goal := 40 + 6*r.Runners
		fmt.Printf("| %d | %s / %s / %s | %s / %s / %s | %s | %.1f ms / %s | %d (+%d) | %.2f | %d %s | %.0f | %.2f | %.1f | %s |\n",
			r.Runners, num(r.JobsFromCreate), num(r.JobsFromFirstJob), num(r.JobsFromTargetReady),
			num(r.ReadyFromCreate), num(r.ReadyFromFirstJob), num(r.ReadyFromTarget), num(r.RunningFromCreate),
			r.SkewMs, r.StatusSkew, r.Writes, r.EventWrites, float64(r.Writes)/float64(max(r.Runners, 1)), goal, okText(r.Writes <= goal),
			r.Reconciles, r.CPU, r.PeakRSSMiB, r.RateLimiterWait)
		if r.Phase != "Running" {
			fmt.Printf("|   | phase %s: %s |||||||||\n", r.Phase, r.Message)
		}
	}
	fmt.Println()
	fmt.Println("* TargetReady's lastTransitionTime has 1 s resolution (truncated), so these read up to 1 s long; with an external")
	fmt.Println("  target it is set in the reconcile that starts creating the runner Jobs, so \"first runner Job\" is the precise start;")
	fmt.Println("  a negative value means the condition was only written later (status patches refused, see writesByResource 422).")
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

func okText(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
