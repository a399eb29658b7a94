package memento_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The ways the code names a Prometheus metric: an Opts literal's Name, a
// call whose first argument is the name (a descriptor, the engine's gauge
// and counter helpers), and an Opts literal split into namespace,
// subsystem and name.
var (
	metricNamed = []*regexp.Regexp{
		regexp.MustCompile(`Name:\s*"(memento_[a-z0-9_]+)"`),
		regexp.MustCompile(`\w\(\s*"(memento_[a-z0-9_]+)"`),
	}
	metricSplit = regexp.MustCompile(`Namespace:\s*"memento",\s*Subsystem:\s*"([a-z0-9_]+)",\s*Name:\s*"([a-z0-9_]+)"`)
	// A documented metric is the first cell of a row of docs/METRICS.md.
	metricRow = regexp.MustCompile("(?m)^\\| `(memento_[a-z0-9_]+)` \\|")
)

// sourceMetrics returns the metrics the module's code defines.
func sourceMetrics(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, re := range metricNamed {
			for _, m := range re.FindAllSubmatch(b, -1) {
				found[string(m[1])] = path
			}
		}
		for _, m := range metricSplit.FindAllSubmatch(b, -1) {
			found["memento_"+string(m[1])+"_"+string(m[2])] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Every metric the code defines is in docs/METRICS.md, and every metric
// there is one the code defines: an operator reads what each means there.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range metricRow.FindAllSubmatch(doc, -1) {
		documented[string(m[1])] = true
	}
	defined := sourceMetrics(t)
	// The code defines far more than a handful; finding few means the
	// patterns above no longer match how metrics are written.
	if len(defined) < 40 {
		t.Fatalf("found %d metrics in the code, expected dozens: has the way they are defined changed?", len(defined))
	}
	var missing, stale []string
	for name, path := range defined {
		if !documented[name] {
			missing = append(missing, name+" ("+path+")")
		}
	}
	for name := range documented {
		if _, ok := defined[name]; !ok {
			stale = append(stale, name)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	if len(missing) > 0 {
		t.Errorf("metrics missing from docs/METRICS.md:\n%s", strings.Join(missing, "\n"))
	}
	if len(stale) > 0 {
		t.Errorf("docs/METRICS.md documents metrics the code does not define:\n%s", strings.Join(stale, "\n"))
	}
}
