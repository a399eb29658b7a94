package memento_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

func TestCheckTime(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		msg  string // "" when the time is accepted
	}{
		{"zero means unset", time.Time{}, ""},
		{"now", time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), ""},
		{"first instant", time.Date(memento.MinTimeYear, 1, 1, 0, 0, 0, 0, time.UTC), ""},
		{"last instant", time.Date(memento.MaxTimeYear, 12, 31, 23, 59, 59, 999999999, time.UTC), ""},
		{"first instant in another zone", time.Date(memento.MinTimeYear, 1, 1, 2, 0, 0, 0, time.FixedZone("+02", 2*3600)), ""},
		{"just before", time.Date(memento.MinTimeYear-1, 12, 31, 23, 59, 59, 0, time.UTC),
			"at 1677-12-31T23:59:59Z is out of range: times must be from 1678-01-01 to 2261-12-31 UTC"},
		{"just after", time.Date(memento.MaxTimeYear+1, 1, 1, 0, 0, 0, 0, time.UTC),
			"at 2262-01-01T00:00:00Z is out of range: times must be from 1678-01-01 to 2261-12-31 UTC"},
		{"far future", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
			"at 9999-12-31T00:00:00Z is out of range: times must be from 1678-01-01 to 2261-12-31 UTC"},
		{"year one but not zero", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
			"at 0001-01-01T00:00:00Z is out of range: times must be from 1678-01-01 to 2261-12-31 UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := memento.CheckTime("at", tt.t)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("CheckTime(%v) = %v, want nil", tt.t, err)
				}
				// Whatever passes survives the store's encoding.
				if got := time.Unix(0, tt.t.UnixNano()); !tt.t.IsZero() && !got.Equal(tt.t) {
					t.Errorf("%v reads back as %v", tt.t, got)
				}
				return
			}
			if code := memento.ErrorCode(err); code != memento.EINVALID {
				t.Fatalf("CheckTime(%v) code = %q, want EINVALID (err %v)", tt.t, code, err)
			}
			if got := memento.ErrorMessage(err); got != tt.msg {
				t.Errorf("message = %q, want %q", got, tt.msg)
			}
		})
	}
}

func TestCheckID(t *testing.T) {
	valid := []string{
		"u", "ana", "ana@example.com", "turn:t1#3", "D1:3", "wiki:The_Avengers_(2012_film)",
		"imdb:tt0111161", "ml:1", "msg_0123456789abcdef", "locomo:conv-26/session 3",
		"José", "用户", "пользователь", "a b", "emoji🎬", strings.Repeat("x", memento.MaxIDLen),
		strings.Repeat("é", memento.MaxIDLen/2),
	}
	for _, id := range valid {
		if err := memento.CheckID("user id", id); err != nil {
			t.Errorf("CheckID(%q) = %v, want nil", id, err)
		}
	}
	tests := []struct {
		name, id, msg string
	}{
		{"empty", "", "user id is required"},
		{"too long", strings.Repeat("x", memento.MaxIDLen+1), "user id must be at most 256 bytes"},
		{"too long in bytes", strings.Repeat("é", memento.MaxIDLen/2+1), "user id must be at most 256 bytes"},
		{"not utf-8", "ana\xff", "user id is not valid UTF-8"},
		{"truncated rune", "\xe7\x94", "user id is not valid UTF-8"},
		{"replacement character", "ann\ufffd", "user id holds U+FFFD at byte 3: it was not valid UTF-8"},
		{"leading space", " ana", `user id " ana" begins or ends with a space`},
		{"trailing newline", "ana\n", `user id "ana\n" begins or ends with a space`},
		{"only spaces", "   ", `user id "   " begins or ends with a space`},
		{"nul", "a\x00b", "user id holds the control character U+0000 at byte 1; ids are letters, digits, punctuation, symbols and spaces"},
		{"unit separator", "a\x1fb", "user id holds the control character U+001F at byte 1; ids are letters, digits, punctuation, symbols and spaces"},
		{"tab inside", "a\tb", "user id holds the control character U+0009 at byte 1; ids are letters, digits, punctuation, symbols and spaces"},
		{"no-break space", "a\u00a0b", "user id holds the space character U+00A0 at byte 1; ids are letters, digits, punctuation, symbols and spaces"},
		{"zero-width joiner", "a\u200db", "user id holds the invisible or unassigned character U+200D at byte 1; ids are letters, digits, punctuation, symbols and spaces"},
		{"right-to-left override", "\u202egnp.exe", "user id holds the invisible or unassigned character U+202E at byte 0; ids are letters, digits, punctuation, symbols and spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := memento.CheckID("user id", tt.id)
			if code := memento.ErrorCode(err); code != memento.EINVALID {
				t.Fatalf("CheckID(%q) code = %q, want EINVALID (err %v)", tt.id, code, err)
			}
			if got := memento.ErrorMessage(err); got != tt.msg {
				t.Errorf("message = %q, want %q", got, tt.msg)
			}
		})
	}
	if err := memento.CheckOptionalID("messages[0].id", ""); err != nil {
		t.Errorf("CheckOptionalID(\"\") = %v, want nil", err)
	}
	if err := memento.CheckOptionalID("messages[0].id", "a\x00"); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("CheckOptionalID(\"a\\x00\") = %v, want EINVALID", err)
	}
}

func TestUserExportCheckFormatTimes(t *testing.T) {
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	ok := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		doc  memento.UserExport
		msg  string
	}{
		{"in range", memento.UserExport{ExportedAt: ok, Threads: []memento.ThreadExport{{Messages: []memento.Message{{At: ok}}}}}, ""},
		{"exportedAt", memento.UserExport{ExportedAt: far}, "exportedAt 9999-12-31T00:00:00Z is out of range"},
		{"message", memento.UserExport{Threads: []memento.ThreadExport{{}, {Messages: []memento.Message{{At: ok}, {At: far}}}}},
			"threads[1].messages[1].at 9999-12-31T00:00:00Z is out of range"},
		{"thread", memento.UserExport{Threads: []memento.ThreadExport{{Thread: memento.Thread{UpdatedAt: far}}}},
			"threads[0].thread.updatedAt 9999-12-31T00:00:00Z is out of range"},
		{"summary", memento.UserExport{Threads: []memento.ThreadExport{{Summaries: []memento.Summary{{CreatedAt: far}}}}},
			"threads[0].summaries[0].createdAt 9999-12-31T00:00:00Z is out of range"},
		{"event", memento.UserExport{Events: []memento.Event{{At: far}}}, "events[0].at 9999-12-31T00:00:00Z is out of range"},
		{"memory validTo", memento.UserExport{Memories: []memento.Memory{{ValidFrom: ok, ValidTo: &far}}},
			"memories[0].validTo 9999-12-31T00:00:00Z is out of range"},
		{"run", memento.UserExport{Runs: []memento.MemoryRun{{FinishedAt: far}}}, "runs[0].finishedAt 9999-12-31T00:00:00Z is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.doc.Format = memento.UserExportFormat
			err := tt.doc.CheckFormat()
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("CheckFormat = %v, want nil", err)
				}
				return
			}
			if memento.ErrorCode(err) != memento.EINVALID || !strings.HasPrefix(memento.ErrorMessage(err), tt.msg) {
				t.Errorf("CheckFormat = %v, want EINVALID starting %q", err, tt.msg)
			}
		})
	}
}

func TestCandidateQueryCheckTimes(t *testing.T) {
	q := memento.CandidateQuery{From: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := q.Check(); memento.ErrorCode(err) != memento.EINVALID || !strings.HasPrefix(memento.ErrorMessage(err), "from 9999-01-01") {
		t.Errorf("Check = %v, want EINVALID naming from", err)
	}
}
