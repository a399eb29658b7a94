// Package http serves Memento's REST API, its OpenAPI document, metrics and
// web UI over the standard library's mux.
//
// Operations are registered with huma, which validates parameters and
// generates the OpenAPI document at /openapi.json. Handlers return an error;
// one adapter (Error) turns any error into the one JSON error shape,
// {"error":{"code":"EINVALID","message":"..."}}, with the HTTP status from
// the single mapping function StatusFor. Internal detail is logged, never
// shown.
//
// Before any route, every request passes the guard (guard.go): Host must
// name this server (DNS rebinding), a foreign Origin or a cross-site write
// is refused, bodies must be application/json and at most MaxBodyBytes,
// chunked or not. Open adds the timeouts of http.Server and a cap on open
// connections (guard_listener.go).
//
// The server depends only on the root package's interfaces, handed to it as
// fields of Server; cmd/memento composes it with real implementations.
package http
