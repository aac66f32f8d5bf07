package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/operator"
)

// ErrorBody is the one error envelope: {"error":{"code":…,"message":…}}.
// Field names the request field at fault when there is one.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of the envelope.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorBody{ErrorDetail{Code: code, Message: msg}})
}

func writeFieldError(w http.ResponseWriter, status int, code, field, msg string) {
	writeJSON(w, status, ErrorBody{ErrorDetail{Code: code, Message: msg, Field: field}})
}

// fail maps an error from the operator service or the store to a response
// with the code operator.ErrorCode gives it: invalid_input and
// card_ambiguous 400,
// card_not_found and not_found 404, invalid_transition and conflict 409,
// store_unavailable 503, anything else 500 (internal when it has no code).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := operator.ErrorCode(err)
	switch code {
	case operator.CodeInvalidInput:
		var in *board.InputError
		errors.As(err, &in)
		writeFieldError(w, http.StatusBadRequest, code, in.Field, err.Error())
	case operator.CodeCardAmbiguous:
		writeError(w, http.StatusBadRequest, code, err.Error())
	case operator.CodeCardNotFound, operator.CodeNotFound:
		writeError(w, http.StatusNotFound, code, err.Error())
	case operator.CodeInvalidTransition:
		writeError(w, http.StatusConflict, code, err.Error())
	case operator.CodeConflict:
		writeError(w, http.StatusConflict, code, err.Error()+"; read the card again and retry")
	case operator.CodeStoreUnavailable:
		s.opts.Log.Error("store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusServiceUnavailable, code, err.Error())
	default:
		if code == "" {
			code = "internal"
		}
		s.opts.Log.Error("http request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, code, err.Error())
	}
}

// decode reads a JSON body into v strictly: a body over the limit is 413
// body_too_large, invalid UTF-8 400 invalid_utf8, an unknown field 400
// unknown_field naming it, a wrong type 400 invalid_json naming the field,
// trailing data 400. An empty body decodes as {} when emptyOK. It writes the
// error response and returns false on failure.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, emptyOK bool) bool {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body is over %d bytes", mb.Limit))
			return false
		}
		writeError(w, http.StatusBadRequest, "bad_body", "reading the request body: "+err.Error())
		return false
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if emptyOK {
			return true
		}
		writeError(w, http.StatusBadRequest, "empty_body", "the request needs a JSON object body")
		return false
	}
	if !utf8.Valid(data) {
		writeError(w, http.StatusBadRequest, "invalid_utf8", "the request body is not valid UTF-8")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		msg := err.Error()
		switch {
		case strings.HasPrefix(msg, "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			writeFieldError(w, http.StatusBadRequest, "unknown_field", f, fmt.Sprintf("unknown field %q; see /api/v1/openapi.json for the fields this endpoint takes", f))
		case errors.As(err, &te):
			writeFieldError(w, http.StatusBadRequest, "invalid_json", te.Field, fmt.Sprintf("%s: expected %s, got JSON %s", te.Field, te.Type, te.Value))
		case errors.As(err, &se):
			writeError(w, http.StatusBadRequest, "invalid_json", fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, err))
		default:
			writeError(w, http.StatusBadRequest, "invalid_json", "malformed JSON: "+msg)
		}
		return false
	}
	// Not dec.More(): it reports false for a stray "}" or "]" after the value.
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		writeError(w, http.StatusBadRequest, "invalid_json", "the body has data after its JSON value; send one object")
		return false
	}
	return true
}
