package offline

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

func TestExplore(t *testing.T) {
	path := os.Getenv("EXPLORE")
	if path == "" { t.Skip() }
	m := newTestModel(t)
	f, _ := os.Open(path)
	sc := bufio.NewScanner(f)
	mode := os.Getenv("MODE")
	for sc.Scan() {
		line := sc.Text()
		if line == "" { continue }
		ctxt := memento.NewActiveContext()
		if strings.HasPrefix(line, "C:") {
			line = line[2:]
			ctxt.Genres = []string{"Comedy"}
			ctxt.TitleType = "movie"
		}
		var out any
		switch mode {
		case "facts":
			out, _ = m.ExtractFacts(context.Background(), memento.ExtractInput{Message: line})
		case "prefs":
			out, _ = m.ExtractPreferences(context.Background(), line)
		default:
			out, _ = m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: line, Context: ctxt})
		}
		b, _ := json.Marshal(out)
		b2 := strings.ReplaceAll(string(b), `"search":`, "S:")
		fmt.Printf("%-70.70s %s\n", line, b2)
	}
}
