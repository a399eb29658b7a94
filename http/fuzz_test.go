package http

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

// FuzzDecodeMessages feeds the body decoder of POST .../messages arbitrary
// bytes. It either refuses the body with EINVALID or ETOOLARGE, or returns
// 1 to MaxMessagesPerRequest messages that each have a role, a text, an id
// the store accepts and a time it can hold; and what it returns, posted
// again as JSON, decodes to the same messages.
func FuzzDecodeMessages(f *testing.F) {
	for _, seed := range []string{
		`{"id":"m1","role":"user","text":"I love sci-fi but can't stand horror","at":"2025-05-01T20:00:00Z"}`,
		`[{"id":"m1","role":"user","text":"hi"},{"id":"m2","role":"assistant","text":"Noted!","at":"2025-05-01T20:00:01+02:00"}]`,
		`{"id":"turn:t1#3","role":"user","text":"x","at":"9999-12-31T00:00:00Z"}`,
		`{"role":"user","text":"  "}`, `[]`, `{"role":"bot","text":"x"}`, `{"role":"user","text":"x","extra":1}`,
		`{"id":"a\u0000b","role":"user","text":"x"}`, `[{"role":"user","text":"x"}] trailing`, `null`, ` `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, err := decodeMessages(body)
		if err != nil {
			switch memento.ErrorCode(err) {
			case memento.EINVALID, memento.ETOOLARGE:
			default:
				t.Fatalf("decodeMessages = %v, want EINVALID or ETOOLARGE", err)
			}
			if memento.ErrorMessage(err) == "" {
				t.Fatal("the error has no message")
			}
			return
		}
		if len(msgs) == 0 || len(msgs) > MaxMessagesPerRequest {
			t.Fatalf("decodeMessages returned %d messages", len(msgs))
		}
		ins := make([]MessageIn, len(msgs))
		for i, m := range msgs {
			switch {
			case m.Role == "" || strings.TrimSpace(m.Text) == "":
				t.Fatalf("messages[%d] has no role or text: %+v", i, m)
			case memento.CheckOptionalID("id", m.ID) != nil:
				t.Fatalf("messages[%d].id %q passed: %v", i, m.ID, memento.CheckOptionalID("id", m.ID))
			case memento.CheckTime("at", m.At) != nil:
				t.Fatalf("messages[%d].at %v passed", i, m.At)
			}
			ins[i] = MessageIn{ID: m.ID, Role: m.Role, Text: m.Text, At: m.At}
		}
		again, err := json.Marshal(ins)
		if err != nil {
			t.Fatalf("encode %+v: %v", ins, err)
		}
		back, err := decodeMessages(again)
		if err != nil {
			t.Fatalf("the decoded messages, encoded again as %s, are refused: %v", again, err)
		}
		for i := range back {
			a, b := msgs[i], back[i]
			if a.ID != b.ID || a.Role != b.Role || a.Text != b.Text || !a.At.Equal(b.At) {
				t.Fatalf("messages[%d] = %+v, after a round trip %+v", i, a, b)
			}
		}
	})
}
