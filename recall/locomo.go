package recall

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// LoCoMo is one conversation of the LoCoMo long-term conversational memory
// data set (Maharana et al., ACL 2024): two speakers talking over many
// sessions, each with its date, and questions whose evidence is a list of
// turn ids ("D1:3" is the third turn of session 1). It is the data recall
// is measured on.
type LoCoMo struct {
	SpeakerA string          `json:"speakerA"`
	SpeakerB string          `json:"speakerB"`
	Sessions []LoCoMoSession `json:"sessions"`
	QA       []LoCoMoQA      `json:"qa"`
}

// LoCoMoSession is one session of a conversation, in order.
type LoCoMoSession struct {
	N     int          `json:"n"`
	Date  time.Time    `json:"date"`
	Turns []LoCoMoTurn `json:"turns"`
}

// LoCoMoTurn is one turn. Caption describes a photo the speaker shared.
type LoCoMoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption,omitempty"`
}

// LoCoMoQA is a question about the conversation with the turns that
// answer it. Category: 1 multi-hop, 2 temporal, 3 open-domain, 4
// single-hop, 5 adversarial (the answer is not in the conversation).
type LoCoMoQA struct {
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

// locomoDate is how LoCoMo writes a session's time: "1:56 pm on 8 May, 2023".
const locomoDate = "3:04 pm on 2 January, 2006"

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// ReadLoCoMo decodes one conversation in the data set's own JSON format:
// an object with speaker_a, speaker_b, session_N and session_N_date_time
// keys and a qa list (the files of /work/shared/data/locomo). Errors:
// EINVALID.
func ReadLoCoMo(r io.Reader) (*LoCoMo, error) {
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "LoCoMo conversation is not a JSON object: %v", err)
	}
	// Some releases wrap the sessions in a "conversation" object.
	if inner, ok := raw["conversation"]; ok {
		qa := raw["qa"]
		raw = nil
		if err := json.Unmarshal(inner, &raw); err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "LoCoMo conversation: %v", err)
		}
		if qa != nil {
			raw["qa"] = qa
		}
	}
	c := &LoCoMo{}
	_ = json.Unmarshal(raw["speaker_a"], &c.SpeakerA)
	_ = json.Unmarshal(raw["speaker_b"], &c.SpeakerB)
	for key, v := range raw {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		s := LoCoMoSession{N: n}
		if err := json.Unmarshal(v, &s.Turns); err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "LoCoMo %s: %v", key, err)
		}
		var date string
		if err := json.Unmarshal(raw[key+"_date_time"], &date); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "LoCoMo %s has no date_time", key)
		}
		t, err := time.Parse(locomoDate, strings.TrimSpace(date))
		if err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "LoCoMo %s_date_time %q: %v", key, date, err)
		}
		// Turns are a second apart from the session's time on
		// (Messages): the last must be a time the store can hold too.
		if err := memento.CheckTime(key+"_date_time", t); err != nil {
			return nil, err
		} else if err := memento.CheckTime(key+"_date_time plus its turns", t.Add(time.Duration(len(s.Turns))*time.Second)); err != nil {
			return nil, err
		}
		s.Date = t
		c.Sessions = append(c.Sessions, s)
	}
	if len(c.Sessions) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "LoCoMo conversation has no sessions")
	}
	slices.SortFunc(c.Sessions, func(a, b LoCoMoSession) int { return a.N - b.N })
	if qa, ok := raw["qa"]; ok {
		var items []struct {
			Question string          `json:"question"`
			Answer   json.RawMessage `json:"answer"`
			Adv      json.RawMessage `json:"adversarial_answer"`
			Evidence []string        `json:"evidence"`
			Category int             `json:"category"`
		}
		if err := json.Unmarshal(qa, &items); err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "LoCoMo qa: %v", err)
		}
		for _, it := range items {
			ans := it.Answer
			if ans == nil {
				ans = it.Adv
			}
			c.QA = append(c.QA, LoCoMoQA{Question: it.Question, Answer: plainJSON(ans), Evidence: it.Evidence, Category: it.Category})
		}
	}
	return c, nil
}

// plainJSON renders a JSON string as itself and other values as JSON.
func plainJSON(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// Messages turns the conversation into messages to ingest: every turn of
// both speakers, with its dia_id as the message id, in a thread per
// session ("session_1", ...), stamped with the session's time plus one
// second per turn (so the order survives), as user messages (both
// speakers are people telling about themselves) prefixed with the
// speaker's name. A shared photo's caption is kept in the text.
func (c *LoCoMo) Messages() []memento.Message {
	var out []memento.Message
	for _, s := range c.Sessions {
		thread := fmt.Sprintf("session_%d", s.N)
		for i, t := range s.Turns {
			text := strings.TrimSpace(t.Text)
			if t.Caption != "" {
				text += " [shares a photo of " + strings.TrimSpace(t.Caption) + "]"
			}
			if text == "" {
				continue
			}
			out = append(out, memento.Message{
				ID: t.DiaID, Thread: thread, Role: memento.RoleUser,
				Text: t.Speaker + ": " + text, At: s.Date.Add(time.Duration(i) * time.Second),
			})
		}
	}
	return out
}
