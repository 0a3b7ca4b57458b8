// Command measure drives and times the scale benchmark's TestRuns (hack/scale/run.sh): it creates
// TestRuns against the local kwok cluster, watches their Jobs, pods and phase, reads the
// stand-in's un-pause arrivals, the manager's /metrics, /proc and the API server's audit log,
// and prints one JSON result per scenario.
//
//	measure single -runners N      one TestRun of N runners
//	measure multi -runs 20 -runners 50   20 TestRuns created at once
//	measure shapes -runners N       the control plane alone: N Jobs, one Indexed Job, N pods
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var testRuns = schema.GroupVersionResource{Group: "fleetbench.dev", Version: "v1alpha1", Resource: "testruns"}

type config struct {
	kubeconfig, standin, metrics, auditLog, managerUser, out string
	pid, runners, runs                                       int
	timeout, hold                                            time.Duration
}

type env struct {
	config
	kube *kubernetes.Clientset
	dyn  dynamic.Interface
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: measure single|multi [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	var c config
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "admin kubeconfig")
	fs.StringVar(&c.standin, "standin", "http://127.0.0.1:6599", "stand-in control address")
	fs.StringVar(&c.metrics, "metrics", "http://127.0.0.1:8080/metrics", "manager metrics")
	fs.StringVar(&c.auditLog, "audit-log", "", "API server audit log")
	fs.StringVar(&c.managerUser, "manager-user", "fleetbench-manager", "the manager's user name in the audit log")
	fs.StringVar(&c.out, "out", "", "append the JSON result to this file")
	fs.IntVar(&c.pid, "manager-pid", 0, "the manager's pid")
	fs.IntVar(&c.runners, "runners", 10, "spec.parallelism")
	fs.IntVar(&c.runs, "runs", 20, "TestRuns created at once (multi)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "bound of every wait")
	fs.DurationVar(&c.hold, "hold", 5*time.Second, "how long a run stays Running before it is deleted")
	_ = fs.Parse(os.Args[2:])

	if mode == "table" {
		must(table(fs.Args()))
		return
	}
	rest, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	must(err)
	rest.QPS, rest.Burst = 500, 1000
	e := &env{config: c, kube: kubernetes.NewForConfigOrDie(rest), dyn: dynamic.NewForConfigOrDie(rest)}
	var res any
	switch mode {
	case "single":
		res, err = e.single()
	case "multi":
		res, err = e.multi()
	case "shapes":
		res, err = e.shapes()
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if shapes, ok := res.([]shapeResult); ok {
		for _, r := range shapes {
			writeResult(c.out, r)
		}
		res = nil
	}
	if res != nil {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		if c.out != "" {
			f, ferr := os.OpenFile(c.out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			must(ferr)
			_, _ = f.Write(append(b, '\n'))
			_ = f.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func writeResult(out string, r any) {
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	if out == "" {
		return
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(err)
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "   [%s] %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, a...))
}
