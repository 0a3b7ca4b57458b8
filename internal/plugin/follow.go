package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// defaultTimeout bounds run and wait: the longest stability runs the seeds describe last 48 h,
// so a longer one needs --timeout.
const defaultTimeout = 24 * time.Hour

func newRunCommand(o *options) *cobra.Command {
	var file string
	timeout := defaultTimeout
	cmd := &cobra.Command{
		Use:   "run -f testrun.yaml",
		Short: "Create a TestRun and follow it to its verdict",
		Long: `Create the TestRun in the file (- reads standard input) and follow it by a watch, printing a
progress line on each change, then its results. Exit code: 0 PASSED, 1 FAILED or REGRESSED, 2 INCONCLUSIVE,
phase Failed, timeout or error. A TestRun of that name that already finished is not re-used: the
command says so and exits 2 (delete it, or give the new one another name).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("-f is required: the TestRun to run (- for standard input)")
			}
			return o.run(cmd.Context(), file, timeout)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the TestRun manifest (YAML or JSON; - for standard input)")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long to wait for the verdict")
	return cmd
}

func newWaitCommand(o *options) *cobra.Command {
	timeout := defaultTimeout
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Follow an existing TestRun to its verdict",
		Long: `Follow the TestRun by a watch, printing a progress line on each change, then its results.
Exit code: 0 PASSED, 1 FAILED or REGRESSED, 2 INCONCLUSIVE, phase Failed, timeout or error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.wait(cmd.Context(), args[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long to wait for the verdict")
	return cmd
}

// readTestRun reads one TestRun from a YAML or JSON manifest.
func readTestRun(in io.Reader, file string) (*v1alpha1.TestRun, error) {
	var raw []byte
	var err error
	if file == "-" {
		raw, err = io.ReadAll(in)
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), raw...), []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			docs = append(docs, d)
		}
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: want exactly one TestRun, found %d documents", file, len(docs))
	}
	run := &v1alpha1.TestRun{}
	if err := yaml.Unmarshal(docs[0], run); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if run.Kind != "TestRun" || run.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, fmt.Errorf("%s: want apiVersion %s, kind TestRun; found %q %q", file, v1alpha1.GroupVersion, run.APIVersion, run.Kind)
	}
	if run.Name == "" && run.GenerateName == "" {
		return nil, fmt.Errorf("%s: the TestRun needs metadata.name (or metadata.generateName)", file)
	}
	return run, nil
}

// stripComments drops YAML comment lines, so a document of comments alone counts as empty.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

func (o *options) wait(ctx context.Context, arg string, timeout time.Duration) error {
	k, name, err := parseName(arg, false)
	if err != nil {
		return err
	}
	if k == kindPlan {
		return errors.New("wait follows a TestRun; for a CapacityPlan use `kubectl wait --for=condition=Complete capacityplan/NAME`")
	}
	c, ns, err := o.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	key := client.ObjectKey{Namespace: ns, Name: name}
	run := &v1alpha1.TestRun{}
	if err := c.Get(ctx, key, run); err != nil {
		return timeoutOr(ctx, err, timeout, key, "")
	}
	return o.follow(ctx, c, run, timeout)
}

func (o *options) run(ctx context.Context, file string, timeout time.Duration) error {
	run, err := readTestRun(o.streams.In, file)
	if err != nil {
		return err
	}
	c, ns, err := o.client()
	if err != nil {
		return err
	}
	// The whole command, creation included, is bounded by --timeout.
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if run.Namespace == "" {
		run.Namespace = ns
	} else if o.flags.Namespace != nil && *o.flags.Namespace != "" && *o.flags.Namespace != run.Namespace {
		return fmt.Errorf("the namespace from the file (%s) does not match the namespace given with -n (%s)", run.Namespace, *o.flags.Namespace)
	}
	run.ResourceVersion = ""
	run.Status = v1alpha1.TestRunStatus{}
	err = c.Create(ctx, run)
	key := client.ObjectKeyFromObject(run)
	switch {
	case err == nil:
		_, _ = fmt.Fprintf(o.streams.Out, "testrun %s/%s created\n", run.Namespace, run.Name)
	case apierrors.IsAlreadyExists(err):
		existing := &v1alpha1.TestRun{}
		if err := c.Get(ctx, key, existing); err != nil {
			return timeoutOr(ctx, err, timeout, key, "")
		}
		if finished(existing) {
			return withCode(ExitError, "testrun %s/%s already exists and finished (phase %s, verdict %s): delete it (kubectl delete testrun %s -n %s) or give the new run another name; `kubectl fleetbench get %s` shows its results",
				existing.Namespace, existing.Name, existing.Status.Phase, orDash(string(existing.Status.Verdict)), existing.Name, existing.Namespace, existing.Name)
		}
		_, _ = fmt.Fprintf(o.streams.Out, "testrun %s/%s already exists and is not finished (phase %s): following it\n",
			existing.Namespace, existing.Name, textsafe.Line(orDash(string(existing.Status.Phase))))
		run = existing
	default:
		return timeoutOr(ctx, err, timeout, key, "")
	}
	return o.follow(ctx, c, run, timeout)
}

// timeoutOr is err, or the timeout's own message once ctx's deadline (--timeout) has passed.
func timeoutOr(ctx context.Context, err error, timeout time.Duration, key client.ObjectKey, phase v1alpha1.TestRunPhase) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return withCode(ExitError, "timed out after %s waiting for testrun %s/%s (phase %s); the run goes on: `kubectl fleetbench wait %s -n %s` follows it again (raise --timeout for a longer run)",
		timeout, key.Namespace, key.Name, orDash(string(phase)), key.Name, key.Namespace)
}

// finished tells whether a TestRun reached a terminal phase.
func finished(run *v1alpha1.TestRun) bool {
	return run.Status.Phase == v1alpha1.PhaseSucceeded || run.Status.Phase == v1alpha1.PhaseFailed
}

// exitCode is the exit code of a finished TestRun.
func exitCode(run *v1alpha1.TestRun) int {
	if run.Status.Phase == v1alpha1.PhaseFailed {
		return ExitError
	}
	switch run.Status.Verdict {
	case v1alpha1.VerdictPassed:
		return ExitPassed
	case v1alpha1.VerdictFailed, v1alpha1.VerdictRegressed:
		// A regression against the baseline stops a pipeline as failed thresholds do.
		return ExitFailed
	}
	return ExitError
}

// follow watches the TestRun until it finishes or ctx (bounded by --timeout) ends, printing a
// progress line on each change, then its results; it returns the exit code as an error (nil for
// PASSED).
func (o *options) follow(ctx context.Context, c client.WithWatch, run *v1alpha1.TestRun, timeout time.Duration) error {
	p := &progressPrinter{w: o.streams.Out, terminal: o.isTerminal(o.streams.Out)}
	key := client.ObjectKeyFromObject(run)
	for !finished(run) {
		p.show(run)
		next, err := watchOnce(ctx, c, run, p)
		if err == nil && next == nil {
			// The watch ended (closed by the server, or its resource version expired): read the
			// object again and watch from there.
			next = &v1alpha1.TestRun{}
			err = c.Get(ctx, key, next)
		}
		if err != nil {
			p.end()
			return timeoutOr(ctx, err, timeout, key, run.Status.Phase)
		}
		run = next
	}
	p.show(run)
	p.end()
	_, _ = fmt.Fprintln(o.streams.Out)
	writeTestRun(o.streams.Out, run, false)
	code := exitCode(run)
	if code == ExitPassed {
		return nil
	}
	return &exitError{code: code, err: fmt.Errorf("testrun %s/%s ended %s with verdict %s%s", key.Namespace, key.Name, run.Status.Phase,
		orDash(string(run.Status.Verdict)), reasonSuffix(run.Status.Reason, ""))}
}

// watchOnce watches the TestRun from its resource version until it finishes (returning it), the
// watch ends (returning nil), or an error.
func watchOnce(ctx context.Context, c client.WithWatch, run *v1alpha1.TestRun, p *progressPrinter) (*v1alpha1.TestRun, error) {
	w, err := c.Watch(ctx, &v1alpha1.TestRunList{}, &client.ListOptions{
		Namespace:     run.Namespace,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", run.Name),
		Raw:           &metav1.ListOptions{ResourceVersion: run.ResourceVersion},
	})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				got, ok := ev.Object.(*v1alpha1.TestRun)
				if !ok {
					continue
				}
				if got.UID != run.UID && run.UID != "" {
					return nil, fmt.Errorf("testrun %s/%s was replaced by another of the same name", run.Namespace, run.Name)
				}
				if finished(got) {
					return got, nil
				}
				p.show(got)
			case watch.Deleted:
				return nil, fmt.Errorf("testrun %s/%s was deleted before it finished", run.Namespace, run.Name)
			case watch.Error:
				// 410 Gone / Expired (the resource version is too old) starts over from a fresh
				// read; anything else would only repeat, so it ends the command.
				if err := apierrors.FromObject(ev.Object); !apierrors.IsGone(err) && !apierrors.IsResourceExpired(err) {
					return nil, fmt.Errorf("watching testrun %s/%s: %w", run.Namespace, run.Name, err)
				}
				return nil, nil
			}
		}
	}
}

// progressPrinter prints a line per change: rewritten in place on a terminal, one line each
// otherwise (a log, a pipe, CI).
type progressPrinter struct {
	w        io.Writer
	terminal bool
	last     string
	open     bool
}

func (p *progressPrinter) show(run *v1alpha1.TestRun) {
	line := textsafe.Line(progressLine(run))
	if line == p.last {
		return
	}
	p.last = line
	if p.terminal {
		_, _ = fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.open = true
		return
	}
	_, _ = fmt.Fprintln(p.w, line)
}

// end finishes a line left open on a terminal.
func (p *progressPrinter) end() {
	if p.open {
		_, _ = fmt.Fprintln(p.w)
		p.open = false
	}
}

// progressLine is what a TestRun is doing: the live numbers while it runs, phase and reason
// otherwise.
func progressLine(run *v1alpha1.TestRun) string {
	s := run.Status
	phase := string(s.Phase)
	if phase == "" {
		phase = string(v1alpha1.PhasePending)
	}
	if s.Phase == v1alpha1.PhaseRunning && s.Progress != nil {
		pr := s.Progress
		elapsed := pr.Elapsed
		if pr.Expected != "" {
			elapsed += "/" + pr.Expected
		}
		line := fmt.Sprintf("%-12s %s  requests %d  %s req/s  errors %s%%", phase, elapsed, pr.Requests, orDash(pr.RequestsPerSecond), orDash(pr.ErrorPercent))
		if pr.P95 != "" {
			line += "  p95 " + pr.P95
		}
		return line
	}
	line := fmt.Sprintf("%-12s", phase)
	if finished(run) && s.Verdict != "" {
		line += " verdict " + string(s.Verdict)
	}
	return strings.TrimRight(line+reasonSuffix(s.Reason, oneLine(s.Message)), " ")
}

// reasonSuffix renders " (Reason: message)", or "" when both are empty.
func reasonSuffix(reason, message string) string {
	if d := reasonMessage(reason, message); d != "" {
		return " (" + d + ")"
	}
	return ""
}

// reasonMessage renders "Reason: message", or whichever of them is set.
func reasonMessage(reason, message string) string {
	switch {
	case reason != "" && message != "":
		return reason + ": " + message
	case reason != "":
		return reason
	}
	return message
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isTerminal tells whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
