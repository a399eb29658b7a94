package fulltext

import (
	"strings"
	"testing"
)

func TestStem(t *testing.T) {
	// Pairs from Porter's paper and the reference vocabulary.
	tests := map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "digitizer": "digit", "vietnamization": "vietnam", "predication": "predic",
		"operator": "oper", "feudalism": "feudal", "decisiveness": "decis", "hopefulness": "hope",
		"callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit", "sensibiliti": "sensibl",
		"triplicate": "triplic", "formative": "form", "formalize": "formal", "electriciti": "electr",
		"electrical": "electr", "hopeful": "hope", "goodness": "good", "revival": "reviv",
		"allowance": "allow", "inference": "infer", "airliner": "airlin", "gyroscopic": "gyroscop",
		"adjustable": "adjust", "defensible": "defens", "irritant": "irrit", "replacement": "replac",
		"adjustment": "adjust", "dependent": "depend", "adoption": "adopt", "homologous": "homolog",
		"communism": "commun", "activate": "activ", "angulariti": "angular", "effective": "effect",
		"bowdlerize": "bowdler", "probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control",
		"roll": "roll", "generalizations": "gener", "oscillators": "oscil", "painting": "paint",
		"paintings": "paint", "likes": "like", "liked": "like", "is": "is", "a": "a", "2023": "2023",
		"café": "café",
		// FTS5's variant: bytes, not letters, and Porter's later step 2.
		"1990s": "1990", "mp3s": "mp3", "3rd": "3rd", "biology": "biologi", "apology": "apolog", "possibly": "possibl", "probably": "probabl",
		"sensibility": "sensibl", "straßes": "straß", "đorđe": "đorđ",
		strings.Repeat("a", 61) + "ing": strings.Repeat("a", 61),
		strings.Repeat("a", 62) + "ing": strings.Repeat("a", 62) + "ing", // longer than 64 bytes
	}
	for in, want := range tests {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStemBytesInPlace(t *testing.T) {
	buf := []byte("generalizations")
	got := StemBytes(buf)
	if string(got) != "gener" || &got[0] != &buf[0] {
		t.Errorf("StemBytes = %q (same buffer %v), want gener in place", got, &got[0] == &buf[0])
	}
	if n := testing.AllocsPerRun(100, func() { StemBytes([]byte("relational")[:]) }); n > 1 {
		t.Errorf("StemBytes allocates %v times", n)
	}
}

func TestWords(t *testing.T) {
	got := Words("Caroline: I went to the LGBTQ support group, yesterday!")
	want := []string{"caroline", "i", "went", "to", "the", "lgbtq", "support", "group", "yesterday"}
	if len(got) != len(want) {
		t.Fatalf("words = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("words = %q, want %q", got, want)
		}
	}
}

// BenchmarkEachTerm measures the terms of a plot, the work the catalog's
// index does for every title at startup.
func BenchmarkEachTerm(b *testing.B) {
	text := "Obsessive master thief Neil McCauley leads a top-notch crew on various daring heists " +
		"throughout Los Angeles while determined detective Vincent Hanna pursues him without rest. Each man recognizes " +
		"and respects the ability and the dedication of the other even though they are aware their cat-and-mouse game may end in violence."
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		EachTerm(text, func([]byte) {})
	}
}
