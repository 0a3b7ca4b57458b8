// Package fidelity is the shared part of the differential fidelity harness: the corpus of k6
// scripts with the directives in their header comments, the HTTP routes they run against, and
// the comparison of a fleet's result with one k6 process's own summary. Two drivers use it: the
// runner module's harness (runner/cmd/fleetbench-runner) runs the corpus as k6 processes, and
// test/e2e runs a representative part of it as TestRuns on a cluster. k6 is the oracle for both.
package fidelity

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Header lines a corpus script may carry, in its leading comment block.
const (
	// sourcePrefix names where the script comes from (required): a public page or repository.
	sourcePrefix = "// Source:"
	// directivePrefix starts a directive: "verdicts-only", "cluster", "split-differs", "args …",
	// "env …", "config FILE", "file FILE…".
	directivePrefix = "// fidelity:"
)

// Script is one corpus script and how the harness runs it.
type Script struct {
	Name   string // the file name without .js
	Path   string
	Text   string
	Origin string // the Source header
	// Args are k6 run flags, given to every runner as spec.args would be.
	Args []string
	// Env is the runners' environment (NAME=value), as spec.runner.env would be.
	Env []string
	// Config is a k6 config file in the corpus directory, passed with --config.
	Config string
	// Files are data files in the corpus directory that the script open()s by a relative path:
	// a driver puts them beside the script.
	Files []string
	// VerdictsOnly: the script stops early on purpose (abortOnFail, test.abort()), so a split
	// run is compared with k6 on its verdicts only.
	VerdictsOnly bool
	// Cluster: make e2e runs it as TestRuns too (the representative subset).
	Cluster bool
	// SplitDiffers: split into execution segments, the script legitimately does other work than
	// one k6 process (a segment with no VU of a scenario, numbering by __VU or __ITER), as
	// several plain k6 processes would. Its split run is not held to k6's counts; instead the
	// operator's pre-run warnings must flag it. Every other script must draw no such warning.
	SplitDiffers bool
}

// Load reads every *.js in dir. A script without a Source header or with an unknown directive
// is an error: the corpus promises where each script comes from and how it runs.
func Load(dir string) ([]Script, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.js"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	scripts := make([]Script, 0, len(paths))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s, err := parse(filepath.Base(p), string(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		s.Path = p
		for _, f := range append([]string{s.Config}, s.Files...) {
			if f == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
		}
		scripts = append(scripts, s)
	}
	return scripts, nil
}

func parse(file, text string) (Script, error) {
	s := Script{Name: strings.TrimSuffix(file, ".js"), Text: text}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "//") {
			break // the header is the leading comment block
		}
		if rest, ok := strings.CutPrefix(line, sourcePrefix); ok {
			s.Origin = strings.TrimSpace(rest)
			continue
		}
		rest, ok := strings.CutPrefix(line, directivePrefix)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return s, fmt.Errorf("empty directive %q", line)
		}
		switch kind, values := fields[0], fields[1:]; {
		case kind == "verdicts-only" && len(values) == 0:
			s.VerdictsOnly = true
		case kind == "cluster" && len(values) == 0:
			s.Cluster = true
		case kind == "split-differs" && len(values) == 0:
			s.SplitDiffers = true
		case kind == "args" && len(values) > 0:
			s.Args = append(s.Args, values...)
		case kind == "env" && len(values) > 0:
			for _, kv := range values {
				if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
					return s, fmt.Errorf("env directive wants NAME=value, got %q", kv)
				}
			}
			s.Env = append(s.Env, values...)
		case kind == "config" && len(values) == 1 && plainName(values[0]):
			s.Config = values[0]
		case kind == "file" && len(values) > 0 && all(values, plainName):
			s.Files = append(s.Files, values...)
		default:
			return s, fmt.Errorf("unknown directive %q (want verdicts-only, cluster, split-differs, args FLAGS, env NAME=value…, config FILE, file FILE…)", line)
		}
	}
	if s.Origin == "" {
		return s, fmt.Errorf("no %q header naming the script's public source", sourcePrefix)
	}
	return s, nil
}

// plainName: a file name in the corpus directory itself, not a path out of it.
func plainName(name string) bool {
	return filepath.Base(name) == name && name != "." && name != ".." && !strings.HasSuffix(name, ".js")
}

func all(values []string, ok func(string) bool) bool {
	for _, v := range values {
		if !ok(v) {
			return false
		}
	}
	return true
}

// RunArgs are the k6 run flags of the script: its Args, and --config with the config file
// at configDir (where the driver put it: the corpus directory, or the runners' /test).
func (s Script) RunArgs(configDir string) []string {
	args := append([]string(nil), s.Args...)
	if s.Config != "" {
		args = append(args, "--config", configDir+"/"+s.Config)
	}
	return args
}
