// Package postalmail is the Go SDK of the Postal Mail API. client.gen.go is generated from the
// OpenAPI document by oapi-codegen (npm run sdk:generate); this file and the others without
// ".gen" are the hand-written layer: New (base URL, API key, retries that honour Retry-After
// and resend the same Idempotency-Key), *APIError by code, multipart uploads and the two
// webhook signature verifiers.
package postalmail

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Options configure New.
type Options struct {
	// BaseURL is the API base URL with its prefix, e.g. https://host/api.
	BaseURL string
	// APIKey is sent as the bearer token: sk_live_, sk_test_, sk_agent_, sk_agent_test_, sk_facility_ or oauth_at_.
	APIKey string
	// ServiceMDVersion is sent as X-Service-MD-Version when a call sets none ("1" when empty;
	// "-" sends none).
	ServiceMDVersion string
	// MaxRetries is the number of attempts after the first for 429 and 503 answers (default 3; -1: none).
	MaxRetries int
	// MaxRetryDelay caps any wait, whatever Retry-After says (default 30 s).
	MaxRetryDelay time.Duration
	// BaseRetryDelay is the wait without a usable Retry-After: BaseRetryDelay × 2^attempt (default 500 ms).
	BaseRetryDelay time.Duration
	// HTTPClient sends the requests (default http.DefaultClient).
	HTTPClient HttpRequestDoer
	// OnRetry, when set, is called before each wait.
	OnRetry func(RetryInfo)
}

// RetryInfo describes one retry about to happen.
type RetryInfo struct {
	Attempt        int
	Status         int
	Delay          time.Duration
	IdempotencyKey string
}

// New returns the generated client (typed responses) sending through the retrying,
// authenticating doer. A refusal (status 400 or above, after retries) comes back as the error
// of the call: an *APIError (use errors.As).
func New(opts Options) (*ClientWithResponses, error) {
	if opts.BaseURL == "" {
		return nil, fmt.Errorf("postalmail: BaseURL is required")
	}
	doer := &Doer{opts: opts, basePath: basePath(opts.BaseURL)}
	return NewClientWithResponses(strings.TrimRight(opts.BaseURL, "/"), WithHTTPClient(doer))
}

func basePath(baseURL string) string {
	rest := baseURL
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.Index(rest, "/"); i >= 0 {
		return strings.TrimRight(rest[i:], "/")
	}
	return ""
}

// Doer is the HttpRequestDoer New installs.
type Doer struct {
	opts     Options
	basePath string
}

var idempotentPatterns = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(idempotentPostPaths))
	for _, p := range idempotentPostPaths {
		quoted := regexp.QuoteMeta(p)
		out = append(out, regexp.MustCompile("^"+regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(quoted, "[^/]+")+"$"))
	}
	return out
}()

// AcceptsIdempotencyKey tells whether POST path (relative to the base URL) documents an Idempotency-Key header.
func AcceptsIdempotencyKey(method, path string) bool {
	if method != http.MethodPost {
		return false
	}
	for _, re := range idempotentPatterns {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

// NewIdempotencyKey returns a random UUID (version 4).
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// RetryAfter reads a Retry-After value (delta seconds or an HTTP date); ok is false when absent or unreadable.
func RetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(value); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if at, err := http.ParseTime(value); err == nil {
		if d := at.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

// RetryDelay is the wait before retry attempt (0-based): Retry-After if given, else exponential; capped.
func RetryDelay(retryAfter string, attempt int, opts Options) time.Duration {
	maxDelay := opts.MaxRetryDelay
	if maxDelay <= 0 {
		maxDelay = 30 * time.Second
	}
	d, ok := RetryAfter(retryAfter, time.Now())
	if !ok {
		base := opts.BaseRetryDelay
		if base <= 0 {
			base = 500 * time.Millisecond
		}
		d = base << attempt
	}
	if d > maxDelay {
		d = maxDelay
	}
	return d
}

// Do sends req with the API key, an Idempotency-Key on POSTs that accept one, retries on 429
// and 503 (same body, same key), and turns a final refusal into an *APIError.
func (d *Doer) Do(req *http.Request) (*http.Response, error) {
	if d.opts.APIKey != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+d.opts.APIKey)
	}
	if req.Header.Get("X-Service-MD-Version") == "" && d.opts.ServiceMDVersion != "-" {
		v := d.opts.ServiceMDVersion
		if v == "" {
			v = "1"
		}
		req.Header.Set("X-Service-MD-Version", v)
	}
	path := strings.TrimPrefix(req.URL.Path, d.basePath)
	if req.Header.Get("Idempotency-Key") == "" && AcceptsIdempotencyKey(req.Method, path) {
		req.Header.Set("Idempotency-Key", NewIdempotencyKey())
	}
	// The body is kept so that each attempt sends the same bytes.
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
	}
	client := d.opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	maxRetries := d.opts.MaxRetries
	if maxRetries == 0 {
		maxRetries = 3
	}
	for attempt := 0; ; attempt++ {
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		retry := (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) &&
			attempt < maxRetries
		if !retry {
			if resp.StatusCode >= 400 {
				return nil, errorFromResponse(resp)
			}
			return resp, nil
		}
		delay := RetryDelay(resp.Header.Get("Retry-After"), attempt, d.opts)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if d.opts.OnRetry != nil {
			d.opts.OnRetry(RetryInfo{Attempt: attempt + 1, Status: resp.StatusCode, Delay: delay, IdempotencyKey: req.Header.Get("Idempotency-Key")})
		}
		if err := sleep(req.Context(), delay); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
