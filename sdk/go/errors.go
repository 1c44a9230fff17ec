package postalmail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// FieldError names one refused field of a 400 (Path is a dot-path).
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// APIError is a refusal of the API: every error body has this shape (402 and 409 add fields,
// kept in Body). Tell refusals apart by Status and Code: errors.As(err, &apiErr).
type APIError struct {
	Status          int
	Message         string
	Code            string
	Retryable       bool
	SuggestedAction string
	Fields          []FieldError
	Reason          string
	RequestID       string
	Details         map[string]any
	// Body is the raw body; Header the answer's headers.
	Body   []byte
	Header http.Header
}

func (e *APIError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("postalmail: %d %s: %s", e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("postalmail: %d: %s", e.Status, e.Message)
}

// Field returns a top-level field of the body (billing_url, credits_required_cents, ...).
func (e *APIError) Field(name string) any {
	var m map[string]any
	if json.Unmarshal(e.Body, &m) != nil {
		return nil
	}
	return m[name]
}

// Codes the API answers with (not all: Code holds whatever the body says).
const (
	CodeRateLimited          = "RATE_LIMITED"
	CodeInsufficientCredits  = "INSUFFICIENT_CREDITS"
	CodeDuplicateOutbound    = "DUPLICATE_OUTBOUND_MAIL"
	CodeServiceMDVersion     = "SERVICE_MD_VERSION_MISMATCH"
	CodeMailNotPendingApprov = "MAIL_NOT_PENDING_APPROVAL"
)

// ErrorCode is the Code of an *APIError in err's chain, or "".
func ErrorCode(err error) string {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code
	}
	return ""
}

// NewAPIError reads an error answer.
func NewAPIError(status int, body []byte, header http.Header) *APIError {
	e := &APIError{Status: status, Body: body, Header: header, Retryable: status == 429 || status >= 500}
	var raw struct {
		Error           json.RawMessage `json:"error"`
		Code            string          `json:"code"`
		Retryable       *bool           `json:"retryable"`
		SuggestedAction string          `json:"suggested_action"`
		Fields          []FieldError    `json:"fields"`
		Reason          string          `json:"reason"`
		RequestID       string          `json:"request_id"`
		Details         map[string]any  `json:"details"`
	}
	if json.Unmarshal(body, &raw) == nil {
		var text string
		var nested struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		}
		if json.Unmarshal(raw.Error, &text) == nil {
			e.Message = text
		} else if json.Unmarshal(raw.Error, &nested) == nil {
			e.Message = nested.Message
			if raw.Code == "" {
				raw.Code = nested.Code
			}
		}
		e.Code = raw.Code
		if raw.Retryable != nil {
			e.Retryable = *raw.Retryable
		}
		e.SuggestedAction = raw.SuggestedAction
		e.Fields = raw.Fields
		e.Reason = raw.Reason
		e.RequestID = raw.RequestID
		e.Details = raw.Details
	} else {
		e.Message = string(body)
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	if e.RequestID == "" && header != nil {
		e.RequestID = header.Get("X-Request-Id")
	}
	return e
}

func errorFromResponse(resp *http.Response) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	return NewAPIError(resp.StatusCode, body, resp.Header)
}
