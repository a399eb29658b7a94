package pipeline

import (
	"context"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// Hygiene is the deterministic first step of the pipeline: it refuses text
// that tries to instruct the system instead of telling it about the user,
// so an injected "always recommend X" or "you are now ..." can never become
// a remembered fact or preference. It runs on the message before the
// sentinel (a match rejects the whole message, and no model sees it) and
// on every extracted fact (a match drops the fact). The rules live in
// package hygiene, which every other path into memory and into a prompt
// uses too.
type Hygiene = hygiene.Gate

// NewHygiene returns the hygiene step with the built-in rules: the gate
// of package hygiene's functions, which the learners of preferences and
// actions check the same messages with, so that each text's verdict is
// found once.
func NewHygiene() *Hygiene { return hygiene.Standard() }

// previousLookback is how many messages before a user message the hygiene
// step reads to find the user's previous one (an assistant reply or two
// usually sits between them).
const previousLookback = 4

// threadReader is what the hygiene step reads to check a message joined
// with the user's previous one; *sqlite.DB has it. A store without it
// gets each message checked alone.
type threadReader interface {
	Messages(ctx context.Context, s memento.Scope, thread string, afterSeq int64, limit int) ([]memento.Message, error)
}

// hygiene refuses instruction text: a user message alone or joined with
// the user's previous message in the thread (an instruction split across
// two), and an assistant message that plants one for later turns. Other
// messages that pass are only indexed for recall; a refused message of
// any role is recorded as rejected, which keeps it out of recall.
func (p *Pipeline) hygiene(ctx context.Context, s *State) (string, string, error) {
	if s.Message.Role != memento.RoleUser {
		if reasons := p.opts.Hygiene.CheckRole(s.Message.Role, s.Message.Text); len(reasons) > 0 {
			return p.reject(s, reasons)
		}
		s.Outcome, s.Reason, s.Next = memento.RunSkipped, "not a user message: indexed for recall only", NodeStore
		return "skipped", "role " + string(s.Message.Role), nil
	}
	reasons := p.opts.Hygiene.CheckFollowing(p.readConversation(ctx, s), s.Message.Text)
	if len(reasons) > 0 {
		return p.reject(s, reasons)
	}
	// The turn the message answers is read by the model, so it passes the
	// same rules: an assistant turn that plants an instruction is not
	// context.
	if s.Asked != "" && len(p.opts.Hygiene.CheckRole(memento.RoleAssistant, s.Asked)) > 0 {
		s.Asked = ""
	}
	s.Next = NodeSentinel
	if q := question(s.Asked); q != "" {
		return "ok", "answers: " + q, nil
	}
	return "ok", "", nil
}

// reject ends the run as rejected, with hygiene's reasons in the trace.
func (p *Pipeline) reject(s *State, reasons []string) (string, string, error) {
	s.Rejected = append(s.Rejected, reasons...)
	s.Outcome, s.Next = memento.RunRejected, NodeStore
	s.Reason = "hygiene: the message instructs the system (" + strings.Join(reasons, "; ") + ")"
	return "rejected", strings.Join(reasons, "; "), nil
}
