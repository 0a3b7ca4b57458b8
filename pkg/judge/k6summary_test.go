package judge

import (
	"encoding/json"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// The full result reads as k6's own summary data: typed values per metric, thresholds under
// their metric or tagged sub-metric, checks nested in their groups with k6's ids.
func TestK6SummaryShape(t *testing.T) {
	s := collected(t, measure.DefaultCollectorConfig, func(c *measure.Collector, at int64) {
		for name, ms := range map[string]float64{"home": 5, "orders": 50} {
			d := c.Series("http_req_duration", measure.Trend, "time", map[string]string{"name": name})
			for i := range 10 {
				d.Add(at+int64(i), ms)
			}
		}
		c.Series("http_reqs", measure.Counter, "", nil).Add(at, 20)
		ok := c.Series("checks", measure.Rate, "", map[string]string{"group": "::shop::cart", "check": "added"})
		ok.Add(at, 1)
		ok.Add(at, 0)
	})
	o := Build(s, map[string]v1alpha1.ThresholdList{"http_req_duration{name:home}": {"p(95)<10"}}, 1)
	b, err := json.Marshal(o.K6Summary)
	if err != nil {
		t.Fatal(err)
	}
	var k6 struct {
		Metrics map[string]struct {
			Type       string                       `json:"type"`
			Contains   string                       `json:"contains"`
			Values     map[string]float64           `json:"values"`
			Thresholds map[string]struct{ OK bool } `json:"thresholds"`
		} `json:"metrics"`
		RootGroup struct {
			Groups []struct {
				Name   string `json:"name"`
				Groups []struct {
					Path   string `json:"path"`
					Checks []struct {
						Name, Path, ID string
						Passes, Fails  int
					} `json:"checks"`
				} `json:"groups"`
			} `json:"groups"`
		} `json:"root_group"`
		State struct{ TestRunDurationMs float64 } `json:"state"`
	}
	if err := json.Unmarshal(b, &k6); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if m := k6.Metrics["http_reqs"]; m.Type != "counter" || m.Contains != "default" || m.Values["count"] != 20 || m.Values["rate"] != 2 {
		t.Errorf("http_reqs %+v", m)
	}
	if m := k6.Metrics["http_req_duration"]; m.Type != "trend" || m.Contains != "time" || m.Values["max"] != 50 || m.Values["min"] != 5 {
		t.Errorf("http_req_duration %+v", m)
	}
	sub := k6.Metrics["http_req_duration{name:home}"]
	if sub.Values["max"] != 5 || sub.Values["p(95)"] > 5.03 || !sub.Thresholds["p(95)<10"].OK {
		t.Errorf("sub-metric %+v: want name:home's values and its threshold", sub)
	}
	g := k6.RootGroup.Groups
	if len(g) != 1 || g[0].Name != "shop" || len(g[0].Groups) != 1 || g[0].Groups[0].Path != "::shop::cart" {
		t.Fatalf("groups %+v", g)
	}
	// k6's check id is the hex MD5 of its path.
	if c := g[0].Groups[0].Checks; len(c) != 1 || c[0].Path != "::shop::cart::added" || c[0].Passes != 1 || c[0].Fails != 1 ||
		c[0].ID != "db76d700fa9f801b26d8c2cebb34a9eb" {
		t.Errorf("checks %+v", c)
	}
	if k6.State.TestRunDurationMs != 10000 {
		t.Errorf("state %+v", k6.State)
	}
}
