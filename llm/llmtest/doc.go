// Package llmtest is an in-process, OpenAI-compatible model server for tests,
// so that code built on llm/openai is tested without a network or a real
// model.
//
// A test starts a Server with New, points the provider at its URL and
// scripts what the server answers: a queue of Responses per endpoint
// ("/chat/completions", "/embeddings") and, for chat completions, a queue per
// task (the name of the JSON schema the request asks for, such as
// "extract_facts"). A request takes the first response of its task's queue,
// else the task's Default, else of its endpoint's queue; with none the
// server answers 400 with a message saying so, which fails the call loudly
// instead of hanging. Answers returns a usable answer to every task, and
// AnswerAll makes them the defaults: a whole model server in one line, one
// of whose answers a test can break (a required field deleted). Every
// request is recorded, with its decoded body, for assertions.
//
// Data flows one way: the test enqueues responses, the client under test
// sends requests, the server pops and records. Responses can be delayed
// (to provoke timeouts or to overlap calls) or held until a channel closes
// (WithHold; OnRequest reports each arrival), carry any status and headers
// (429 with Retry-After, 500, a 400 rejecting response_format), or a raw body
// (malformed JSON, prose around JSON). AutoEmbed answers embedding requests
// nobody scripted with deterministic vectors.
//
// InventedFact is a ready-made scripted run of the attribute pipeline in
// which the extractor invents a fact and the reviewer catches it, for the
// pipeline's tests.
package llmtest
