package openai

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestExtractObject(t *testing.T) {
	tests := []struct {
		name, reply, want, wantErr string
	}{
		{"bare", `{"a":1}`, `{"a":1}`, ""},
		{"fenced", "```json\n{\"a\": 1}\n```", `{"a": 1}`, ""},
		{"prose around", "Sure! Here it is: {\"a\": {\"b\": [1, 2]}} Hope that helps.", `{"a": {"b": [1, 2]}}`, ""},
		{"braces in strings", `{"a": "} not the end {"}`, `{"a": "} not the end {"}`, ""},
		{"escaped quote", `{"a": "say \"hi\" }"}`, `{"a": "say \"hi\" }"}`, ""},
		{"thinking first", "<think>maybe {x}? I'll answer {\"a\":2}</think>\n{\"a\":1}", `{"a":1}`, ""},
		{"brace in prose first", "Using {curly} notes: {\"a\":1}", `{"a":1}`, ""},
		{"fence without language", "```\n{\"a\": 1}\n```", `{"a": 1}`, ""},
		{"fence beats an example in prose", "The format is {\"a\": 0}. Answer:\n```json\n{\"a\": 1}\n```", `{"a": 1}`, ""},
		{"fence on one line", "```json {\"a\":1} ```", `{"a":1}`, ""},
		{"fence never closed", "```json\n{\"a\":1}\n", `{"a":1}`, ""},
		{"fenced malformed, bare valid after", "```json\n{\"a\":}\n```\nSorry: {\"a\":1}", `{"a":1}`, ""},
		{"thinking then fence", "<think>The user wants {a}.</think>\n```json\n{\"a\":1}\n```", `{"a":1}`, ""},
		{"thinking tag long form", "<thinking>hmm {\"a\":2}</thinking>{\"a\":1}", `{"a":1}`, ""},
		{"two thinking blocks", "<think>one {\"a\":2}</think><think>two {\"a\":3}</think> {\"a\":1}", `{"a":1}`, ""},
		{"opening tag swallowed by the template", "the user asks for {\"a\":2}, so\n</think>\n\n{\"a\":1}", `{"a":1}`, ""},
		{"thinking never ended", "<think>Let me consider {\"a\":2} and", "", "reasoning that never ended"},
		{"answer before unended thinking", "{\"a\":1}\n<think>more {\"a\":2}", `{"a":1}`, ""},
		{"word think in an answer", `{"a":"I think so"}`, `{"a":"I think so"}`, ""},
		{"only thinking", "<think>{\"a\":2}</think>", "", "the reply is empty"},
		{"empty", "  \n", "", "the reply is empty"},
		{"no object", "I cannot help with that.", "", "the reply holds no JSON object"},
		{"cut off", `{"a": [1, 2`, "", "the JSON object is not closed"},
		{"malformed", `{"a": 1,}`, "", "the JSON object is malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := extractObject(tt.reply)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	schema := object(
		prop("name", str()),
		prop("kind", enumOf(str(), "taste", "fact")),
		prop("sign", enumOf(integer(), -1, 1)),
		prop("strength", between(number(), 0, 1)),
		prop("year", nullable(integer())),
		prop("mode", nullable(enumOf(str(), "older", "newer"))),
		prop("tags", array(str())),
	)
	valid := `{"name":"x","kind":"fact","sign":-1,"strength":0.5,"year":null,"mode":"older","tags":["a"]}`
	tests := []struct {
		name, doc, wantErr string
	}{
		{"valid", valid, ""},
		{"nullable missing", `{"name":"x","kind":"fact","sign":1,"strength":1,"tags":[]}`, ""},
		{"unknown field dropped", `{"name":"x","kind":"fact","sign":1,"strength":1,"tags":[],"extra":true}`, ""},
		{"missing required", `{"kind":"fact","sign":1,"strength":1,"tags":[]}`, `$ is missing the required field "name"`},
		{"wrong type", `{"name":1,"kind":"fact","sign":1,"strength":1,"tags":[]}`, "$.name must be a string, got 1"},
		{"not an integer", `{"name":"x","kind":"fact","sign":1,"strength":1,"year":1990.5,"tags":[]}`, "$.year must be an integer or null, got 1990.5"},
		{"enum", `{"name":"x","kind":"opinion","sign":1,"strength":1,"tags":[]}`, `$.kind must be one of "taste", "fact", got "opinion"`},
		{"integer enum", `{"name":"x","kind":"fact","sign":0,"strength":1,"tags":[]}`, "$.sign must be one of -1, 1, got 0"},
		{"nullable enum", `{"name":"x","kind":"fact","sign":1,"strength":1,"mode":"sideways","tags":[]}`, `$.mode must be one of "older", "newer", null, got "sideways"`},
		{"above maximum", `{"name":"x","kind":"fact","sign":1,"strength":1.5,"tags":[]}`, "$.strength must be at most 1, got 1.5"},
		{"array item", `{"name":"x","kind":"fact","sign":1,"strength":1,"tags":["a",2]}`, "$.tags[1] must be a string, got 2"},
		{"root", `[1]`, "$ must be an object, got an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.doc), &v); err != nil {
				t.Fatal(err)
			}
			_, err := validate(schema, v, "$")
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("validate = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("validate = %v, want %q", err, tt.wantErr)
			}
		})
	}
	t.Run("enum case is normalised", func(t *testing.T) {
		var v any
		_ = json.Unmarshal([]byte(`{"name":"x","kind":" FACT","sign":1,"strength":1,"mode":"Older","tags":[]}`), &v)
		got, err := validate(schema, v, "$")
		if err != nil {
			t.Fatal(err)
		}
		m := got.(map[string]any)
		if m["kind"] != "fact" || m["mode"] != "older" {
			t.Errorf("kind, mode = %v, %v; want fact, older", m["kind"], m["mode"])
		}
	})
	t.Run("unknown fields are removed", func(t *testing.T) {
		var v any
		_ = json.Unmarshal([]byte(`{"name":"x","kind":"fact","sign":1,"strength":1,"tags":[],"extra":true}`), &v)
		if _, err := validate(schema, v, "$"); err != nil {
			t.Fatal(err)
		}
		if _, ok := v.(map[string]any)["extra"]; ok {
			t.Error("extra field kept")
		}
	})
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond},
		{"date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"1200"}, "Retry-After": {"2"}}, 1200 * time.Millisecond},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.header, now); got != tt.want {
				t.Errorf("retryAfter = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestServerMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"bad schema","type":"invalid_request_error"}}`, "bad schema"},
		{`{"error":"model not loaded"}`, "model not loaded"},
		{`{"detail":"Unknown response format"}`, "Unknown response format"},
		{`{"detail":[{"loc":["body"],"msg":"field required"}]}`, `[{"loc":["body"],"msg":"field required"}]`},
		{`{"message":"proxy says no"}`, "proxy says no"},
		{"Bad Gateway\n", "Bad Gateway"},
	}
	for _, tt := range tests {
		if got := serverMessage([]byte(tt.body), nil); got != tt.want {
			t.Errorf("serverMessage(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"One sentence. Another sentence here.", 20, "One sentence."},
		{"words without any stop at all", 12, "words"},
		{"a, b, c, d, e, f", 8, "a, b, c"},
		{"ééééé ééééé", 7, "ééééé"},
		{"nospacesatall", 5, "nospa"},
	}
	for _, tt := range tests {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestSchemaMarshalKeepsOrder(t *testing.T) {
	got, err := json.Marshal(verdictSchema())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"reason":{"type":"string"},"ok":{"type":"boolean"}},"required":["reason","ok"],"additionalProperties":false}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("schema JSON mismatch (-want +got):\n%s", diff)
	}
}

func BenchmarkExtractObject(b *testing.B) {
	reply := "Sure, here is the answer:\n```json\n" + strings.Repeat(" ", 10) +
		`{"facts": [{"text": "loves westerns {really}", "negated": false}, {"text": "does not like horror", "negated": true}]}` +
		"\n```\nLet me know if you need anything else."
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := extractObject(reply); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	schema := understandSchema(nil)
	doc := []byte(`{"search":true,"replace":false,"reject":false,"genres":["Science Fiction"],"titleType":"movie","minYear":1990,"maxYear":1999,"yearShift":null,"people":null,"freeText":null,"isAdult":null,"count":5,"recognised":true,"question":null}`)
	for b.Loop() {
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			b.Fatal(err)
		}
		if _, err := validate(schema, v, "$"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalise(b *testing.B) {
	v := make([]float64, 1536)
	for i := range v {
		v[i] = float64(i%17) - 8
	}
	for b.Loop() {
		normalise(v)
	}
}
