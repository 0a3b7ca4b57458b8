package rbac

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The README's threat model states the manager's rights in a form this test reads, so the doc
// cannot drift from the roles again (it said 66 grants while the role held 75):
//   - "a ClusterRole of N grants", "a Role of N grants for leader election", "one of N grant for
//     kubelet tokens": the count of verb×resource pairs (grants) of that generated role;
//   - a backticked permission, `resource[.group] verb[,verb…]` (a non-resource URL starts with
//     /), is granted by some generated role; preceded by "no ", by none of the roles bound to
//     the manager in every install (its ClusterRole, leader election's Role, the kubelet-token Role).

// readmeCounts ties each stated count to its role.
var readmeCounts = []struct {
	pattern *regexp.Regexp
	role    string
}{
	{regexp.MustCompile(`a ClusterRole of (\d+) grants`), manager},
	{regexp.MustCompile(`a Role of (\d+) grants for leader election`), election},
	{regexp.MustCompile(`one of (\d+) grants? for kubelet tokens`), token},
}

var (
	verbsPattern = `(?:get|list|watch|create|update|patch|delete|deletecollection)`
	permission   = regexp.MustCompile("(no )?`(/[a-z0-9/._-]*|[a-z0-9/]+(?:\\.[a-z0-9.-]+)?) (" + verbsPattern + "(?:," + verbsPattern + ")*)`")
)

// threatModel is the README's "Who may do what" section.
func threatModel(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "### Who may do what (threat model)")
	if !ok {
		t.Fatal(`README.md has no "### Who may do what (threat model)" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// key is a permission as grants writes it: "group/resource verb" or "nonResourceURL /x verb".
func key(resource, verb string) string {
	if strings.HasPrefix(resource, "/") {
		return "nonResourceURL " + resource + " " + verb
	}
	res, group, _ := strings.Cut(resource, ".")
	return group + "/" + res + " " + verb
}

func TestReadmeMatchesTheRoles(t *testing.T) {
	doc := threatModel(t)
	for _, c := range readmeCounts {
		m := c.pattern.FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("the threat model no longer says %q: state the count of config/rbac/%s", c.pattern, c.role)
			continue
		}
		want := len(grants(readRules(t, c.role)))
		if got, _ := strconv.Atoi(m[1]); got != want {
			t.Errorf("the threat model says %q, but config/rbac/%s holds %d grants", m[0], c.role, want)
		}
	}

	anywhere := map[string]bool{}
	for _, file := range roleFiles {
		for _, k := range grants(readRules(t, file)) {
			k, _, _ = strings.Cut(k, " [") // a named grant still grants the verb
			anywhere[k] = true
		}
	}
	var always []string
	for _, file := range []string{manager, election, token} {
		always = append(always, grants(readRules(t, file))...)
	}
	var granted, denied int
	for _, m := range permission.FindAllStringSubmatch(doc, -1) {
		for _, verb := range strings.Split(m[3], ",") {
			k := key(m[2], verb)
			switch {
			case m[1] != "":
				denied++
				if slices.ContainsFunc(always, func(g string) bool { return g == k || strings.HasPrefix(g, k+" [") }) {
					t.Errorf("the threat model says %q, but the manager is granted %s", m[0], k)
				}
			default:
				granted++
				if !anywhere[k] {
					t.Errorf("the threat model names %q, but no role in config/rbac grants %s", m[0], k)
				}
			}
		}
	}
	// The form above is what makes the check bite: the rows must keep using it.
	if granted < 5 || denied < 5 {
		t.Errorf("the threat model names %d granted and %d refused permissions in the checked form; its RBAC rows must state theirs as `resource verb`", granted, denied)
	}
}
