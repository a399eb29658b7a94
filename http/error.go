package http

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
)

// StatusFor maps an application error code to its HTTP status. It is the
// only place that knows the mapping.
func StatusFor(code string) int {
	switch code {
	case memento.EINVALID:
		return http.StatusBadRequest
	case memento.ENOTFOUND:
		return http.StatusNotFound
	case memento.ECONFLICT:
		return http.StatusConflict
	case memento.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case memento.EFORBIDDEN:
		return http.StatusForbidden
	case memento.EUNSUPPORTED:
		return http.StatusUnsupportedMediaType
	case memento.EUPSTREAM:
		return http.StatusBadGateway
	case memento.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case memento.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case memento.ENOTIMPLEMENTED:
		return http.StatusNotImplemented
	case memento.ERATELIMITED:
		return http.StatusTooManyRequests
	default:
		return http.StatusInternalServerError
	}
}

// codeFor is the inverse of StatusFor for errors huma raises itself.
func codeFor(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return memento.EINVALID
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return memento.ENOTFOUND
	case http.StatusConflict, http.StatusPreconditionFailed:
		return memento.ECONFLICT
	case http.StatusUnauthorized:
		return memento.EUNAUTHORIZED
	case http.StatusForbidden:
		return memento.EFORBIDDEN
	case http.StatusUnsupportedMediaType:
		return memento.EUNSUPPORTED
	case http.StatusBadGateway:
		return memento.EUPSTREAM
	case http.StatusRequestEntityTooLarge:
		return memento.ETOOLARGE
	case http.StatusServiceUnavailable:
		return memento.EUNAVAILABLE
	case http.StatusNotImplemented:
		return memento.ENOTIMPLEMENTED
	case http.StatusTooManyRequests:
		return memento.ERATELIMITED
	default:
		if status < 500 {
			return memento.EINVALID
		}
		return memento.EINTERNAL
	}
}

// ErrorBody is the one JSON shape of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the code and the user-facing message of an error.
type ErrorDetail struct {
	Code    string `json:"code" doc:"Application error code" example:"EINVALID"`
	Message string `json:"message" doc:"What went wrong, for a person to read"`
}

// apiError is an ErrorBody with its status, as huma wants errors to be.
type apiError struct {
	status int
	ErrorBody
}

func (e *apiError) Error() string  { return e.ErrorBody.Error.Message }
func (e *apiError) GetStatus() int { return e.status }

var installErrorsOnce sync.Once

// installErrors makes huma render its own errors (validation, unknown
// parameters, oversized bodies) in Memento's error shape. huma keeps this
// hook in a package variable, so it is set once per process.
func installErrors() {
	installErrorsOnce.Do(func() {
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			if status == http.StatusUnprocessableEntity {
				status = http.StatusBadRequest
			}
			return &apiError{status: status, ErrorBody: ErrorBody{ErrorDetail{Code: codeFor(status), Message: validationMessage(msg, errs)}}}
		}
	})
}

// validationMessage turns huma's error details into one sentence, such as
// `query parameter "colour" is not known`.
func validationMessage(msg string, errs []error) string {
	var parts []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d *huma.ErrorDetail
		if errors.As(err, &d) {
			loc := d.Location
			name := loc[strings.LastIndex(loc, ".")+1:]
			switch {
			case d.Message == "unknown query parameter":
				parts = append(parts, fmt.Sprintf("query parameter %q is not known", name))
			case strings.HasPrefix(loc, "body"):
				if d.Value != nil {
					parts = append(parts, fmt.Sprintf("%s: %s, got %v", loc, d.Message, d.Value))
				} else {
					parts = append(parts, fmt.Sprintf("%s: %s", loc, d.Message))
				}
			default:
				if d.Value != nil {
					parts = append(parts, fmt.Sprintf("%s: %s, got %q", name, d.Message, fmt.Sprint(d.Value)))
				} else {
					parts = append(parts, fmt.Sprintf("%s: %s", name, d.Message))
				}
			}
			continue
		}
		parts = append(parts, err.Error())
	}
	if len(parts) == 0 {
		if msg == "" {
			return "Request failed."
		}
		return msg
	}
	if strings.Contains(strings.ToLower(msg), "too large") {
		return msg + ": " + strings.Join(parts, "; ")
	}
	return strings.Join(parts, "; ")
}

// Error converts an error returned by a handler into the error huma
// renders, logging internal errors with their detail.
func Error(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	var he huma.StatusError
	if errors.As(err, &he) {
		return err
	}
	code := memento.ErrorCode(err)
	if code == memento.EINTERNAL {
		log.ErrorContext(ctx, "request failed", "err", err)
	}
	return &apiError{status: StatusFor(code), ErrorBody: ErrorBody{ErrorDetail{Code: code, Message: memento.ErrorMessage(err)}}}
}

// writeError renders an error on a plain net/http handler, for routes that
// huma does not serve.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var ae *apiError
	if !errors.As(Error(r.Context(), log, err), &ae) {
		ae = &apiError{status: http.StatusInternalServerError, ErrorBody: ErrorBody{ErrorDetail{Code: memento.EINTERNAL, Message: "Internal error."}}}
	}
	writeJSON(w, ae.status, ae.ErrorBody)
}
