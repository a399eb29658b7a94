// Package memento is memory for conversational agents.
//
// The root package holds the domain types every other package speaks in
// (tenants, users, threads, messages, events, catalog titles, the active
// context of a thread, memories) and the small service interfaces that
// connect them. It depends on nothing but the standard library.
//
// Implementations live in subpackages named after what they depend on or
// provide: sqlite/ stores everything in one embedded database, catalog/
// indexes and searches titles, llm/offline/ and llm/openai/ implement the
// language-model tasks, agent/ runs a recommendation turn, http/ serves the
// REST API and cmd/memento wires them together. Imports always point towards
// this package; stores and transports never import each other.
package memento
