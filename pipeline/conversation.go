package pipeline

import (
	"context"
	"strings"

	"github.com/memento-ai/memento"
)

// A user's message is read in its conversation: the agent's turn just
// before it and the thread's latest summary go to the extractor with the
// message, so a short answer ("Mostly Netflix, sometimes Hulu.") becomes
// the fact it states together with the question ("Which service do you
// watch on?"). Facts are still only what the user says; the question only
// says what the answer is about.

// summaryReader is the thread summary a store keeps; *sqlite.DB has it.
// A store without it gives the extractor no summary.
type summaryReader interface {
	LatestSummary(ctx context.Context, s memento.Scope, thread string) (*memento.Summary, error)
}

// readConversation reads the messages before s's in its thread once: it
// sets s.Asked to the agent's turn just before the message (when the
// message follows one) and s.Summary to the thread's latest summary of
// earlier messages, and returns the user's previous message for hygiene
// ("" when there is none). A failed read leaves the message to be read
// alone: context must never stop memory.
func (p *Pipeline) readConversation(ctx context.Context, s *State) string {
	m := s.Message
	if m.Thread == "" || m.Seq <= 1 {
		return ""
	}
	previous := ""
	if tr, ok := p.store.(threadReader); ok {
		after := max(0, m.Seq-1-previousLookback)
		msgs, err := tr.Messages(ctx, s.scope(), m.Thread, after, int(m.Seq-1-after))
		if err != nil {
			p.log.DebugContext(ctx, "previous messages not read; the message is read alone", "message", m.ID, "err", err)
			return ""
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Seq >= m.Seq {
				continue
			}
			if msgs[i].Role == memento.RoleUser {
				previous = msgs[i].Text
				break
			}
			if msgs[i].Role == memento.RoleAssistant && msgs[i].Seq == m.Seq-1 {
				s.Asked = strings.TrimSpace(msgs[i].Text)
			}
		}
	}
	if sr, ok := p.store.(summaryReader); ok {
		sum, err := sr.LatestSummary(ctx, s.scope(), m.Thread)
		switch {
		case err != nil:
			p.log.DebugContext(ctx, "thread summary not read; the message is read without it", "message", m.ID, "err", err)
		case sum != nil && sum.ToSeq < m.Seq:
			// A summary of later messages (a message processed late)
			// would put words in the user's mouth.
			s.Summary = strings.TrimSpace(sum.Text)
		}
	}
	return previous
}

// question returns the last question of an agent's turn ("I found three
// comedies. Which service do you watch on?" gives the second sentence),
// or "" when it asks none.
func question(turn string) string {
	turn = strings.TrimSpace(turn)
	end := strings.LastIndexByte(turn, '?')
	if end < 0 {
		return ""
	}
	start := strings.LastIndexAny(turn[:end], ".!?\n")
	return strings.TrimSpace(turn[start+1 : end+1])
}

// asksAboutUser reports whether a question asks about the user ("Which
// service do you watch on?", "Popular hits or hidden gems?") rather than
// offering something ("Want something else?", "Shall I look on
// Netflix?"): only an answer to such a question says more than its own
// words, so only then does a message the sentinel turned down go on to the
// extractor. Most of the agent's turns end in an offer, and the way round
// the sentinel costs a model server two calls.
func asksAboutUser(q string) bool {
	for _, w := range words(q) {
		switch w {
		case "you", "your", "you're", "you've", "you'd", "you'll", "yours", "yourself", "or":
			return true
		}
	}
	return false
}

// asRead is the message as a reviewer must read it: with the question it
// answers before it, so a fact that takes its verb from the question
// ("watches on Netflix" from "Mostly Netflix") is supported.
func asRead(s *State) string {
	q := question(s.Asked)
	if q == "" {
		return s.Message.Text
	}
	return "Agent: " + q + "\nUser: " + s.Message.Text
}
