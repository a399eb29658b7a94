package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

func TestMergeFact(t *testing.T) {
	m := newTestModel(t)
	genre := memento.AttributeSpec{Name: "GENRE", Mode: "semantic"}
	location := memento.AttributeSpec{Name: "LOCATION", Mode: "semantic"}
	tests := []struct {
		name    string
		attr    memento.AttributeSpec
		current string
		fact    memento.Fact
		want    string
	}{
		{"first value", genre, "", fact("loves science fiction"), "loves science fiction"},
		{"appends", genre, "loves science fiction", fact("likes westerns"), "loves science fiction; likes westerns"},
		{"supersedes the same topic", genre, "can't stand horror", fact("has come around on horror"), "has come around on horror"},
		{"keeps the rest", genre, "loves science fiction; can't stand horror; likes westerns", fact("has come around on horror"),
			"loves science fiction; likes westerns; has come around on horror"},
		{"stronger statement", genre, "likes horror movies", fact("loves horror"), "loves horror"},
		{"different people stay", genre, "likes Tom Hanks", fact("likes Tom Cruise"), "likes Tom Hanks; likes Tom Cruise"},
		{"already known", genre, "loves science fiction; likes westerns", fact("likes westerns"), "loves science fiction; likes westerns"},
		{"moves house", location, "lives in Lisbon", fact("moved to Porto"), "moved to Porto"},
		{"new favourite", genre, "favourite movie is Alien; loves westerns", fact("favourite movie is Heat"), "loves westerns; favourite movie is Heat"},
		{"empty fact", genre, "loves westerns", fact("  "), "loves westerns"},
		{"messy current", genre, " loves westerns ;; likes noir. ", fact("likes comedies"), "loves westerns; likes noir; likes comedies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := memento.MergeInput{Attribute: tt.attr, Current: tt.current, Fact: tt.fact}
			got, err := m.MergeFact(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("MergeFact(%q + %q) = %q, want %q", tt.current, tt.fact.Text, got, tt.want)
			}
			if v, _ := m.ReviewMerge(context.Background(), in, got); !v.OK && strings.TrimSpace(tt.fact.Text) != "" {
				t.Errorf("ReviewMerge rejects MergeFact's own result %q: %s", got, v.Reason)
			}
		})
	}
}

func TestReviewMerge(t *testing.T) {
	m := newTestModel(t)
	in := memento.MergeInput{
		Attribute: memento.AttributeSpec{Name: "GENRE"},
		Current:   "loves science fiction; can't stand horror; likes westerns",
		Fact:      fact("has come around on horror"),
	}
	tests := []struct {
		name   string
		merged string
		ok     bool
		naming []string
	}{
		{"good", "loves science fiction; likes westerns; has come around on horror", true, nil},
		{"reworded", "likes westerns, loves science fiction and has come around on horror", true, nil},
		{"lost a clause", "loves science fiction; has come around on horror", false, []string{`"likes westerns"`}},
		{"lacks the fact", "loves science fiction; likes westerns", false, []string{"lacks", `"has come around on horror"`}},
		{"both", "loves science fiction", false, []string{`"likes westerns"`, `"has come around on horror"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := m.ReviewMerge(context.Background(), in, tt.merged)
			if err != nil {
				t.Fatal(err)
			}
			if v.OK != tt.ok {
				t.Fatalf("ReviewMerge(%q) OK = %v (%s), want %v", tt.merged, v.OK, v.Reason, tt.ok)
			}
			for _, n := range tt.naming {
				if !strings.Contains(v.Reason, n) {
					t.Errorf("reason %q does not name %s", v.Reason, n)
				}
			}
		})
	}
}

// TestMergeRepair checks that a reviewer's note keeps a clause the merge
// would have dropped.
func TestMergeRepair(t *testing.T) {
	m := newTestModel(t)
	in := memento.MergeInput{
		Attribute:  memento.AttributeSpec{Name: "GENRE"},
		Current:    "likes horror movies; loves westerns",
		Fact:       fact("loves horror"),
		RepairNote: `The merged value lost clauses of the current value (keep them): "likes horror movies".`,
	}
	got, err := m.MergeFact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "likes horror movies; loves westerns; loves horror"; got != want {
		t.Errorf("MergeFact with a repair note = %q, want %q", got, want)
	}
}
