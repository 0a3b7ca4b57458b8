// Package plugin is the kubectl plugin `kubectl fleetbench`: run a TestRun and follow it to its
// verdict, wait for one, show a TestRun's or a CapacityPlan's results, and write reports (HTML,
// JSON, JUnit XML, CSV). cmd/kubectl-fleetbench only calls Main; everything is here so tests can
// drive the commands against a real API server.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// Exit codes of run and wait (and of any other command: 0 or ExitError).
const (
	// ExitPassed: the TestRun finished with verdict PASSED (or a command succeeded).
	ExitPassed = 0
	// ExitFailed: the TestRun finished with verdict FAILED, or REGRESSED against its baseline.
	ExitFailed = 1
	// ExitError: verdict INCONCLUSIVE, phase Failed (a runtime error), a timeout, or any error.
	ExitError = 2
)

// exitError carries the exit code a command ends with; a plain error exits ExitError.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// withCode makes err end the command with code.
func withCode(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// options are shared by every command.
type options struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	// isTerminal tells whether Out is a terminal, where the progress line is rewritten in place.
	isTerminal func(io.Writer) bool
}

// scheme knows core kinds and fleetbench's.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// client builds a watching client and the namespace from the kubeconfig flags, as kubectl does.
func (o *options) client() (client.WithWatch, string, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", err
	}
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}

// NewCommand is `kubectl fleetbench` with its subcommands.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), streams: streams, isTerminal: isTerminal}
	cmd := &cobra.Command{
		Use:   "kubectl-fleetbench",
		Short: "Run fleetbench TestRuns, follow them to their verdict, and report their results",
		Long: `kubectl fleetbench runs a TestRun and follows it to its verdict, waits for one, shows the
results of a TestRun or the sizing table of a CapacityPlan, lists them (get without a name),
compares a TestRun with its baseline (compare A B), finds where a test's metrics shifted
across its kept runs (trend -l test=NAME), answers which of a CapacityPlan's profiles
holds N devices and at what cost (size PLAN --devices N --period 260s), and writes reports.

Exit codes of run and wait: 0 verdict PASSED, 1 FAILED or REGRESSED, 2 INCONCLUSIVE, phase Failed, a timeout
or any other error. Of size: 0 a profile holds the fleet, 1 none does, 2 an error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl fleetbench",
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	o.flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newRunCommand(o), newWaitCommand(o), newGetCommand(o, false), newGetCommand(o, true), newReportCommand(o),
		newConvertCommand(o), newCompareCommand(o), newSizeCommand(o), newTrendCommand(o))
	return cmd
}

// Run executes the plugin with args (without the program name) and returns its exit code.
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	cmd := NewCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return ExitPassed
	}
	return printError(streams, err)
}

// printError prints err and returns the exit code it stands for. Errors quote the status and
// the API server, which quote what tenants wrote: no control character reaches the terminal.
func printError(streams genericiooptions.IOStreams, err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			_, _ = fmt.Fprintln(streams.ErrOut, "error:", textsafe.Text(ee.err.Error()))
		}
		return ee.code
	}
	_, _ = fmt.Fprintln(streams.ErrOut, "error:", textsafe.Text(err.Error()))
	return ExitError
}

// Main is the program: kubectl-fleetbench's main calls os.Exit(Main()).
func Main() int {
	return Run(context.Background(), os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
}

// kind of object a name argument refers to.
type kind int

const (
	kindAny kind = iota
	kindTestRun
	kindPlan
)

// parseName accepts NAME, testrun/NAME (tr, testruns) and capacityplan/NAME (cp, capacityplans).
func parseName(arg string, plan bool) (kind, string, error) {
	k := kindAny
	if plan {
		k = kindPlan
	}
	prefix, name, found := strings.Cut(arg, "/")
	if !found {
		return k, arg, nil
	}
	switch strings.ToLower(prefix) {
	case "testrun", "testruns", "tr", "testrun.fleetbench.dev", "testruns.fleetbench.dev":
		if plan {
			return 0, "", fmt.Errorf("%s is a TestRun, but --plan asks for a CapacityPlan", arg)
		}
		return kindTestRun, name, nil
	case "capacityplan", "capacityplans", "cp", "capacityplan.fleetbench.dev", "capacityplans.fleetbench.dev":
		return kindPlan, name, nil
	}
	return 0, "", fmt.Errorf("%q: the kind must be testrun (tr) or capacityplan (cp)", prefix)
}

// resolve builds the client and reads the object a NAME argument names (see lookup).
func (o *options) resolve(ctx context.Context, arg string, plan bool) (client.Client, object, error) {
	c, ns, err := o.client()
	if err != nil {
		return nil, object{}, err
	}
	obj, err := lookup(ctx, c, ns, arg, plan)
	return c, obj, err
}

// object is a TestRun or a CapacityPlan, read by name.
type object struct {
	run  *v1alpha1.TestRun
	plan *v1alpha1.CapacityPlan
}

// lookup reads the named object; a plain name tries a TestRun, then a CapacityPlan.
func lookup(ctx context.Context, c client.Client, ns, arg string, plan bool) (object, error) {
	k, name, err := parseName(arg, plan)
	if err != nil {
		return object{}, err
	}
	key := client.ObjectKey{Namespace: ns, Name: name}
	if k != kindPlan {
		run := &v1alpha1.TestRun{}
		err := c.Get(ctx, key, run)
		if err == nil {
			return object{run: run}, nil
		}
		if k == kindTestRun || !apierrors.IsNotFound(err) {
			return object{}, err
		}
	}
	p := &v1alpha1.CapacityPlan{}
	if err := c.Get(ctx, key, p); err != nil {
		if k == kindAny && apierrors.IsNotFound(err) {
			return object{}, fmt.Errorf("no TestRun or CapacityPlan %q in namespace %s", name, ns)
		}
		return object{}, err
	}
	return object{plan: p}, nil
}
