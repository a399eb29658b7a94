// Package fallback answers each language-model task with a primary model
// (llm/openai) and, when the primary's answer is unusable, with a stand-in
// (the offline model of llm/offline), so a model server whose answers miss
// a required field still gets a person an answer instead of an error.
//
// "Unusable" is the code memento.EUPSTREAM: the server answered, even after
// the primary's one repair request, with output that fails its task's
// schema or rules, or refused the request itself. A server that cannot be
// reached, times out or rate limits (memento.EUNAVAILABLE) is not replaced:
// that passes, and a job retried later gets the real model's answer rather
// than a weaker one for good. Embeddings have no stand-in either, since
// vectors of different embedders are never compared.
//
// Every stand-in answer is logged, counted per task
// (memento_llm_fallbacks_total) and noted with memento.AddNote, so the
// caller that collects notes (the agent's turn, the pipeline's run trace)
// tells the person or the trace what happened.
package fallback
