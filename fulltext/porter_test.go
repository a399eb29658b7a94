package fulltext

import "testing"

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
	}
	for in, want := range tests {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
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
