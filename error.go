package memento

import (
	"errors"
	"fmt"
)

// Application error codes. Every error a service returns to a user carries
// one of them; transports map them to their own status codes in one place.
const (
	ECONFLICT       = "ECONFLICT"       // the request conflicts with the stored state (stale version, duplicate)
	EINTERNAL       = "EINTERNAL"       // a failure the user cannot fix; details go to the log
	EINVALID        = "EINVALID"        // the request is malformed or a value is out of range
	ENOTFOUND       = "ENOTFOUND"       // the named thing does not exist
	EUNAUTHORIZED   = "EUNAUTHORIZED"   // the caller is not authenticated
	EFORBIDDEN      = "EFORBIDDEN"      // the caller is authenticated but may not do this
	EUNSUPPORTED    = "EUNSUPPORTED"    // the request's media type is not one the endpoint accepts
	EUPSTREAM       = "EUPSTREAM"       // a dependency (the model server) answered, but unusably, and nothing could stand in
	ETOOLARGE       = "ETOOLARGE"       // the request body or a list in it is over its limit
	EUNAVAILABLE    = "EUNAVAILABLE"    // a dependency (model server, object store) cannot be reached
	ENOTIMPLEMENTED = "ENOTIMPLEMENTED" // the configured backend does not support the operation
	ERATELIMITED    = "ERATELIMITED"    // the caller's key sent more requests than its rate limit allows; retry later
)

// Error is the one application error type. Its Message is safe to show a
// user; the wrapped Err, if any, is internal detail for the log.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("memento error: code=%s message=%s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("memento error: code=%s message=%s", e.Code, e.Message)
}

// Unwrap returns the internal cause, so errors.Is sees through an Error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error with the given code and a formatted, user-facing
// message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WrapError returns an Error with the given code and message that keeps err
// as its internal cause.
func WrapError(code string, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// ErrorCode returns the code of the first Error in err's chain, EINTERNAL
// for any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of the first Error in err's
// chain. Any other error yields a generic message, so internal detail never
// reaches a user.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
