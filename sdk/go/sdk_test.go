package postalmail

// Tests of the hand-written layer that need no server of the API: Retry-After, the retrying
// doer (against a local httptest server), multipart bodies and both webhook verifiers.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if d, ok := RetryAfter("7", now); !ok || d != 7*time.Second {
		t.Fatalf("seconds: %v %v", d, ok)
	}
	if d, ok := RetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); !ok || d != 90*time.Second {
		t.Fatalf("HTTP date: %v %v", d, ok)
	}
	if _, ok := RetryAfter("soon", now); ok {
		t.Fatal("unreadable value accepted")
	}
	if d := RetryDelay("3600", 0, Options{MaxRetryDelay: 2 * time.Second}); d != 2*time.Second {
		t.Fatalf("not capped: %v", d)
	}
	if d := RetryDelay("", 2, Options{BaseRetryDelay: 10 * time.Millisecond}); d != 40*time.Millisecond {
		t.Fatalf("backoff: %v", d)
	}
}

func TestAcceptsIdempotencyKey(t *testing.T) {
	if !AcceptsIdempotencyKey("POST", "/v1/mail") || !AcceptsIdempotencyKey("POST", "/v1/mail/0b6c9f0e-0000-4000-8000-000000000000/approve") {
		t.Fatal("POST /v1/mail and its approve accept a key")
	}
	if AcceptsIdempotencyKey("GET", "/v1/mail") || AcceptsIdempotencyKey("POST", "/v1/agents") {
		t.Fatal("GET and POST /v1/agents take no key")
	}
}

// A 503 with an HTTP-date Retry-After, then a 429 with seconds, then a 201: three attempts,
// one Idempotency-Key, the same body each time.
func TestDoerRetriesWithTheSameKeyAndBody(t *testing.T) {
	var mu sync.Mutex
	var keys, bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		bodies = append(bodies, string(b))
		n := len(keys)
		mu.Unlock()
		switch n {
		case 1:
			w.Header().Set("Retry-After", time.Now().Add(-time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(503)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"error":"slow down","code":"RATE_LIMITED","retryable":true}`))
		default:
			w.WriteHeader(201)
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	var retries []RetryInfo
	d := &Doer{opts: Options{APIKey: "sk_test_x", OnRetry: func(i RetryInfo) { retries = append(retries, i) }}, basePath: "/api"}
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/mail", strings.NewReader("body-bytes"))
	resp, err := d.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || len(keys) != 3 || len(retries) != 2 {
		t.Fatalf("status %d after %d attempts, %d retries", resp.StatusCode, len(keys), len(retries))
	}
	if keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] {
		t.Fatalf("keys differ: %v", keys)
	}
	for _, b := range bodies {
		if b != "body-bytes" {
			t.Fatalf("bodies differ: %v", bodies)
		}
	}
}

func TestDoerTurnsRefusalsIntoAPIError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-1")
		w.WriteHeader(402)
		_, _ = w.Write([]byte(`{"error":"Not enough credits","code":"INSUFFICIENT_CREDITS","retryable":false,"billing_url":"https://x/#credits","credits_required_cents":120}`))
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL + "/api", APIKey: "sk_live_x", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetV1CreditsWithResponse(t.Context())
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("not an *APIError: %v", err)
	}
	if apiErr.Status != 402 || apiErr.Code != CodeInsufficientCredits || apiErr.RequestID != "req-1" || apiErr.Retryable {
		t.Fatalf("%+v", apiErr)
	}
	if apiErr.Field("billing_url") != "https://x/#credits" {
		t.Fatalf("billing_url: %v", apiErr.Field("billing_url"))
	}
}

func TestMultipart(t *testing.T) {
	ct, body, err := Multipart(map[string]string{"recipient_zip": "78701"},
		FileFromBytes("document", "a.pdf", []byte("%PDF-1.4")),
		FileFromReader("recipients", "r.csv", strings.NewReader("name\nA\n")))
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := mime.ParseMediaType(ct)
	form, err := multipart.NewReader(body, params["boundary"]).ReadForm(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if form.Value["recipient_zip"][0] != "78701" {
		t.Fatal("field lost")
	}
	doc := form.File["document"][0]
	if doc.Filename != "a.pdf" || doc.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("document part: %v %v", doc.Filename, doc.Header)
	}
	if form.File["recipients"][0].Header.Get("Content-Type") != "text/csv" {
		t.Fatal("csv type")
	}
}

func TestVerifyStandardWebhook(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	body := []byte(`{"event_type":"mail.delivered"}`)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("msg_1." + ts + "."))
	mac.Write(body)
	h := http.Header{}
	h.Set("webhook-id", "msg_1")
	h.Set("webhook-timestamp", ts)
	// During a rotation two signatures come; one of them matching is enough.
	h.Set("webhook-signature", "v1,AAAA v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	if err := VerifyStandardWebhook(body, h, secret, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := VerifyStandardWebhook([]byte(`{"event_type":"mail.failed"}`), h, secret, time.Time{}); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("tampered body verified: %v", err)
	}
	if err := VerifyStandardWebhook(body, h, secret, time.Now().Add(6*time.Minute)); err == nil {
		t.Fatal("stale timestamp verified")
	}
}

func TestVerifyAgentWebhook(t *testing.T) {
	secret := strings.Repeat("ab", 32)
	body := []byte(`{"event_type":"webhook.test"}`)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	h := http.Header{}
	h.Set("X-Service-Signature", "whsk_0011223344556677:t="+ts+",v1="+hex.EncodeToString(mac.Sum(nil)))
	sig, err := VerifyAgentWebhook(body, h, "whsk_"+secret, time.Time{})
	if err != nil || sig.KeyID != "whsk_0011223344556677" {
		t.Fatalf("%v %v", sig, err)
	}
	if _, err := VerifyAgentWebhook(append(body, ' '), h, secret, time.Time{}); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("tampered body verified: %v", err)
	}
}

func TestAPIErrorReadsTheNestedShape(t *testing.T) {
	e := NewAPIError(409, []byte(`{"error":{"type":"invalid_request","message":"Name taken","code":"agent_name_taken"},"retryable":false}`), nil)
	if e.Code != "agent_name_taken" || e.Message != "Name taken" || e.Retryable {
		t.Fatalf("%+v", e)
	}
	text := NewAPIError(502, []byte("Bad Gateway"), nil)
	if text.Code != "" || !text.Retryable || text.Message != "Bad Gateway" {
		t.Fatalf("%+v", text)
	}
}
