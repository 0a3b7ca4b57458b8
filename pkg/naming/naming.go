// Package naming gives every object a TestRun owns a deterministic name, so a reconcile after
// a crash finds what the last one made instead of making it twice.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Labels every child carries, so watches and lists find them.
const (
	LabelTestRun   = "fleetbench.dev/testrun"
	LabelTestRunNS = "fleetbench.dev/testrun-namespace"
	// LabelTestRunUID records the UID of the TestRun a target namespace, or an object in a
	// shared target namespace, was made for: what is deleted must carry it, so neither another
	// tenant's namespace of a look-alike name nor that of a re-created TestRun is ever hit.
	LabelTestRunUID  = "fleetbench.dev/testrun-uid"
	LabelRole        = "fleetbench.dev/role"
	LabelRunnerIndex = "fleetbench.dev/runner-index"
	LabelComponent   = "fleetbench.dev/component"
	// LabelPlan marks a CapacityPlan's children with the plan's name.
	LabelPlan     = "fleetbench.dev/capacityplan"
	RoleRunner    = "runner"
	RoleTarget    = "target"
	RoleScript    = "script"
	RolePreflight = "preflight"
	RoleResults   = "results"
	// RoleTargetCharge marks the pod that charges a target to its TestRun's namespace quota.
	RoleTargetCharge  = "target-charge"
	maxDNSLabelLength = 63
)

// fit shortens name to max characters, replacing the tail with a hash of the whole name so
// two long names that share a prefix still differ.
func fit(name string, max int) string {
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:8]
	return name[:max-len(suffix)-1] + "-" + suffix
}

// withSuffix keeps a readable suffix and shortens what comes before it.
func withSuffix(name, suffix string, max int) string {
	return fit(name, max-len(suffix)) + suffix
}

// These names must not change between operator versions: an upgraded operator finds the
// children of running TestRuns by them. naming_test.go pins them.

// RunnerJob names runner i of a TestRun. Jobs label their pods with their name, so it must
// fit a label value (63 characters).
func RunnerJob(testRun string, i int) string {
	return withSuffix(testRun, fmt.Sprintf("-runner-%d", i), maxDNSLabelLength)
}

// PreflightJob names the Job that checks a TestRun's script before anything is provisioned.
func PreflightJob(testRun string) string {
	return withSuffix(testRun, "-preflight", maxDNSLabelLength)
}

// ScriptConfigMap names the ConfigMap holding an inline script and the generated k6 config.
func ScriptConfigMap(testRun string) string {
	return withSuffix(testRun, "-script", 253)
}

// ScriptCopyConfigMap names the ConfigMap holding the copy of a TestRun's script ConfigMap
// (spec.script.configMap), taken when the run starts: the runners mount the copy.
func ScriptCopyConfigMap(testRun string) string {
	return withSuffix(testRun, "-script-copy", 253)
}

// TargetChargePod names the never-scheduled pod in a TestRun's namespace that carries its
// target's requests and limits, so the namespace's ResourceQuota and LimitRange count them.
func TargetChargePod(testRun string) string {
	return withSuffix(testRun, "-target-charge", maxDNSLabelLength)
}

// ResultConfigMap names the ConfigMap holding a TestRun's full merged result.
func ResultConfigMap(testRun string) string {
	return withSuffix(testRun, "-results", 253)
}

// TargetNamespace names the namespace a TestRun's target is provisioned in: a readable prefix
// and 64 bits of a hash of "namespace/name". The hash, not the prefix, makes it unique: run
// prod-x in team-a and run x in team-a-prod read alike and differ, and a tenant cannot search
// for a name of its own that lands on another's (2^64 tries, not 2^32).
func TargetNamespace(namespace, testRun string) string {
	return hashedLabel("fb-", namespace+"-"+testRun, namespace+"/"+testRun)
}

// LegacyTargetNamespace is the name operators before the UID labels gave a target namespace;
// only to find those of runs they started.
func LegacyTargetNamespace(namespace, testRun string) string {
	return "fb-" + fit(namespace+"-"+testRun, maxDNSLabelLength-len("fb-"))
}

// hashLength is 16 hex characters: 64 bits of the hash.
const hashLength = 16

// hashedLabel is prefix, as much of readable as fits, and the hash of key: a DNS label of at
// most 63 characters that starts with prefix.
func hashedLabel(prefix, readable, key string) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashLength]
	// A TestRun's name may hold dots; a label may not.
	readable = strings.ReplaceAll(readable, ".", "-")
	room := maxDNSLabelLength - len(prefix) - len(suffix)
	readable = strings.Trim(readable[:min(len(readable), room)], "-")
	if readable == "" {
		return prefix + suffix[1:]
	}
	return prefix + readable + suffix
}

// SharedTargetObject names one object of a TestRun's target in a namespace that targets of
// several TestRuns share (the operator's --target-namespace): the run's name and the object's,
// then 64 bits of a hash of the TestRun's namespace, name and the object, so runs of one name
// in two namespaces, or names that read alike ("a-b"+"c", "a"+"b-c"), never collide. The result
// is a DNS label starting with a letter, so it may name a Service.
func SharedTargetObject(testRunNS, testRun, object string) string {
	obj := strings.Trim(strings.ReplaceAll(object, ".", "-"), "-")
	obj = strings.Trim(obj[:min(len(obj), maxSharedObject)], "-")
	room := maxDNSLabelLength - len("fb-") - (hashLength + 1) - len(obj) - 1
	run := strings.ReplaceAll(testRun, ".", "-")
	run = strings.Trim(run[:min(len(run), room)], "-")
	return hashedLabel("fb-", run+"-"+obj, testRunNS+"/"+testRun+"/"+object)
}

// maxSharedObject keeps at least 63-3-17-24-1 = 18 characters of the run's name readable.
const maxSharedObject = 24

// TargetWorkload names the Deployment of one target pod: the whole stack when sized as one
// machine, one component otherwise.
func TargetWorkload(component string) string {
	return "target-" + fit(component, maxDNSLabelLength-len("target-"))
}

// PlanChild names cell i of a CapacityPlan: the plan, the cell's profile, and the cell's
// number, which the immutable plan spec fixes.
func PlanChild(plan, profile string, i int) string {
	return withSuffix(plan, fmt.Sprintf("-%s-%d", strings.ToLower(fit(profile, 20)), i), maxDNSLabelLength)
}

// TestID tags what a run sends elsewhere (k6 outputs, metrics): its name and the start of its
// UID, so a re-created TestRun of the same name is another test.
func TestID(name, uid string) string {
	if len(uid) > 8 {
		uid = uid[:8]
	}
	if uid == "" {
		return name
	}
	return name + "-" + uid
}
