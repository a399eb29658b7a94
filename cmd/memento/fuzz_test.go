package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

// FuzzReadIngestJSONL feeds `memento ingest` JSON lines of any content: it
// refuses with EINVALID naming the line, or returns batches of one user
// and thread whose messages have a role, a text, ids the store accepts and
// times it can hold, every line of the input in one batch.
func FuzzReadIngestJSONL(f *testing.F) {
	for _, seed := range []string{
		`{"id":"m1","user":"ann","thread":"t1","role":"user","text":"I love sci-fi","at":"2025-05-01T20:00:00Z"}` + "\n" +
			`{"id":"m2","user":"ann","thread":"t1","role":"assistant","text":"Noted!"}` + "\n\n" +
			`{"user":"bob@example.com","thread":"turn:t1#3","text":"hi"}`,
		`{"id":"D1:3","thread":"session_1","text":"Caroline: I went to a support group","at":"2023-05-08T13:56:00Z"}`,
		`{"user":"ann","thread":"t","text":"x","at":"9999-12-31T00:00:00Z"}`, `{"user":"ann\u0000","thread":"t","text":"x"}`,
		`{"user":"ann","thread":"t","text":"x","role":"bot"}`, `{"user":"ann","thread":"t","text":" "}`, `{"user":"ann","thread":"t","text":"x","x":1}`,
		`[1,2]`, "\xff\xfe",
	} {
		f.Add([]byte(seed), "")
	}
	f.Add([]byte(`{"thread":"t","text":"x"}`), "default-user")
	f.Fuzz(func(t *testing.T, data []byte, defaultUser string) {
		batches, err := readIngestJSONL(bytes.NewReader(data), "-", defaultUser)
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID {
				t.Fatalf("readIngestJSONL = %v, want EINVALID", err)
			}
			return
		}
		n := 0
		seen := map[[2]string]bool{}
		for _, b := range batches {
			key := [2]string{b.user, b.thread}
			if seen[key] {
				t.Fatalf("two batches of user %q thread %q", b.user, b.thread)
			}
			seen[key] = true
			if memento.CheckID("user", b.user) != nil || memento.CheckID("thread", b.thread) != nil {
				t.Fatalf("batch of user %q thread %q passed", b.user, b.thread)
			}
			for _, m := range b.msgs {
				n++
				switch {
				case !m.Role.Valid() || strings.TrimSpace(m.Text) == "":
					t.Fatalf("message %+v has no role or text", m)
				case memento.CheckOptionalID("id", m.ID) != nil || memento.CheckTime("at", m.At) != nil:
					t.Fatalf("message %+v has an id or time the store refuses", m)
				}
			}
		}
		lines := 0
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if n > lines {
			t.Fatalf("%d messages from %d lines", n, lines)
		}
	})
}

// TestReadIngestJSONLRefusesWhatTheStoreCannotHold checks that ids and
// times the store would refuse are refused when the file is read, naming
// the line, before anything is stored.
func TestReadIngestJSONLRefusesWhatTheStoreCannotHold(t *testing.T) {
	ok := `{"user":"ann","thread":"t","text":"x"}` + "\n"
	tests := []struct{ line, msg string }{
		{`{"user":"ann","thread":"t","text":"x","at":"9999-12-31T00:00:00Z"}`, "in.jsonl:2: at 9999-12-31T00:00:00Z is out of range: times must be from 1678-01-01 to 2261-12-31 UTC"},
		{`{"user":"ann\u0001","thread":"t","text":"x"}`, "in.jsonl:2: user holds the control character U+0001 at byte 3; ids are letters, digits, punctuation, symbols and spaces"},
		{"{\"user\":\"ann\",\"thread\":\"t\xff\",\"text\":\"x\"}", "in.jsonl:2: thread holds U+FFFD at byte 1: it was not valid UTF-8"},
		{`{"id":" m1","user":"ann","thread":"t","text":"x"}`, `in.jsonl:2: id " m1" begins or ends with a space`},
	}
	for _, tt := range tests {
		_, err := readIngestJSONL(strings.NewReader(ok+tt.line), "-", "")
		if memento.ErrorCode(err) != memento.EINVALID || strings.Replace(memento.ErrorMessage(err), "-:", "in.jsonl:", 1) != tt.msg {
			t.Errorf("line %s: err = %v, want EINVALID %q", tt.line, err, tt.msg)
		}
	}
}
