package main

// The fidelity test is differential: every script in testdata/fidelity runs through real k6
// v2.2.0 (this runner binary with thresholds enabled, k6's own end-of-test data exported by a
// handleSummary hook) and through fleetbench's path (runner envelopes, merged), and the two must
// agree on every threshold verdict and on every count. Nothing is compared against hard-coded
// numbers: k6 is the oracle.
//
// Each script runs twice:
//   - once as the reference: k6 judges the thresholds and the same process prints a fleetbench
//     envelope, so "1 segment" compares k6 and fleetbench on the very same samples;
//   - once split into three execution segments run as three concurrent runner processes the way
//     the operator runs a fleet (runFleet: runner Job flags, --no-thresholds, summary disabled,
//     setup() and teardown() once through k6's REST API), whose envelopes are merged
//     ("3 segments").
//
// The target servers count what they answer, an oracle independent of both: each side's counts
// must equal what its execution made the servers do. When the two executions did different work
// (k6 skips arrival-rate iterations a starved process cannot start in time), both run again, at
// most maxAttempts times; a difference that persists fails.
//
// Corpus conventions the comparison relies on:
//   - counts are fixed by the executors (iterations, not durations), so they must match exactly
//     across segmentations; arrival-rate scenarios end well between two iteration start times,
//     as k6 itself counts an iteration due exactly at the end only if it beats the deadline;
//   - a custom Trend declared without isTime holds values computed from the iteration number
//     (deterministic: its percentiles are compared in the 3-segment run too), one declared with
//     isTime holds timings;
//   - thresholds on timings are far from the measured values, so both verdicts are stable;
//   - a script marked "// fidelity: verdicts-only" stops early on purpose (abortOnFail,
//     test.abort()): its 3-segment run is compared on verdicts only, and teardown() must have
//     run exactly as often as in k6 (checkTeardownOnce, by its "teardown ran" check);
//   - a script marked "// fidelity: split-differs" does other work split into segments than in
//     one k6 process (k6's execution segments, as three plain k6 processes would): its 3-segment
//     counts are not held to k6's, but the operator's pre-run warnings must flag it, and every
//     other script must draw no such warning (checkSplitWarnings).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/test/fidelity"
)

const (
	fidelityDir = "testdata/fidelity"
	// k6ProcessTimeout bounds every k6 process; corpus scripts run for 1-4 s.
	k6ProcessTimeout = 60 * time.Second
	// summaryHook is appended to a script for the reference run. k6 passes handleSummary its
	// end-of-test data: metrics (with sub-metrics) with their values and threshold verdicts, and
	// root_group with the checks.
	summaryHook = "\nexport function handleSummary(data) {\n" +
		"  return { [__ENV.FIDELITY_SUMMARY]: JSON.stringify(data) };\n}\n"
	// trendStats makes k6 report every trend statistic fleetbench computes, count included.
	trendStats = "avg,min,med,max,p(90),p(95),p(99),count"
	// minCorpus is the corpus size issue 24 asks for.
	minCorpus = 30
	// maxAttempts bounds the runs of a script whose two executions did different work.
	maxAttempts = 3
	// quantileTolerance is the relative error fleetbench promises for quantiles (its histograms
	// hold 0.5 %, pkg/measure.RelativeAccuracy).
	quantileTolerance = 0.01
)

// The execution segments of three runners, as pkg/runners gives them.
var (
	threeSegments = []string{"0:1/3", "1/3:2/3", "2/3:1"}
	segmentSeq    = "0,1/3,2/3,1"
)

func TestFidelity(t *testing.T) {
	bin := buildRunner(t)
	corpus, err := fidelity.Load(fidelityDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < minCorpus {
		t.Fatalf("corpus has %d scripts, want at least %d", len(corpus), minCorpus)
	}
	for _, script := range corpus {
		t.Run(script.Name, func(t *testing.T) {
			t.Parallel() // go test runs GOMAXPROCS subtests at once; each starts up to 3 k6 processes
			if strings.Contains(script.Text, "handleSummary") {
				t.Fatal("corpus scripts must not define handleSummary: the test appends its own")
			}
			checkFidelityScript(t, bin, script)
		})
	}
}

// checkFidelityScript runs one corpus script both ways, with the k6 run flags of spec.args,
// the runners' environment and the data files beside it, and compares.
func checkFidelityScript(t *testing.T, bin string, script fidelity.Script) {
	abs, err := filepath.Abs(fidelityDir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range script.Files {
		if files[f], err = os.ReadFile(filepath.Join(abs, f)); err != nil {
			t.Fatal(err)
		}
	}
	checkFidelityRun(t, bin, fidelityRun{src: script.Text, userArgs: script.RunArgs(abs), userEnv: script.Env, files: files,
		onlyVerdicts: script.VerdictsOnly, splitDiffers: script.SplitDiffers})
}

// fidelityRun is one script and how it runs.
type fidelityRun struct {
	src               string
	userArgs, userEnv []string
	files             map[string][]byte // written beside the script
	onlyVerdicts      bool              // it ends early on purpose: 3 segments are compared on verdicts
	splitDiffers      bool              // its split legitimately differs from one k6: the warnings must say so
}

// checkFidelityRun runs one script both ways and compares.
func checkFidelityRun(t *testing.T, bin string, fr fidelityRun) {
	src, onlyVerdicts := fr.src, fr.onlyVerdicts
	tg := newFidelityTarget(t)
	env := append([]string{"TARGET=" + tg.http.URL}, fr.userEnv...)
	if strings.Contains(src, "k6/net/grpc") {
		env = append(env, "GRPC_ADDR="+tg.startGRPC(t))
	}

	var (
		ref              k6Summary
		refEnv           measure.Envelope
		fleet            fleetResult
		refHits, segHits served
	)
	for attempt := 1; ; attempt++ {
		// Reference: k6 judges the thresholds; the same process prints an envelope.
		ref, refEnv = runReference(t, bin, fr, env)
		refHits = tg.reset()
		// A fleet of three runners, run as the operator runs it.
		fleet = runFleet(t, bin, fr, env)
		segHits = tg.reset()
		// A split that differs from one k6 does other work by design.
		if onlyVerdicts || fr.splitDiffers || refHits == segHits {
			break
		}
		// The servers, not fleetbench, say the two executions did different work. Arrival-rate
		// executors start iterations on a clock and k6 silently skips those a starved process
		// cannot start before the deadline (k6 alone counts 59 to 61 iterations for 60/s over
		// 1s on a busy machine), so both executions run again. A difference that persists is
		// reported: fleetbench's counting never causes a retry, and compareHits checks it.
		if attempt == maxAttempts {
			t.Errorf("in %d attempts the executions never did the same work (last: k6 %+v, 3 segments %+v); "+
				"if it is the same difference every time, the segmented run does more or less than k6 does", attempt, refHits, segHits)
			break
		}
		t.Logf("attempt %d: the servers saw %+v from k6 and %+v from the 3 segments; running both again", attempt, refHits, segHits)
	}

	one, err := measure.Merge(refEnv)
	if err != nil {
		t.Fatalf("merge 1 envelope: %v", err)
	}
	checkEnvelopes(t, "1 segment", refEnv)
	judged, failing := compareThresholds(t, "1 segment", ref, &one)
	metrics := compareMetrics(t, "1 segment", ref, &one, true)
	checks := compareChecks(t, "1 segment", ref, &one)
	if !onlyVerdicts {
		// (When k6 aborts, a request in flight may reach the server and never be measured.)
		compareHits(t, "1 segment", &one, refHits)
	}
	t.Logf("1 segment: %d thresholds (%d failing in k6), %d metrics, %d checks compared; served %+v",
		judged, failing, metrics, checks, refHits)

	three, err := measure.Merge(fleet.envs...)
	if err != nil {
		t.Fatalf("merge 3 envelopes: %v", err)
	}
	checkEnvelopes(t, "3 segments", fleet.envs...)
	checkSplitWarnings(t, fr, fleet.report)
	checkTeardownOnce(t, ref, &one, &three)
	if fr.splitDiffers {
		// Split into segments the script does other work than one k6 (checkSplitWarnings made
		// sure the operator says so before the run), as three plain k6 processes with these
		// segments would. What fleetbench adds must still be exact: the merged counts are
		// what the servers saw. The differences from k6 are logged for the README.
		compareHits(t, "3 segments", &three, segHits)
		for _, d := range fidelity.Compare(ref, judge.BuildK6Summary(&three, three.Thresholds)) {
			t.Logf("3 segments differ from one k6, as documented: %s", d)
		}
		return
	}
	judged, _ = compareThresholds(t, "3 segments", ref, &three)
	if onlyVerdicts {
		// k6 stopped the reference early: an abortOnFail threshold tripped (at its first
		// evaluation, after about 2 s), or the script called test.abort(). The segments judge
		// no thresholds and run to the end; on test.abort() the fleet stops as k6 does, at
		// another moment. Either way the counts differ by however much ran after that moment:
		// only the verdicts are comparable; the 1-segment comparison above checked counts on
		// the same execution. That the abort happened is what makes the script worth running.
		it := three.Metrics["iterations"]
		switch {
		case !refEnv.Aborted || it == nil:
			t.Errorf("the reference run was not cut short: aborted=%v, 3 segments' iterations %v", refEnv.Aborted, it)
		case !fleet.scriptAborted && ref.Metrics["iterations"].Values["count"] >= it.Stats.Sum:
			t.Errorf("the reference run was not cut short: k6 iterations %v, 3 segments %v", ref.Metrics["iterations"].Values, it)
		}
		t.Logf("3 segments: %d thresholds compared (verdicts only; test.abort() in the fleet: %v); served %+v", judged, fleet.scriptAborted, segHits)
		return
	}
	metrics = compareMetrics(t, "3 segments", ref, &three, false)
	checks = compareChecks(t, "3 segments", ref, &three)
	compareHits(t, "3 segments", &three, segHits)
	// The full result the operator stores (k6's summary shape) says the same; make e2e compares
	// its TestRuns with k6 this way.
	for _, d := range fidelity.Compare(ref, judge.BuildK6Summary(&three, three.Thresholds)) {
		t.Errorf("3 segments, as the full result: %s", d)
	}
	t.Logf("3 segments: %d thresholds, %d metrics, %d checks compared; served %+v", judged, metrics, checks, segHits)
}

// runReference runs the script with k6's thresholds on and returns k6's end-of-test data and
// the envelope the same process printed.
func runReference(t *testing.T, bin string, fr fidelityRun, env []string) (k6Summary, measure.Envelope) {
	t.Helper()
	userArgs := fr.userArgs
	dir := t.TempDir()
	js := writeScript(t, dir, "reference.js", fr.src+summaryHook, fr.files)
	summaryPath := filepath.Join(dir, "k6-summary.json")
	env = append(env, "FIDELITY_SUMMARY="+summaryPath, "K6_FLEETBENCH_RUNNER=reference")
	args := append([]string{"run", "--quiet", "--out", "fleetbench", "--summary-trend-stats", trendStats}, userArgs...)
	out, code, err := runK6Process(bin, dir, env, append(args, js)...)
	if err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	// 99 is k6's exit code for failed thresholds: expected for scripts with failing ones; 108
	// is test.abort()'s, expected of a script that ends early on purpose.
	if code != 0 && code != 99 && (code != exitScriptAborted || !fr.onlyVerdicts) {
		t.Fatalf("reference run exited %d\n%s", code, out)
	}
	raw, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatalf("k6 summary: %v\n%s", err, out)
	}
	var sum k6Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatalf("k6 summary: %v", err)
	}
	if failed := failedThresholds(sum); code != exitScriptAborted && (code == 99) != (failed > 0) {
		t.Errorf("k6 exited %d with %d failed thresholds in its summary", code, failed)
	}
	e, err := measure.ExtractEnvelope(out)
	if err != nil {
		t.Fatalf("reference envelope: %v\n%s", err, out)
	}
	return sum, e
}

// fleetResult is what a fleet of three runners left: their envelopes, the pre-flight's check
// report, and whether the script called test.abort() on one of them.
type fleetResult struct {
	envs          []measure.Envelope
	report        measure.CheckReport
	scriptAborted bool
}

// exitScriptAborted is k6's exit code after test.abort(); exitStopped after a stop through the
// REST API.
const (
	exitScriptAborted = 108
	exitStopped       = 103
)

// runFleet runs the script as a fleet of three runners, the way the operator runs one: the
// flags of pkg/runners.Job for 3 runners and the steps of internal/controller/testrun (once.go).
// Each k6 starts paused with its REST API and without its own setup() and teardown(), which k6
// would otherwise run in every process; setup() runs once, on runner 0, and its data goes to
// the others; all resume; once every runner's load has ended, teardown() runs on runner 0, and
// its live endpoint releases it from its linger. When the script calls test.abort() on a
// runner, the others are stopped, as one k6 stops all its VUs, and teardown() still runs once,
// as k6 runs it. Before any of that, the pre-flight must accept the test with runner 0's
// arguments, as the operator's does.
func runFleet(t *testing.T, bin string, fr fidelityRun, env []string) fleetResult {
	t.Helper()
	return runFleetAttempt(t, bin, fr, env, 1)
}

// maxPortAttempts bounds the fleet's starts when a free loopback port was taken by another
// process between loopbackAddr and k6's bind (the parallel subtests, other test binaries).
const maxPortAttempts = 3

func runFleetAttempt(t *testing.T, bin string, fr fidelityRun, env []string, attempt int) fleetResult {
	t.Helper()
	dir := t.TempDir()
	js := writeScript(t, dir, "script.js", fr.src, fr.files)
	userArgs := fr.userArgs
	report := runPreflight(t, bin, dir, js, env, userArgs)
	ctx, cancel := context.WithTimeout(context.Background(), k6ProcessTimeout)
	defer cancel()
	fleet := make([]*fleetRunner, len(threeSegments))
	for i, seg := range threeSegments {
		r := &fleetRunner{api: "http://" + loopbackAddr(t), live: loopbackAddr(t), exited: make(chan struct{})}
		home := filepath.Join(dir, "runner-"+strconv.Itoa(i))
		if err := os.Mkdir(home, 0o755); err != nil {
			t.Fatal(err)
		}
		args := []string{"run", "--quiet", "--execution-segment", seg, "--execution-segment-sequence", segmentSeq,
			"--paused", "--address", strings.TrimPrefix(r.api, "http://"), "--out", "fleetbench",
			"--summary-mode=disabled", "--no-thresholds", "--no-setup", "--no-teardown"}
		if i == 0 {
			args = append(args, "--linger")
		}
		args = append(args, userArgs...)
		r.cmd = k6Command(ctx, bin, home, &r.out, append(env, "K6_FLEETBENCH_RUNNER=runner-"+strconv.Itoa(i),
			"K6_FLEETBENCH_LIVE="+r.live), append(args, js)...)
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { r.err = r.cmd.Wait(); close(r.exited) }()
		fleet[i] = r
	}
	// A port taken between loopbackAddr and k6's bind: the whole fleet starts again on others.
	portTaken := func() bool {
		if attempt >= maxPortAttempts {
			return false
		}
		cancel()
		taken := false
		for _, r := range fleet {
			<-r.exited
			taken = taken || bytes.Contains(r.out.Bytes(), []byte("address already in use"))
		}
		return taken
	}
	// On any failure: stop the fleet, then say what each runner printed.
	fail := func(format string, args ...any) {
		t.Helper()
		cancel()
		var logs strings.Builder
		for i, r := range fleet {
			<-r.exited
			fmt.Fprintf(&logs, "\n--- runner %d (%v):\n%s", i, r.err, r.out.Bytes())
		}
		t.Fatalf(format+"%s", append(args, logs.String())...)
	}

	for i, r := range fleet {
		if err := r.waitStatus(ctx, statusPausedBeforeRun); err != nil {
			if portTaken() {
				t.Logf("attempt %d: a runner's port was taken before k6 bound it; starting the fleet again", attempt)
				return runFleetAttempt(t, bin, fr, env, attempt+1)
			}
			fail("runner %d did not come up paused: %v", i, err)
		}
	}
	answer, err := k6Call(ctx, http.MethodPost, fleet[0].api+"/v1/setup", nil)
	if err != nil {
		fail("setup() on runner 0: %v", err)
	}
	var setup struct {
		Data struct {
			Attributes struct {
				Data json.RawMessage `json:"data"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer, &setup); err != nil {
		fail("setup answer %s: %v", answer, err)
	}
	data := setup.Data.Attributes.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	for i, r := range fleet[1:] {
		if _, err := k6Call(ctx, http.MethodPut, r.api+"/v1/setup", data); err != nil {
			fail("setup data to runner %d: %v", i+1, err)
		}
	}
	for i, r := range fleet {
		resume := []byte(`{"data":{"type":"status","id":"default","attributes":{"paused":false}}}`)
		if _, err := k6Call(ctx, http.MethodPatch, r.api+"/v1/status", resume); err != nil {
			fail("resume runner %d: %v", i, err)
		}
	}
	// Until runners 1..n-1 exited and runner 0's load ended; a test.abort() stops the others.
	scriptAborted := false
	for {
		ended := true
		for i, r := range fleet {
			select {
			case <-r.exited:
				if exitCode(r.err) != exitScriptAborted || scriptAborted {
					continue
				}
				if i == 0 {
					fail("runner 0 called test.abort(): the corpus aborts on another runner, so runner 0 can run teardown()")
				}
				scriptAborted = true
				stop := []byte(`{"data":{"type":"status","id":"default","attributes":{"stopped":true}}}`)
				for _, other := range fleet {
					select {
					case <-other.exited:
					default:
						_, _ = k6Call(ctx, http.MethodPatch, other.api+"/v1/status", stop) // it may have just ended
					}
				}
			default:
				if i > 0 {
					ended = false
				}
			}
		}
		if ended {
			if err := fleet[0].waitStatus(ctx, statusEnded); err != nil {
				fail("runner 0 did not end its load: %v", err)
			}
			break
		}
		select {
		case <-ctx.Done():
			fail("the runners did not end")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if _, err := k6Call(ctx, http.MethodPost, fleet[0].api+"/v1/teardown", nil); err != nil {
		fail("teardown() on runner 0: %v", err)
	}
	if _, err := k6Call(ctx, http.MethodPost, "http://"+fleet[0].live+measure.ReleasePath, nil); err != nil {
		fail("release runner 0: %v", err)
	}
	select {
	case <-fleet[0].exited:
	case <-ctx.Done():
		fail("runner 0 did not exit after its release")
	}

	envs := make([]measure.Envelope, len(fleet))
	for i, r := range fleet {
		// After test.abort(), its runner exits 108 and those stopped 103; otherwise all exit 0.
		if code := exitCode(r.err); r.err != nil && (!scriptAborted || (code != exitScriptAborted && code != exitStopped)) {
			fail("runner %d: %v", i, r.err)
		}
		if envs[i], err = measure.ExtractEnvelope(r.out.Bytes()); err != nil {
			fail("runner %d envelope: %v", i, err)
		}
		if envs[i].Aborted && !scriptAborted {
			fail("runner %d was aborted (%s): the release must end runner 0's linger cleanly", i, envs[i].Error)
		}
	}
	if scriptAborted && !fr.onlyVerdicts {
		fail("the script called test.abort(): mark it // fidelity: verdicts-only")
	}
	return fleetResult{envs: envs, report: report, scriptAborted: scriptAborted}
}

// exitCode is a finished process's exit code (0 without an error, -1 when it did not exit).
func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// writeScript writes the script and its data files into dir and returns the script's path.
func writeScript(t *testing.T, dir, name, src string, files map[string][]byte) string {
	t.Helper()
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	js := filepath.Join(dir, name)
	if err := os.WriteFile(js, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return js
}

// k6's lib.ExecutionStatus values the fleet waits for.
const (
	statusPausedBeforeRun = 4
	statusEnded           = 9 // and above: interrupted, marked as failed
)

// fleetRunner is one k6 process of a fleet.
type fleetRunner struct {
	cmd       *exec.Cmd
	out       bytes.Buffer
	api, live string // REST API base URL; live endpoint host:port
	exited    chan struct{}
	err       error // of Wait, once exited is closed
}

// waitStatus polls k6's status until it is at least want; k6 may still be starting.
func (r *fleetRunner) waitStatus(ctx context.Context, want int) error {
	for {
		select {
		case <-r.exited:
			return fmt.Errorf("exited: %w", r.err)
		default:
		}
		if b, err := k6Call(ctx, http.MethodGet, r.api+"/v1/status", nil); err == nil {
			var st struct {
				Data struct {
					Attributes struct {
						Status int `json:"status"`
					} `json:"attributes"`
				} `json:"data"`
			}
			if err := json.Unmarshal(b, &st); err != nil {
				return fmt.Errorf("status answer %s: %w", b, err)
			}
			if st.Data.Attributes.Status >= want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// k6Call makes one call to k6's REST API (or the runner's live endpoint).
func k6Call(ctx context.Context, method, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return b, err
}

// loopbackAddr is a free host:port on 127.0.0.1 for a runner's API or live endpoint.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runK6Process runs the runner binary to its end and returns its combined output and exit
// code; err is set when it could not run or did not finish in time.
func runK6Process(bin, home string, env []string, args ...string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), k6ProcessTimeout)
	defer cancel()
	var out bytes.Buffer
	err := k6Command(ctx, bin, home, &out, env, args...).Run()
	if ctx.Err() != nil {
		return out.Bytes(), -1, fmt.Errorf("k6 did not finish within %s", k6ProcessTimeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.Bytes(), exit.ExitCode(), nil
	}
	return out.Bytes(), 0, err
}

// k6Command prepares the runner binary with the environment runK6 uses, stdout and stderr
// going to out.
func k6Command(ctx context.Context, bin, home string, out *bytes.Buffer, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "HOME="+home, "K6_FLEETBENCH_WINDOW=1s")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// k6Summary is k6's handleSummary data; fleetbench's full result has the same shape.
type (
	k6Summary = judge.K6Summary
	k6Metric  = judge.K6Metric
)

// failedThresholds counts the thresholds k6 says failed.
func failedThresholds(s k6Summary) int {
	n := 0
	for _, m := range s.Metrics {
		for _, th := range m.Thresholds {
			if !th.OK {
				n++
			}
		}
	}
	return n
}

// checkEnvelopes asserts the envelopes are complete and nothing was folded into overflow series,
// which would make per-tag counts inexact.
func checkEnvelopes(t *testing.T, label string, envs ...measure.Envelope) {
	t.Helper()
	for _, e := range envs {
		if !e.Final || e.K6Version != "v2.2.0" || e.OverflowSamples != 0 {
			t.Errorf("%s: envelope of %s: final=%v k6=%q overflow=%d", label, e.Runner, e.Final, e.K6Version, e.OverflowSamples)
		}
	}
}

// compareThresholds: every threshold k6 judged has a fleetbench result with the same verdict,
// and fleetbench judged no other. It returns how many k6 judged and how many of those failed.
func compareThresholds(t *testing.T, label string, ref k6Summary, s *measure.Summary) (judged, failing int) {
	t.Helper()
	ours := map[string]measure.ThresholdResult{}
	for _, r := range s.Thresholds {
		ours[fidelity.CanonicalKey(r.Metric)+" "+r.Expression] = r
	}
	for _, name := range slices.Sorted(maps.Keys(ref.Metrics)) {
		m := ref.Metrics[name]
		for _, expr := range slices.Sorted(maps.Keys(m.Thresholds)) {
			judged++
			ok := m.Thresholds[expr].OK
			if !ok {
				failing++
			}
			r, found := ours[fidelity.CanonicalKey(name)+" "+expr]
			switch {
			case !found:
				t.Errorf("%s: threshold %s %q: k6 ok=%v, fleetbench has no result", label, name, expr, ok)
			case r.Error != "":
				t.Errorf("%s: threshold %s %q: k6 ok=%v, fleetbench error %q", label, name, expr, ok, r.Error)
			case r.Passed != ok:
				t.Errorf("%s: threshold %s %q: k6 ok=%v, fleetbench passed=%v (value %g; k6's values %v)",
					label, name, expr, ok, r.Passed, r.Value, m.Values)
			}
		}
	}
	if len(s.Thresholds) != judged {
		t.Errorf("%s: fleetbench judged %d thresholds, k6 %d: %+v", label, len(s.Thresholds), judged, s.Thresholds)
	}
	return judged, failing
}

// compareMetrics compares every metric and sub-metric k6 reports with fleetbench's. sameRun is
// true when both saw the same samples (the reference process): then everything must agree.
// Across separate executions only what the scripts make deterministic is compared. It returns
// how many metrics and sub-metrics were compared on some value.
func compareMetrics(t *testing.T, label string, ref k6Summary, s *measure.Summary, sameRun bool) int {
	t.Helper()
	compared := 0
	for _, name := range slices.Sorted(maps.Keys(ref.Metrics)) {
		km := ref.Metrics[name]
		v := km.Values
		if !sameRun && km.Type == "gauge" {
			// A gauge is a last value, and fleetbench sums the runners' last values (fleet-wide
			// VUs): 3 runners report the sum of 3 values where one k6 process reports one. vus
			// and vus_max are also sampled once a second, so a short run may have none.
			continue
		}
		typ, st, found, err := pickStats(s, name)
		if err != nil {
			t.Errorf("%s: %s: %v", label, name, err)
			continue
		}
		if !found {
			// No samples reached fleetbench: k6 must have none either (it lists metrics and
			// sub-metrics named by thresholds even when they are empty).
			if n := k6SampleCount(km); n != 0 {
				t.Errorf("%s: %s: k6 counted %g samples, fleetbench none", label, name, n)
			}
			continue
		}
		if string(typ) != km.Type {
			t.Errorf("%s: %s: k6 type %s, fleetbench %s", label, name, km.Type, typ)
			continue
		}
		base, _, _ := strings.Cut(name, "{")
		compared++
		switch typ {
		case measure.Counter:
			// Byte counts depend on more than the iterations (each process's own connections,
			// header values such as Date and Content-Length digits), so they are equal only
			// when both saw the same samples.
			if !sameRun && (base == "data_sent" || base == "data_received") {
				continue
			}
			if st.Sum != v["count"] {
				t.Errorf("%s: %s count: k6 %g, fleetbench %g", label, name, v["count"], st.Sum)
			}
		case measure.Rate:
			if float64(st.Passes) != v["passes"] || float64(st.Fails) != v["fails"] {
				t.Errorf("%s: %s passes/fails: k6 %g/%g, fleetbench %d/%d", label, name, v["passes"], v["fails"], st.Passes, st.Fails)
			}
		case measure.Gauge: // same run only, see above
			expectClose(t, label, name+" value", v["value"], st.Value, 0, 0)
			expectClose(t, label, name+" min", v["min"], st.Min, 0, 0)
			expectClose(t, label, name+" max", v["max"], st.Max, 0, 0)
		case measure.Trend:
			if float64(st.Count) != v["count"] {
				t.Errorf("%s: %s count: k6 %g, fleetbench %d", label, name, v["count"], st.Count)
			}
			_, builtin := measure.BuiltinMetrics[base]
			deterministic := !builtin && km.Contains != "time"
			if !sameRun && !deterministic {
				continue // timings of separate executions differ
			}
			compareTrend(t, label, name, v, st, deterministic)
		}
	}
	// Nothing fleetbench recorded may be unknown to k6 (but gauges, see above).
	for name, m := range s.Metrics {
		if _, ok := ref.Metrics[name]; !ok && (sameRun || m.Type != measure.Gauge) {
			t.Errorf("%s: fleetbench has metric %s, k6 does not", label, name)
		}
	}
	return compared
}

// compareTrend: min and max are exact in fleetbench, the average is a sum over a count;
// percentiles come from histograms with quantileTolerance, which is all the slack they get on
// identical samples. For deterministic trends they also get the gap between neighbouring order
// statistics that k6's linear interpolation may cross (about (max-min)/(count-1) for the spread
// values the corpus uses), as the brief allows.
func compareTrend(t *testing.T, label, name string, v map[string]float64, st measure.Stats, deterministic bool) {
	t.Helper()
	expectClose(t, label, name+" min", v["min"], st.Min, 1e-9, 0)
	expectClose(t, label, name+" max", v["max"], st.Max, 1e-9, 0)
	expectClose(t, label, name+" avg", v["avg"], st.Avg, 1e-6, 0)
	// Values under 1e-9 are zero to fleetbench's histogram.
	gap := 1e-9
	if deterministic && v["count"] > 1 {
		gap += (v["max"] - v["min"]) / (v["count"] - 1)
	}
	for _, q := range []struct {
		key string
		got float64
	}{{"med", st.Med}, {"p(90)", st.P90}, {"p(95)", st.P95}, {"p(99)", st.P99}} {
		expectClose(t, label, name+" "+q.key, v[q.key], q.got, quantileTolerance, gap)
	}
}

// expectClose reports got when it differs from k6's want by more than rel*|want| + abs.
func expectClose(t *testing.T, label, what string, want, got, rel, abs float64) {
	t.Helper()
	if d := math.Abs(got - want); d > rel*math.Abs(want)+abs {
		t.Errorf("%s: %s: k6 %g, fleetbench %g (off by %.3g%%)", label, what, want, got, 100*d/math.Max(math.Abs(want), 1e-300))
	}
}

// pickStats returns fleetbench's stats for a metric or for a sub-metric such as
// `http_req_duration{name:home}` (its matching series merged, as thresholds select them);
// found is false when no sample reached fleetbench.
func pickStats(s *measure.Summary, key string) (measure.MetricType, measure.Stats, bool, error) {
	name, filter, err := measure.ParseMetricSelector(key)
	if err != nil {
		return "", measure.Stats{}, false, err
	}
	m := s.Metrics[name]
	if m == nil {
		return "", measure.Stats{}, false, nil
	}
	if len(filter) == 0 {
		// The whole metric's stats, with Merge's cross-runner semantics.
		return m.Type, m.Stats, true, nil
	}
	_, _, agg, err := s.SubMetric(key)
	if err != nil {
		return "", measure.Stats{}, false, err
	}
	if agg.Count == 0 {
		return m.Type, measure.Stats{}, false, nil
	}
	return m.Type, measure.ComputeStats(m.Type, &agg, s.Duration.Seconds()), true, nil
}

// k6SampleCount is how many samples k6's values say it saw (a counter's count is its sum,
// which is 0 without samples too).
func k6SampleCount(m k6Metric) float64 {
	switch m.Type {
	case "rate":
		return m.Values["passes"] + m.Values["fails"]
	case "gauge":
		return math.Abs(m.Values["value"]) + math.Abs(m.Values["max"]) + math.Abs(m.Values["min"])
	}
	return m.Values["count"]
}

// compareChecks: every check, by group path and name, has k6's passes and fails. It returns
// how many checks k6 reported.
func compareChecks(t *testing.T, label string, ref k6Summary, s *measure.Summary) int {
	t.Helper()
	type counts struct{ passes, fails uint64 }
	want := map[string]counts{}
	var walk func(g judge.K6Group)
	walk = func(g judge.K6Group) {
		for _, c := range g.Checks {
			want[g.Path+" / "+c.Name] = counts{c.Passes, c.Fails}
		}
		for _, sub := range g.Groups {
			walk(sub)
		}
	}
	walk(ref.RootGroup)
	got := map[string]counts{}
	for _, c := range s.Checks {
		got[c.Group+" / "+c.Name] = counts{c.Passes, c.Fails}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || g != want[k] {
			t.Errorf("%s: check %q: k6 %d passes/%d fails, fleetbench %d/%d (found %v)",
				label, k, want[k].passes, want[k].fails, g.passes, g.fails, ok)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: fleetbench has check %q, k6 does not", label, k)
		}
	}
	return len(want)
}

// compareHits: what the servers saw is what the merged counts say, an oracle independent of k6.
func compareHits(t *testing.T, label string, s *measure.Summary, hits served) {
	t.Helper()
	httpHits, grpcCalls := hits.HTTP, hits.GRPC
	var reqs, calls float64
	if m := s.Metrics["http_reqs"]; m != nil {
		reqs = m.Stats.Sum
	}
	if m := s.Metrics["grpc_req_duration"]; m != nil {
		calls = float64(m.Stats.Count)
	}
	if reqs != float64(httpHits) || calls != float64(grpcCalls) {
		t.Errorf("%s: servers saw %d HTTP requests and %d gRPC calls, fleetbench counted %g and %g",
			label, httpHits, grpcCalls, reqs, calls)
	}
}

// fidelityTarget is the system under test for the corpus: the shared HTTP routes
// (test/fidelity) and, for gRPC scripts, a gRPC server with the standard health service and
// reflection. Both count what they serve.
type fidelityTarget struct {
	http      *httptest.Server
	routes    *fidelity.Server
	grpcCalls atomic.Int64
}

func newFidelityTarget(t *testing.T) *fidelityTarget {
	tg := &fidelityTarget{routes: fidelity.NewServer()}
	tg.http = httptest.NewServer(tg.routes)
	t.Cleanup(tg.http.Close)
	return tg
}

// startGRPC serves grpc.health.v1.Health (with reflection, so k6 needs no proto files) on
// loopback. Services: "" and fleetbench.Store serve, fleetbench.Legacy does not, anything
// else is NOT_FOUND.
func (tg *fidelityTarget) startGRPC(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	count := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		tg.grpcCalls.Add(1)
		return next(ctx, req)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(count))
	hs := health.NewServer()
	hs.SetServingStatus("fleetbench.Store", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("fleetbench.Legacy", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	go srv.Serve(lis) //nolint:errcheck // ends with Stop
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// served counts what the target servers answered.
type served struct{ HTTP, GRPC int64 }

// reset returns what was served since the last reset.
func (tg *fidelityTarget) reset() served {
	return served{HTTP: tg.routes.Reset().HTTP, GRPC: tg.grpcCalls.Swap(0)}
}
