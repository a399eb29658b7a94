package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzExtractObject feeds the answer extractor any reply a model might
// give: it returns a well-formed JSON object taken from the reply, or an
// error that says what was wrong (for the repair request). A reply that is
// an object in a fence, with prose and thoughts around it, gives that
// object back exactly.
func FuzzExtractObject(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"intent":"recommend","genres":["sci-fi"]}`, `{"a":1}`},
		{"Sure! Here is the JSON:\n```json\n{\"facts\":[{\"attribute\":\"LIKES\",\"value\":\"sci-fi\"}]}\n```\nHope this helps.", `{"b":"}{"}`},
		{"<think>The user wants {braces}. Let me answer.</think>\n{\"ok\":true}", `{"ok":true}`},
		{"I was thinking.</think>{\"ok\":true}", `{}`},
		{"<think>never ends {\"x\":1}", `{"n":null}`},
		{"```\n{\"a\":1", `{"s":"\u003cthink\u003e"}`},
		{"{\"a\": {\"b\": [1, 2, {\"c\": \"}\"}]}} and {\"second\": 2}", `{"q":"\"\\"}`},
		{"{not json} {\"a\":1}", `{"x":[{}]}`},
		{"", `{}`}, {"   \n", `{}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, reply, object string) {
		obj, err := extractObject(reply)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("extractObject(%q) failed with an empty message", reply)
			}
		} else {
			if !json.Valid(obj) || len(obj) == 0 || obj[0] != '{' || obj[len(obj)-1] != '}' {
				t.Fatalf("extractObject(%q) = %q, not a JSON object", reply, obj)
			}
			if !strings.Contains(reply, string(obj)) {
				t.Fatalf("extractObject(%q) = %q, which the reply does not hold", reply, obj)
			}
		}
		// An object of any content, fenced, with prose and thoughts
		// around it, comes back as it was.
		var v map[string]any
		if json.Unmarshal([]byte(object), &v) != nil || !json.Valid([]byte(object)) {
			return
		}
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(object)) != nil {
			return
		}
		obj2 := compact.String()
		if !strings.HasPrefix(obj2, "{") {
			return // null decodes into a map too, but is no object
		}
		if strings.Contains(obj2, "```") || strings.Contains(obj2, "think") {
			return // text of the wrapping, inside a string
		}
		wrapped := "<think>I should answer {\"like\": this}.</think>\nHere you go:\n```json\n" + obj2 + "\n```\nAnything else?"
		got, err := extractObject(wrapped)
		if err != nil || string(got) != obj2 {
			t.Fatalf("extractObject(%q) = %q, %v; want %s", wrapped, got, err, obj2)
		}
	})
}

// FuzzDecodeAnswer runs a reply through the whole decoding of a model's
// answer (extract, validate against each task's schema, re-encode) with
// any content: no panic, and whatever passes is clean, so that it passes
// the same schema again unchanged.
func FuzzDecodeAnswer(f *testing.F) {
	schemas := []*jsonSchema{understandSchema([]string{"Comedy", "Drama", "Science Fiction"}), verdictSchema(), factsSchema(),
		mergedSchema(), summarySchema(), conceptsSchema(), clusterSchema(), replySchema(), checkSchema()}
	for _, seed := range []string{
		`{"intent":"recommend","genres":["science fiction"],"minYear":1990,"maxYear":null}`,
		`{"facts":[{"attribute":"LIKES","value":"sci-fi","extra":1}]}`,
		"```json\n{\"merged\":\"likes sci-fi and horror\"}\n```",
		`{"summary":"They talked about films."}`, `{"reply":"Try Arrival."}`, `{"ok":true}`, `{"ok":"yes"}`,
		`{"concepts":[{"name":"x","kind":"fact","sign":1,"strength":1.5,"tags":[]}]}`, `{"verdict":"ok"}`,
	} {
		for i := range schemas {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, reply string) {
		schema := schemas[int(which)%len(schemas)]
		out, err := decode[map[string]any](&completion{content: reply}, schema, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("decode failed with an empty message")
			}
			return
		}
		clean, err := json.Marshal(*out)
		if err != nil {
			t.Fatalf("encode the decoded answer: %v", err)
		}
		again, err := decode[map[string]any](&completion{content: string(clean)}, schema, nil)
		if err != nil {
			t.Fatalf("the cleaned answer %s fails its schema: %v", clean, err)
		}
		if b, _ := json.Marshal(*again); !bytes.Equal(b, clean) {
			t.Fatalf("the cleaned answer changes when decoded again: %s, then %s", clean, b)
		}
	})
}
