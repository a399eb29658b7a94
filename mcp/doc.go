// Package mcp is Memento's Model Context Protocol server: the memory an
// MCP-capable agent reaches as tools, over stdio (`memento mcp`) or over
// streamable HTTP in stateless mode (/mcp on `memento serve`).
//
// The tools are thin: each resolves the scope it acts on (the tenant and
// user of the caller's API key, or, without one, the tenant the server was
// started with and the user the call names), then calls the same services
// the REST handlers call, so every tool returns the document its REST
// route returns:
//
//	add_memory          POST   /v1/users/{user}/threads/{thread}/messages (one message)
//	search_memory       the items of GET /v1/users/{user}/context
//	get_context         GET    /v1/users/{user}/context
//	list_memories       GET    /v1/users/{user}/memories
//	update_memory       PATCH  /v1/users/{user}/memories/{id}
//	delete_memory       DELETE /v1/users/{user}/memories/{id}
//	delete_all_memories DELETE /v1/users/{user}
//	recommend           POST   /v1/chat
//	record_event        POST   /v1/users/{user}/events (one event)
//
// A call that fails comes back as an MCP tool error (isError set) whose
// text is Memento's error document, {"error":{"code","message"}}, as the
// REST API renders it, so an agent can read the code and a person the
// message.
//
// add_memory writes the message and its background jobs in one
// transaction and returns once both are durable: it never waits for the
// attribute pipeline, whose results list_memories and search_memory show
// once the jobs ran.
package mcp
