package naming

// Kept results: the Record a finished run keeps for later comparisons (spec.baseline), in a
// ConfigMap no TestRun owns, so it outlives its run's TTL and a pipeline's prune.
const (
	// LabelKeptResults marks a kept record; its value is "true". It is not LabelTestRun, so
	// the manager's cache never holds kept records (they are read uncached, by label).
	LabelKeptResults = "fleetbench.dev/kept-results"
	// LabelKeptRun is the run's name (hashed to fit a label value when longer than 63).
	LabelKeptRun = "fleetbench.dev/kept-run"
	// Annotations of a kept record: the run's full name, UID, completion time (RFC 3339) and
	// verdict. A kept record counts only when its name is KeptResults(name, uid) of them.
	AnnotationKeptName       = "fleetbench.dev/kept-name"
	AnnotationKeptUID        = "fleetbench.dev/kept-uid"
	AnnotationKeptCompletion = "fleetbench.dev/kept-completion"
	AnnotationKeptVerdict    = "fleetbench.dev/kept-verdict"
	// AnnotationKeptReference marks a record a run pinned as its fixed reference
	// (spec.baseline.reference): retention spares the newest few such records.
	AnnotationKeptReference = "fleetbench.dev/kept-reference"
	// KeptRecordKey holds the gzipped JSON Record.
	KeptRecordKey = "record.json.gz"
	// LabelPrefix is fleetbench's own label prefix: labels under it are not copied to a kept
	// record (a tenant's TestRun could otherwise plant fleetbench's labels there).
	LabelPrefix = "fleetbench.dev/"
)

// KeptResults names the kept record of the TestRun name with uid: the name and the UID's first
// 8 characters, so a run of the same name made again keeps its own.
func KeptResults(testRun, uid string) string {
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return withSuffix(testRun, "-kept-"+uid, 253)
}

// KeptRunLabel is the value of LabelKeptRun for a TestRun name.
func KeptRunLabel(testRun string) string { return fit(testRun, maxDNSLabelLength) }
