package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// errEmptyReply is what a blank reply fails with: the model said nothing,
// which points at the server rather than at the prompt.
var errEmptyReply = errors.New("the reply is empty")

// thinking matches the reasoning some local models (DeepSeek R1, Qwen 3)
// print before their answer; it may hold braces of its own.
var thinking = regexp.MustCompile(`(?s)<(think|thinking)>.*?</(think|thinking)>`)

// fence matches a Markdown code fence and its content, with or without a
// language tag (```json), closed or not (a reply cut off inside it).
var fence = regexp.MustCompile("(?s)```[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|$)")

// extractObject returns the JSON object of a model's reply. Models that
// only promise JSON wrap it in code fences, put a sentence before or after
// it, or think aloud first; all of that is skipped. The error says what was
// wrong, for the repair request.
func extractObject(reply string) ([]byte, error) {
	s, err := stripThinking(reply)
	if err != nil {
		return nil, err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errEmptyReply
	}
	// A fenced block is what the model calls its answer: an object there
	// wins over one in the prose around it (an example, a template).
	if strings.Contains(s, "```") {
		for _, m := range fence.FindAllStringSubmatch(s, -1) {
			if obj, err := firstObject(m[1]); err == nil {
				return obj, nil
			}
		}
	}
	return firstObject(s)
}

// stripThinking removes a reasoning model's thoughts from its reply: each
// closed <think>…</think> block; everything up to a </think> whose opening
// tag the server's chat template already swallowed (the reply then starts
// inside the thoughts); and an opening tag never closed, with all after
// it, which is thinking cut off before any answer.
func stripThinking(reply string) (string, error) {
	s := reply
	if !strings.Contains(s, "think") {
		return s, nil
	}
	s = thinking.ReplaceAllString(s, "")
	for _, end := range []string{"</think>", "</thinking>"} {
		if i := strings.Index(s, end); i >= 0 {
			s = s[i+len(end):]
		}
	}
	for _, open := range []string{"<think>", "<thinking>"} {
		if i := strings.Index(s, open); i >= 0 {
			s = s[:i]
			if strings.TrimSpace(s) == "" {
				return "", errors.New("the reply is reasoning that never ended (<think> without </think>) and holds no answer")
			}
		}
	}
	return s, nil
}

// firstObject returns the first well-formed JSON object in s.
func firstObject(s string) ([]byte, error) {
	var firstErr error
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		end, ok := matchBrace(s, start)
		if !ok {
			if firstErr == nil {
				firstErr = errors.New("the JSON object is not closed; the reply may have been cut off")
			}
			break
		}
		cand := []byte(s[start : end+1])
		if json.Valid(cand) {
			return cand, nil
		}
		if firstErr == nil {
			var v any
			firstErr = fmt.Errorf("the JSON object is malformed: %v", json.Unmarshal(cand, &v))
		}
		i = start + 1
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, errors.New("the reply holds no JSON object")
}

// matchBrace returns the index of the brace closing the one at start,
// skipping braces inside JSON strings.
func matchBrace(s string, start int) (int, bool) {
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, true
			}
		}
	}
	return 0, false
}
