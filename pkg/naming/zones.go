package naming

import "fmt"

// Labels of a zoned run's zone runs and starts (spec.zones): the home run's name and UID. A
// zone run cannot carry an owner reference: MultiKueue copies it to the zone's cluster, where
// that owner does not exist and the garbage collector would delete the copy.
const (
	LabelZoneOf    = "fleetbench.dev/zone-of"
	LabelZoneOfUID = "fleetbench.dev/zone-of-uid"
)

// ZoneRun names the zone run of zone in a zoned TestRun. Within a label value, as a TestRun
// name is used in its children's labels.
func ZoneRun(testRun, zone string) string {
	return withSuffix(testRun, fmt.Sprintf("-zone-%s", zone), maxDNSLabelLength)
}

// ZoneStart names the ZoneStart that starts a zone run; its Workload is Workload(ZoneStart(...)).
func ZoneStart(zoneRun string) string {
	return withSuffix(zoneRun, "-start", maxDNSLabelLength)
}
