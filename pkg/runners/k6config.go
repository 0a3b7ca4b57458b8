package runners

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// A fleet's execution segment sequence names every runner's boundaries, so its length grows
// with the runner count (49 KB at 5,000). As a flag it was in every runner's Job and pod, which
// made the fleet's objects grow as N² (489 MB of Jobs and pods at 5,000 runners, each written to
// etcd and sent to every watcher). It is written once instead, into the k6 config file of the
// run's ConfigMap, which every runner mounts and reads with --config; only each runner's own
// --execution-segment stays a flag. A lone runner keeps both flags and needs no file.

// UserSetsConfig says whether the user's flags name a k6 config file of their own (--config,
// -c, or -c after boolean shorthands as in -qc): theirs follows ours and replaces it, so the
// sequence must then stay a flag. Without it k6 rounds each runner's share on its own: 3
// runners of 10 iterations ran 9.
func UserSetsConfig(spec *v1alpha1.TestRunSpec) bool {
	for _, a := range UserArgs(spec) {
		if a == "--config" || strings.HasPrefix(a, "--config=") || shortConfig.MatchString(a) {
			return true
		}
	}
	return false
}

// shortConfig is -c, possibly after boolean shorthands; letters of k6's shorthands that take a
// value (c d e i s t u) end the cluster, as in the API's -p rule.
var shortConfig = regexp.MustCompile(`^-[^-=cdeistu]*c`)

// SequenceInConfig says whether n runners read the sequence from the config file.
func SequenceInConfig(n int) bool { return n > 1 }

// HasConfig says whether the runners of spec, n of them, get the config file (--config).
func HasConfig(spec *v1alpha1.TestRunSpec, n int) bool {
	return spec.Load != nil || SequenceInConfig(spec.FleetRunners(n))
}

// K6Config is the k6 JSON config file every runner of spec gets, n of them: the load model
// (LoadConfig) and the fleet's execution segment sequence; nil when HasConfig is false. k6
// takes executionSegmentSequence from the file as from the flag (lib.Options).
func K6Config(spec *v1alpha1.TestRunSpec, testRun string, n int) ([]byte, error) {
	cfg, err := LoadConfig(spec, testRun)
	n = spec.FleetRunners(n) // with zones, the sequence is the whole fleet's
	if err != nil || !SequenceInConfig(n) {
		return cfg, err
	}
	opts := map[string]any{}
	if cfg != nil {
		dec := json.NewDecoder(bytes.NewReader(cfg))
		dec.UseNumber() // the load model's numbers pass through unchanged
		if err := dec.Decode(&opts); err != nil {
			return nil, fmt.Errorf("k6 config: %w", err)
		}
	}
	opts["executionSegmentSequence"] = Segments(n)[0].Sequence
	return json.Marshal(opts)
}
