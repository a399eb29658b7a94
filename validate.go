package memento

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The years a stored time may fall in, in UTC. Stores keep times as int64
// nanoseconds since the Unix epoch, which reach from September 1677 to
// April 2262; a time outside that span would wrap and read back as another
// (9999-12-31 as 1816-03-30). Whole years inside it make a range that is
// easy to state: from 1678-01-01T00:00:00Z to 2261-12-31T23:59:59.999999999Z.
const (
	MinTimeYear = 1678
	MaxTimeYear = 2261
)

// CheckTime returns an EINVALID error naming field when t is outside the
// years MinTimeYear to MaxTimeYear (UTC). The zero time passes: it means
// "not given" wherever a time is optional, and callers that require a time
// check IsZero themselves.
func CheckTime(field string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	if y := t.UTC().Year(); y < MinTimeYear || y > MaxTimeYear {
		return Errorf(EINVALID, "%s %s is out of range: times must be from %d-01-01 to %d-12-31 UTC",
			field, t.Format(time.RFC3339), MinTimeYear, MaxTimeYear)
	}
	return nil
}

// MaxIDLen is the longest id a client may give a user, tenant, thread,
// message, event, memory or title, in bytes, so that a runaway client
// cannot fill indexes with megabyte keys.
const MaxIDLen = 256

// CheckID returns an EINVALID error naming field unless id is an id a
// client may give: 1 to MaxIDLen bytes of valid UTF-8, made of letters,
// marks, numbers, punctuation, symbols and the ASCII space (Go's
// unicode.IsPrint), and neither beginning nor ending with a space. That
// keeps every id in use (e-mail addresses, "turn:t1#3", "D1:3",
// "wiki:The_Avengers_(2012_film)", ids in any script) and refuses what
// would be stored but never found again or shown wrongly: bytes that are
// not UTF-8, control characters (the stores separate tenant and user with
// one), invisible format characters such as zero-width joiners and
// direction overrides, other kinds of space and line breaks, and U+FFFD,
// which JSON decoding puts in place of bytes that are not UTF-8.
func CheckID(field, id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "%s is required", field)
	case len(id) > MaxIDLen:
		return Errorf(EINVALID, "%s must be at most %d bytes", field, MaxIDLen)
	case !utf8.ValidString(id):
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	case id != strings.TrimSpace(id):
		return Errorf(EINVALID, "%s %q begins or ends with a space", field, id)
	}
	for i, r := range id {
		if r == utf8.RuneError {
			// encoding/json decodes bytes that are not UTF-8 to
			// U+FFFD; an id holding it was not UTF-8 where it came from.
			return Errorf(EINVALID, "%s holds U+FFFD at byte %d: it was not valid UTF-8", field, i)
		}
		if !unicode.IsPrint(r) {
			return Errorf(EINVALID, "%s holds %s at byte %d; ids are letters, digits, punctuation, symbols and spaces", field, describeRune(r), i)
		}
	}
	return nil
}

// describeRune names a character that ids may not hold, in a form that
// shows even when the character itself would not.
func describeRune(r rune) string {
	switch {
	case unicode.IsControl(r):
		return fmt.Sprintf("the control character U+%04X", r)
	case unicode.IsSpace(r):
		return fmt.Sprintf("the space character U+%04X", r)
	}
	return fmt.Sprintf("the invisible or unassigned character U+%04X", r)
}

// CheckOptionalID is CheckID for an id the client may leave out, such as
// a message's id (the store then makes one up).
func CheckOptionalID(field, id string) error {
	if id == "" {
		return nil
	}
	return CheckID(field, id)
}

// checkTimes reports the first time in the document outside the range a
// store can hold, named by its path in the document.
func (e *UserExport) checkTimes() error {
	check := CheckTime
	if err := check("exportedAt", e.ExportedAt); err != nil {
		return err
	}
	for i, t := range e.Threads {
		p := fmt.Sprintf("threads[%d]", i)
		if err := check(p+".thread.createdAt", t.Thread.CreatedAt); err != nil {
			return err
		}
		if err := check(p+".thread.updatedAt", t.Thread.UpdatedAt); err != nil {
			return err
		}
		for j, m := range t.Messages {
			if err := check(fmt.Sprintf("%s.messages[%d].at", p, j), m.At); err != nil {
				return err
			}
			if err := check(fmt.Sprintf("%s.messages[%d].createdAt", p, j), m.CreatedAt); err != nil {
				return err
			}
		}
		for j, s := range t.Summaries {
			if err := check(fmt.Sprintf("%s.summaries[%d].createdAt", p, j), s.CreatedAt); err != nil {
				return err
			}
		}
	}
	for i, ev := range e.Events {
		if err := check(fmt.Sprintf("events[%d].at", i), ev.At); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("events[%d].createdAt", i), ev.CreatedAt); err != nil {
			return err
		}
	}
	for i, m := range e.Memories {
		if err := m.CheckTimes(fmt.Sprintf("memories[%d]", i)); err != nil {
			return err
		}
	}
	for i, r := range e.Runs {
		if err := check(fmt.Sprintf("runs[%d].startedAt", i), r.StartedAt); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("runs[%d].finishedAt", i), r.FinishedAt); err != nil {
			return err
		}
	}
	return nil
}

// CheckTimes reports the first of the memory's times outside the range a
// store can hold (CheckTime), its field named under prefix, such as
// "memories[3]".
func (m Memory) CheckTimes(prefix string) error {
	if err := CheckTime(prefix+".validFrom", m.ValidFrom); err != nil {
		return err
	}
	if m.ValidTo != nil {
		if err := CheckTime(prefix+".validTo", *m.ValidTo); err != nil {
			return err
		}
	}
	if err := CheckTime(prefix+".createdAt", m.CreatedAt); err != nil {
		return err
	}
	return CheckTime(prefix+".updatedAt", m.UpdatedAt)
}
