package hygiene

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
)

// Finding is one item of a document whose text carries instructions to
// the model: where it is (a JSON path such as "memories[2].value") and
// why it was refused.
type Finding struct {
	Item   string `json:"item"`
	Reason string `json:"reason"`
}

func (f Finding) String() string { return f.Item + ": " + f.Reason }

// SectionScreener is implemented by a memento.UserSection whose data
// holds text that reaches memory or a prompt (preferences, the profile).
// ScreenSection returns the section without the items whose text fails
// the gate and one finding per item left out, named from the section's
// root ("preferences[3].concept"); it changes nothing when there is none.
// Errors: EINVALID for data that is not a section.
type SectionScreener interface {
	ScreenSection(data json.RawMessage) (json.RawMessage, []Finding, error)
}

// ScreenExport applies the gate to every text of a user export that
// becomes memory or reaches a prompt, and changes doc so that none of it
// does:
//
//   - a memory whose value fails is removed;
//   - a summary whose text fails is removed;
//   - an active context whose free text fails loses it;
//   - a message whose text fails stays in the log (it is what was said)
//     but is marked as hygiene marks it on ingest: a rejected run, which
//     keeps it out of recall. A message the document already marks so is
//     not a finding: an export of a user who once sent such a message
//     imports again.
//
// Sections are screened by the screeners given, keyed by section name.
// The findings say what was changed; paths that must refuse instead of
// clean (an import through the API) fail when there is any. Errors:
// EINVALID for a section that does not decode.
func ScreenExport(doc *memento.UserExport, screeners map[string]SectionScreener) ([]Finding, error) {
	if doc == nil {
		return nil, nil
	}
	var out []Finding
	rejected := map[string]bool{}
	for _, r := range doc.Runs {
		if r.Outcome == memento.RunRejected {
			rejected[r.Message] = true
		}
	}
	for i := range doc.Threads {
		t := &doc.Threads[i]
		for j, m := range t.Messages {
			reasons := CheckRole(m.Role, m.Text)
			if len(reasons) == 0 || rejected[m.ID] {
				continue
			}
			why := strings.Join(reasons, "; ")
			out = append(out, Finding{Item: fmt.Sprintf("threads[%d].messages[%d] (%s)", i, j, m.ID), Reason: why})
			rejected[m.ID] = true
			doc.Runs = append(doc.Runs, memento.MemoryRun{
				Message: m.ID, Thread: t.Thread.ID, Outcome: memento.RunRejected,
				Reason:   "hygiene: the message instructs the system (" + why + ")",
				Rejected: reasons, Facts: []memento.Fact{}, Memories: []string{}, Superseded: []string{}, Steps: []memento.RunStep{},
				StartedAt: m.At, FinishedAt: m.At,
			})
		}
		kept := t.Summaries[:0]
		for j, sum := range t.Summaries {
			if reasons := CheckStored(sum.Text); len(reasons) > 0 {
				out = append(out, Finding{Item: fmt.Sprintf("threads[%d].summaries[%d].text", i, j), Reason: strings.Join(reasons, "; ")})
				continue
			}
			kept = append(kept, sum)
		}
		t.Summaries = kept
		if reasons := CheckStored(t.ActiveContext.FreeText); len(reasons) > 0 {
			out = append(out, Finding{Item: fmt.Sprintf("threads[%d].activeContext.freeText", i), Reason: strings.Join(reasons, "; ")})
			t.ActiveContext.FreeText = ""
		}
	}
	kept := doc.Memories[:0]
	for i, m := range doc.Memories {
		if reasons := CheckStored(m.Value); len(reasons) > 0 {
			out = append(out, Finding{Item: fmt.Sprintf("memories[%d].value (%s)", i, m.ID), Reason: strings.Join(reasons, "; ")})
			continue
		}
		kept = append(kept, m)
	}
	doc.Memories = kept
	for name, data := range doc.Sections {
		sc, ok := screeners[name]
		if !ok {
			continue
		}
		clean, found, err := sc.ScreenSection(data)
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", name, err)
		}
		for _, f := range found {
			f.Item = "sections." + name + "." + f.Item
			out = append(out, f)
		}
		if len(found) > 0 {
			doc.Sections[name] = clean
		}
	}
	return out, nil
}

// Screeners returns the screeners among sections, by section name, for
// ScreenExport.
func Screeners(sections []memento.UserSection) map[string]SectionScreener {
	out := map[string]SectionScreener{}
	for _, s := range sections {
		if sc, ok := s.(SectionScreener); ok {
			out[s.SectionName()] = sc
		}
	}
	return out
}

// maxNamed bounds how many findings an error message lists.
const maxNamed = 10

// Refuse returns the EINVALID error of a document refused for its
// findings, naming the first of them, or nil when there is none.
func Refuse(what string, findings []Finding) error {
	if len(findings) == 0 {
		return nil
	}
	var b strings.Builder
	for i, f := range findings {
		if i == maxNamed {
			fmt.Fprintf(&b, "; and %d more", len(findings)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.String())
	}
	return memento.Errorf(memento.EINVALID, "%s refused: %d item(s) carry instructions to the model, nothing was stored: %s", what, len(findings), b.String())
}

// JSONStrings returns the reasons of every string inside a JSON value
// (object keys included) that fails the gate, one line per failing string
// with its path under root; nil when the value is clean or not JSON.
func JSONStrings(root string, data json.RawMessage) []Finding {
	var v any
	if len(data) == 0 || json.Unmarshal(data, &v) != nil {
		return nil
	}
	var out []Finding
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			if reasons := CheckStored(x); len(reasons) > 0 {
				out = append(out, Finding{Item: path, Reason: strings.Join(reasons, "; ")})
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				e := x[k]
				if reasons := CheckStored(k); len(reasons) > 0 {
					out = append(out, Finding{Item: path + "." + k, Reason: strings.Join(reasons, "; ")})
				}
				walk(path+"."+k, e)
			}
		}
	}
	walk(root, v)
	return out
}
