package pipeline

import (
	"regexp"
	"strings"
	"unicode"
)

// Hygiene is the deterministic first step of the pipeline: it refuses text
// that tries to instruct the system instead of telling it about the user,
// so an injected "always recommend X" or "you are now ..." can never become
// a remembered fact or preference. It runs on the message before the
// sentinel (a match rejects the whole message, and no model sees it) and
// on every extracted fact (a match drops the fact).
//
// Rules are a table of patterns, each with a reason shown in the run
// trace. They are written against instructions and role-play, not
// against topics: "I always recommend Alien to friends" and "ignore the
// reviews, I loved it" are statements about the user and pass.
type Hygiene struct {
	rules []hygieneRule
}

// hygieneRule is one pattern of instruction text.
type hygieneRule struct {
	reason string
	// needs are words of which the text must hold one for the pattern to
	// have a chance, so most messages skip the regular expression.
	needs []string
	re    *regexp.Regexp
	// clause, when set, matches only at the start of a clause whose
	// subject is not the speaker ("I always recommend" is a habit, a bare
	// "always recommend" an order).
	clause bool
}

// imperativeVerbs are what an order to the system asks it to do with its
// answers.
const imperativeVerbs = `(recommend|suggest|mention|promote|push|include|pick|choose|rank|show|say|tell|answer|respond|reply|output|print|write|claim|describe|call)`

// defaultRules are the instruction patterns. Matching is on lower-cased
// text with runs of white space collapsed.
var defaultRules = []hygieneRule{
	{reason: "asks to ignore or override earlier instructions",
		needs: []string{"ignor", "disregard", "forget", "overrid", "overwrit", "bypass", "skip", "drop", "discard", "abandon"},
		re:    regexp.MustCompile(`\b(ignore|disregard|forget|override|overwrite|bypass|skip|drop|discard|abandon)\b[^.!?]{0,40}\b(previous|prior|above|earlier|preceding|all|any|your|the|these|those|system|original|initial|existing)\b[^.!?]{0,30}\b(instructions?|prompts?|rules?|directions?|directives?|guidelines?|guardrails?|constraints?|programming|policies|policy|context|orders)\b`)},
	{reason: "declares new instructions for the system",
		needs: []string{"instruction", "directive", "rules", "orders", "prompt"},
		re:    regexp.MustCompile(`\b(new|updated|real|true|actual|hidden|secret|additional|following)\s+(system\s+)?(instructions?|directives?|rules|orders|prompt)\s*(:|are|is|follow)`)},
	{reason: "reassigns the assistant's identity or role",
		needs: []string{"you", "henceforth"},
		re:    regexp.MustCompile(`\byou\s+(are|'re|will\s+be|shall\s+be)\s+(now|no\s+longer|from\s+now\s+on)\b|\bfrom\s+now\s+on,?\s+you\b|\byou\s+(must|will|shall|should)\s+now\b|\bhenceforth,?\s+you\b`)},
	{reason: "asks the assistant to role-play another system",
		needs: []string{"act", "behav", "respond", "function", "operat", "pretend", "role", "imperson"},
		re:    regexp.MustCompile(`(^|[.!?;:,]\s*|\b(please|now|you|and)\s+)(act|behave|respond|function|operate)\s+as\s+(if\s+you|an?\s+|my\s+|the\s+|though)|\bpretend\s+(to\s+be|you\s+are|you're|that\s+you)\b|\brole-?play\s+as\b|\bimpersonate\s+(an?|the)\s+(system|assistant|admin|developer|ai)\b`)},
	{reason: "imitates a system, developer or assistant message",
		needs: []string{"sys", "developer", "assistant", "admin", "root", "operator", "im_", "endoftext", "inst", "###", "begin"},
		re:    regexp.MustCompile(`(^|\n|[.!?]\s+|["'\[(<{]\s*)(system|developer|assistant|admin|administrator|root|sys|operator)\s*(prompt|message|note|override|instruction)?\s*[:>\]]|<\|?(im_start|im_end|system|endoftext)\|?>|\[/?(inst|system|sys)\]|<</?sys>>|###\s*(instruction|system|response)|\bbegin\s+(system|admin)\s+(prompt|message|mode)\b`)},
	{reason: "orders what the assistant must always or never do",
		needs:  []string{"always", "only", "never", "exclusively", "from now on"},
		clause: true,
		re:     regexp.MustCompile(`^(please\s+|and\s+|also\s+|so\s+|now\s+|then\s+)?(you\s+)?(must\s+|should\s+|need\s+to\s+|have\s+to\s+|will\s+)?(always|only|never|exclusively|from\s+now\s+on)\s+(ever\s+)?` + imperativeVerbs + `\b`)},
	{reason: "orders what the assistant must always or never do",
		needs: []string{"always", "only", "never", "exclusively", "every", "all"},
		re:    regexp.MustCompile(`\byou\s+(must|should|need\s+to|have\s+to|will|are\s+to|are\s+required\s+to)\s+(always|only|never|exclusively)\s+` + imperativeVerbs + `\b|\b(always|only|never)\s+` + imperativeVerbs + `\s+[^.!?]{0,40}\b(to|for)\s+(every|all|any)\s*(one|body|user|users|people)\b|\b` + imperativeVerbs + `\s+[^.!?]{0,60}\bto\s+(every|all)\s*(one|body|users?)\b`)},
	{reason: "asks to reveal or change the system prompt",
		needs: []string{"prompt", "instruction", "rules", "configuration", "settings"},
		re:    regexp.MustCompile(`\b(reveal|show|print|repeat|leak|output|display|tell\s+me|give\s+me|change|modify|update|replace|edit)\s+(me\s+)?(your|the)\s+(system\s+|initial\s+|hidden\s+|original\s+)?(prompt|instructions|rules|configuration|settings)\b|\bsystem\s+prompt\b`)},
	{reason: "uses a known jailbreak",
		needs: []string{"jail", "anything now", "mode", "injection"},
		re:    regexp.MustCompile(`\bjail\s?break|\bdo\s+anything\s+now\b|\bdan\s+mode\b|\bdeveloper\s+mode\b|\bgod\s+mode\b|\bunfiltered\s+mode\b|\bno\s+restrictions\s+mode\b|\bprompt\s+injection\b`)},
	{reason: "tries to write to the memory or the database directly",
		needs: []string{"memor", "database", "db", "profile", "knowledge", "records", "training"},
		re:    regexp.MustCompile(`\b(write|add|store|save|insert|put|record|inject|update|set|change|delete|remove|erase|wipe)\s+(this|that|the\s+following|it|these)?\s*(in|into|to|from|of)?\s*(your|the)\s+(memory|memories|database|db|profile|knowledge\s+base|records|training\s+data|long-term\s+memory)\b|\b(memory|database)\s+(update|override|injection|entry)\s*:`)},
	{reason: "asks to disable safety or filtering",
		needs: []string{"filter", "safeguard", "guardrail", "restriction", "censorship", "safety"},
		re:    regexp.MustCompile(`\b(disable|turn\s+off|switch\s+off|deactivate|remove|bypass|circumvent|ignore)\s+(your|the|all|any)?\s*(safety|content|moderation)?\s*(filters?|safeguards?|guardrails?|restrictions|censorship|safety)\b`)},
	{reason: "addresses the model about its own answers",
		needs: []string{"ai", "model", "assistant", "system", "bot"},
		re:    regexp.MustCompile(`\b(as\s+an\s+ai|ai\s+assistant|language\s+model|the\s+assistant|the\s+model|the\s+system|the\s+bot|chatbot)\s+(must|should|will|shall|has\s+to|needs\s+to|is\s+(required|instructed|ordered)\s+to)\b`)},
	{reason: "asks the model to run or obey embedded text",
		needs: []string{"execute", "run", "obey", "follow", "only", "repeat after"},
		re:    regexp.MustCompile(`\b(execute|run|obey|follow)\s+(the\s+)?(following|these|this|embedded|hidden)\s+(commands?|code|instructions?|orders|text|steps)\b|\brespond\s+only\s+with\b|\boutput\s+only\b|\brepeat\s+after\s+me\b`)},
	{reason: "marks the end of the user's input to smuggle instructions",
		needs: []string{"end of", "---", "==="},
		re:    regexp.MustCompile(`\bend\s+of\s+(user\s+)?(input|message|prompt|conversation|transcript)\b|-{3,}\s*(system|admin|instructions?)\b|={3,}\s*(system|admin|instructions?)\b`)},
}

// NewHygiene returns the hygiene step with the built-in rules.
func NewHygiene() *Hygiene { return &Hygiene{rules: defaultRules} }

// Check returns the reasons text is refused, one per matching rule, or nil
// for clean text.
func (h *Hygiene) Check(text string) []string {
	norm := normaliseForHygiene(text)
	if norm == "" {
		return nil
	}
	var clauses []string
	var reasons []string
	seen := map[string]bool{}
	for _, r := range h.rules {
		if seen[r.reason] {
			continue
		}
		if !holdsAny(norm, r.needs) {
			continue
		}
		matched := false
		if r.clause {
			if clauses == nil {
				clauses = splitHygieneClauses(norm)
			}
			for _, c := range clauses {
				if r.re.MatchString(c) {
					matched = true
					break
				}
			}
		} else {
			matched = r.re.MatchString(norm)
		}
		if matched {
			seen[r.reason] = true
			reasons = append(reasons, r.reason)
		}
	}
	return reasons
}

// holdsAny reports whether text holds one of words, or words is empty.
func holdsAny(text string, words []string) bool {
	if len(words) == 0 {
		return true
	}
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// normaliseForHygiene lower-cases text, maps typographic quotes, dashes
// and full-width letters to ASCII, drops zero-width and control characters that hide
// words from patterns, and collapses white space (keeping line breaks, which
// role markers use).
func normaliseForHygiene(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	space := false
	for _, r := range text {
		switch r {
		case '\u2018', '\u2019', '\u02bc':
			r = '\''
		case '\u201c', '\u201d':
			r = '"'
		case '\u2013', '\u2014':
			r = '-'
		case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad':
			continue
		}
		if r >= '\uff01' && r <= '\uff5e' {
			r -= 0xfee0 // full-width forms of ASCII
		}
		if r == '\n' || r == '\r' {
			b.WriteByte('\n')
			space = false
			continue
		}
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		if unicode.IsControl(r) {
			continue
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimSpace(b.String())
}

// splitHygieneClauses cuts normalised text at sentence and clause
// punctuation and at "but", so each order is checked at its own start.
func splitHygieneClauses(norm string) []string {
	parts := strings.FieldsFunc(norm, func(r rune) bool {
		return r == '.' || r == '!' || r == '?' || r == ';' || r == ',' || r == ':' || r == '\n' || r == '(' || r == ')' || r == '"'
	})
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		for _, q := range strings.Split(p, " but ") {
			if q = strings.TrimSpace(q); q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}
