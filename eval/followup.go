package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// IARDDialogue is one annotated recommendation dialogue in the IARD format
// (a subset of ReDial annotated by UserSimCRS).
type IARDDialogue struct {
	ID           string          `json:"conversation_id"`
	Conversation []IARDUtterance `json:"conversation"`
}

// IARDUtterance is one turn of a dialogue with its dialogue acts.
type IARDUtterance struct {
	Participant  string    `json:"participant"`
	Utterance    string    `json:"utterance"`
	DialogueActs []IARDAct `json:"dialogue_acts"`
}

// IARDAct is an intent (REJ rejects, SEE already seen, CRI-A adds a
// criterion, ...) with slot values such as ["GENRE", "thrillers", null, null].
type IARDAct struct {
	Intent     string  `json:"intent"`
	SlotValues [][]any `json:"slot_values"`
}

// ReadIARD reads a JSON array of dialogues.
func ReadIARD(r io.Reader) ([]IARDDialogue, error) {
	var ds []IARDDialogue
	if err := json.NewDecoder(r).Decode(&ds); err != nil {
		return nil, memento.Errorf(memento.EINVALID, "IARD data must be a JSON array of dialogues: %v", err)
	}
	for i, d := range ds {
		if d.ID == "" {
			return nil, memento.Errorf(memento.EINVALID, "IARD dialogue %d has no conversation_id", i)
		}
	}
	return ds, nil
}

// has reports whether the utterance carries one of the intents.
func (u IARDUtterance) has(intents ...string) bool {
	for _, a := range u.DialogueActs {
		if slices.Contains(intents, a.Intent) {
			return true
		}
	}
	return false
}

// slots returns the values of one slot type in acts of the given intent.
func (u IARDUtterance) slots(intent, slot string) []string {
	var out []string
	for _, a := range u.DialogueActs {
		if a.Intent != intent {
			continue
		}
		for _, sv := range a.SlotValues {
			if len(sv) >= 2 && fmt.Sprint(sv[0]) == slot {
				if v, ok := sv[1].(string); ok && v != "" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// Turner answers a user's message; *agent.Agent is one.
type Turner interface {
	Turn(ctx context.Context, tenant string, req agent.Request) (*agent.Response, error)
}

// FollowupResult is the outcome of `memento eval followup`.
//
// Rejection compliance: for each user turn annotated REJ or SEE that comes
// after the agent showed titles, the next answer with titles (that turn's or
// a later one's) must show none of the titles of the agent's answer before
// the rejection. Turns with no earlier or no later recommendation cannot be
// judged and are not counted.
//
// Criteria capture: after each user turn annotated CRI-A with a GENRE slot
// whose value names a catalog genre, the active context the agent returns
// must hold that genre, among its genres or, for a criterion that turns a
// genre down ("maybe something not animated"), among its excluded genres.
type FollowupResult struct {
	Dialogues        int               `json:"dialogues"`
	RejectTurns      int               `json:"rejectTurns"`
	RejectCompliance float64           `json:"rejectCompliance"`
	CriteriaTurns    int               `json:"criteriaTurns"`
	CriteriaCapture  float64           `json:"criteriaCapture"`
	Failures         []FollowupFailure `json:"failures,omitempty"`
}

// FollowupFailure is one turn that failed a check.
type FollowupFailure struct {
	Dialogue  string   `json:"dialogue"`
	Turn      int      `json:"turn"`
	Check     string   `json:"check"` // "reject" or "criteria"
	Utterance string   `json:"utterance"`
	Want      []string `json:"want"`
	Got       []string `json:"got"`
}

// Followup replays the user turns of each dialogue through t, each dialogue
// in its own thread of its own user, and scores the checks above. genres
// maps a slot value such as "thrillers" to catalog genres; values it does
// not map are not judged.
func Followup(ctx context.Context, t Turner, tenant string, dialogues []IARDDialogue, genres func(string) []string) (*FollowupResult, error) {
	res := &FollowupResult{Dialogues: len(dialogues)}
	var rejectOK, criteriaOK int
	for _, d := range dialogues {
		user, thread := "iard-"+d.ID, "iard-"+d.ID
		var responses []*agent.Response
		var utterances []IARDUtterance
		for _, u := range d.Conversation {
			if u.Participant != "USER" || strings.TrimSpace(u.Utterance) == "" {
				continue
			}
			resp, err := t.Turn(ctx, tenant, agent.Request{User: user, Thread: thread, Message: u.Utterance})
			if err != nil {
				return nil, fmt.Errorf("dialogue %s: %w", d.ID, err)
			}
			responses = append(responses, resp)
			utterances = append(utterances, u)
		}
		for i, u := range utterances {
			if u.has("REJ", "SEE") {
				before := lastTitles(responses[:i])
				after := nextTitles(responses[i:])
				if len(before) > 0 && after != nil {
					res.RejectTurns++
					if repeated := intersect(before, after); len(repeated) == 0 {
						rejectOK++
					} else {
						res.Failures = append(res.Failures, FollowupFailure{Dialogue: d.ID, Turn: i + 1, Check: "reject", Utterance: u.Utterance, Want: before, Got: repeated})
					}
				}
			}
			for _, v := range u.slots("CRI-A", "GENRE") {
				want := genres(v)
				if len(want) == 0 {
					continue
				}
				res.CriteriaTurns++
				ac := responses[i].ActiveContext
				got := append(slices.Clone(ac.Genres), ac.ExcludedGenres...)
				if containsAny(got, want) {
					criteriaOK++
				} else {
					res.Failures = append(res.Failures, FollowupFailure{Dialogue: d.ID, Turn: i + 1, Check: "criteria", Utterance: u.Utterance, Want: want, Got: got})
				}
			}
		}
	}
	res.RejectCompliance = ratio(rejectOK, res.RejectTurns)
	res.CriteriaCapture = ratio(criteriaOK, res.CriteriaTurns)
	return res, nil
}

// lastTitles returns the ids of the newest answer that showed titles.
func lastTitles(rs []*agent.Response) []string {
	for i := len(rs) - 1; i >= 0; i-- {
		if len(rs[i].Titles) > 0 {
			return ids(rs[i].Titles)
		}
	}
	return nil
}

// nextTitles returns the ids of the first answer that showed titles, or nil.
func nextTitles(rs []*agent.Response) []string {
	for _, r := range rs {
		if len(r.Titles) > 0 {
			return ids(r.Titles)
		}
	}
	return nil
}

func ids(ts []agent.TitleResult) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range b {
		if slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

func containsAny(have, want []string) bool {
	for _, w := range want {
		if slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return true
		}
	}
	return false
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}
