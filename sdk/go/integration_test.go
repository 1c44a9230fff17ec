package postalmail

// The Go SDK against a running API: test/sdk/go.test.ts starts the test stack's app, makes the
// accounts and runs `go test ./...` here with them in POSTAL_* variables. Without
// POSTAL_BASE_URL these tests are skipped.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("POSTAL_BASE_URL") == "" {
			t.Skip("POSTAL_BASE_URL not set: run through npm test (test/sdk/go.test.ts)")
		}
		t.Fatalf("%s not set", name)
	}
	return v
}

func client(t *testing.T, key string) *ClientWithResponses {
	t.Helper()
	c, err := New(Options{BaseURL: env(t, "POSTAL_BASE_URL"), APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var recipient = map[string]string{
	"recipient_name":  "Jane Doe",
	"recipient_line1": "123 Main St",
	"recipient_city":  "Austin",
	"recipient_state": "TX",
	"recipient_zip":   "78701",
}

func letterFields(extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range recipient {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func TestSendDryRunFromBytesReaderAndPath(t *testing.T) {
	c := client(t, env(t, "POSTAL_AGENT_KEY"))
	path := env(t, "POSTAL_LETTER_PDF")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fromPath, err := FileFromPath("document", path)
	if err != nil {
		t.Fatal(err)
	}
	opened, _ := os.Open(path)
	defer opened.Close()
	for _, doc := range []File{
		FileFromBytes("document", "letter.pdf", data),
		FileFromReader("document", "letter.pdf", opened),
		fromPath,
	} {
		ct, body, err := Multipart(letterFields(map[string]string{"dry_run": "true"}), doc)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.PostV1MailWithBodyWithResponse(t.Context(), &PostV1MailParams{}, ct, body)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != 200 || res.JSON200 == nil {
			t.Fatalf("dry run: %d %s", res.StatusCode(), res.Body)
		}
		if res.JSON200.PageCount != 2 || res.JSON200.CostCents <= 0 {
			t.Fatalf("dry run priced %d pages at %d", res.JSON200.PageCount, res.JSON200.CostCents)
		}
	}
}

func TestLiveSendWithApproval(t *testing.T) {
	data, err := os.ReadFile(env(t, "POSTAL_LETTER_PDF"))
	if err != nil {
		t.Fatal(err)
	}
	ct, body, err := Multipart(letterFields(map[string]string{"allow_duplicate": "true"}), FileFromBytes("document", "letter.pdf", data))
	if err != nil {
		t.Fatal(err)
	}
	created, err := client(t, env(t, "POSTAL_APPROVAL_AGENT_KEY")).PostV1MailWithBodyWithResponse(t.Context(), &PostV1MailParams{}, ct, body)
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil || created.JSON201.Status != "pending_approval" {
		t.Fatalf("created: %d %s", created.StatusCode(), created.Body)
	}
	approved, err := client(t, env(t, "POSTAL_MEMBER_KEY")).PostV1MailIdApproveWithResponse(t.Context(), created.JSON201.Id, &PostV1MailIdApproveParams{})
	if err != nil {
		t.Fatal(err)
	}
	if approved.JSON200 == nil || approved.JSON200.OutboundMail.Status != "submitted" ||
		approved.JSON200.CreditsChargedCents != created.JSON201.CreditsRequiredCents {
		t.Fatalf("approved: %d %s", approved.StatusCode(), approved.Body)
	}
}

func TestBatch(t *testing.T) {
	c := client(t, env(t, "POSTAL_TEST_MEMBER_KEY"))
	template, err := FileFromPath("template", env(t, "POSTAL_POSTCARD_PDF"))
	if err != nil {
		t.Fatal(err)
	}
	csv := "name,address,address2,city,state,zip\nA One,1 Main St,,Austin,TX,78701\nB Two,2 Main St,,Austin,TX,78702\n"
	ct, body, err := Multipart(map[string]string{"job_name": "Go batch", "mail_type": "postcard_4x6", "mailing_class": "first_class"},
		template, FileFromReader("recipients", "recipients.csv", strings.NewReader(csv)))
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.PostV1BatchMailWithBodyWithResponse(t.Context(), &PostV1BatchMailParams{}, ct, body)
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil || created.JSON201.Batch.Recipients.Valid != 2 {
		t.Fatalf("batch: %d %s", created.StatusCode(), created.Body)
	}
	confirmed, err := c.PostV1BatchMailIdConfirmWithResponse(t.Context(), created.JSON201.Batch.Id, &PostV1BatchMailIdConfirmParams{})
	if err != nil {
		t.Fatal(err)
	}
	if confirmed.JSON200 == nil || !confirmed.JSON200.Sandbox || confirmed.JSON200.CreditsChargedCents != 0 {
		t.Fatalf("confirm: %d %s", confirmed.StatusCode(), confirmed.Body)
	}
}

func TestTypedErrors(t *testing.T) {
	data, err := os.ReadFile(env(t, "POSTAL_LETTER_PDF"))
	if err != nil {
		t.Fatal(err)
	}
	send := func(key string, fields map[string]string) error {
		ct, body, err := Multipart(letterFields(fields), FileFromBytes("document", "letter.pdf", data))
		if err != nil {
			t.Fatal(err)
		}
		_, err = client(t, key).PostV1MailWithBodyWithResponse(t.Context(), &PostV1MailParams{}, ct, body)
		return err
	}
	var apiErr *APIError
	if err := send(env(t, "POSTAL_AGENT_KEY"), map[string]string{"recipient_zip": "not a zip"}); !errors.As(err, &apiErr) || apiErr.Status != 400 {
		t.Fatalf("400 expected: %v", err)
	}
	paths := []string{}
	for _, f := range apiErr.Fields {
		paths = append(paths, f.Path)
	}
	if !strings.Contains(strings.Join(paths, ","), "recipient_zip") || apiErr.Retryable || apiErr.RequestID == "" {
		t.Fatalf("400: %+v", apiErr)
	}

	err = send(env(t, "POSTAL_POOR_AGENT_KEY"), nil)
	if ErrorCode(err) != CodeInsufficientCredits || !errors.As(err, &apiErr) || apiErr.Status != 402 {
		t.Fatalf("402 expected: %v", err)
	}
	if url, _ := apiErr.Field("billing_url").(string); !strings.HasSuffix(url, "#credits") {
		t.Fatalf("billing_url: %v", apiErr.Field("billing_url"))
	}

	_, err = client(t, env(t, "POSTAL_AGENT_KEY")).GetV1MailIdWithResponse(t.Context(), uuid.New())
	if !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Fatalf("404 expected: %v", err)
	}
}

// receiver records deliveries and answers endpoint verification challenges.
type receiver struct {
	mu   sync.Mutex
	got  []delivery
	srv  *httptest.Server
	seen chan struct{}
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{seen: make(chan struct{}, 16)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body})
		r.mu.Unlock()
		r.seen <- struct{}{}
		var event struct {
			EventType string `json:"event_type"`
			Data      struct {
				Challenge string `json:"challenge"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &event)
		w.Header().Set("Content-Type", "application/json")
		if event.EventType == "webhook.endpoint_verification" {
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": event.Data.Challenge})
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) first(t *testing.T) delivery {
	select {
	case <-r.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[0]
}

func TestStandardWebhookDelivery(t *testing.T) {
	c := client(t, env(t, "POSTAL_MEMBER_KEY"))
	r := newReceiver(t)
	created, err := c.PostV1WebhookEndpointsWithResponse(t.Context(), EndpointCreateRequest{Name: "Go hook", Url: r.srv.URL + "/hook", EventTypes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil {
		t.Fatalf("endpoint: %d %s", created.StatusCode(), created.Body)
	}
	verified, err := c.PostV1WebhookEndpointsIdVerifyWithResponse(t.Context(), uuid.MustParse(created.JSON201.Endpoint.Id))
	if err != nil {
		t.Fatal(err)
	}
	if verified.JSON200 == nil || !verified.JSON200.Verified {
		t.Fatalf("verify: %d %s", verified.StatusCode(), verified.Body)
	}
	d := r.first(t)
	if err := VerifyStandardWebhook(d.body, d.header, created.JSON201.Secret, time.Time{}); err != nil {
		t.Fatalf("real delivery refused: %v", err)
	}
	tampered := bytes.Replace(d.body, []byte("webhook.endpoint_verification"), []byte("mail.delivered"), 1)
	if err := VerifyStandardWebhook(tampered, d.header, created.JSON201.Secret, time.Time{}); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("tampered delivery verified: %v", err)
	}
}

func TestAgentWebhookDelivery(t *testing.T) {
	c := client(t, env(t, "POSTAL_MEMBER_KEY"))
	agentID := env(t, "POSTAL_AGENT_ID")
	r := newReceiver(t)
	settings, err := c.PutV1WebhooksSettingsWithBodyWithResponse(t.Context(), "application/json",
		strings.NewReader(fmt.Sprintf(`{"agent_id":%q,"webhook_url":%q}`, agentID, r.srv.URL+"/hook")))
	if err != nil {
		t.Fatal(err)
	}
	if settings.JSON200 == nil || settings.JSON200.WebhookSigningKey == nil || settings.JSON200.SigningKeyId == nil {
		t.Fatalf("settings: %d %s", settings.StatusCode(), settings.Body)
	}
	sent, err := c.PostV1TestWebhookWithBodyWithResponse(t.Context(), "application/json", strings.NewReader(fmt.Sprintf(`{"agent_id":%q}`, agentID)))
	if err != nil {
		t.Fatal(err)
	}
	if sent.StatusCode() != 200 {
		t.Fatalf("test webhook: %d %s", sent.StatusCode(), sent.Body)
	}
	d := r.first(t)
	sig, err := VerifyAgentWebhook(d.body, d.header, *settings.JSON200.WebhookSigningKey, time.Time{})
	if err != nil || sig.KeyID != *settings.JSON200.SigningKeyId {
		t.Fatalf("real delivery refused: %v %v", sig, err)
	}
	tampered := bytes.Replace(d.body, []byte(agentID), []byte(uuid.NewString()), 1)
	if _, err := VerifyAgentWebhook(tampered, d.header, *settings.JSON200.WebhookSigningKey, time.Time{}); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("tampered delivery verified: %v", err)
	}
}

// The limited app counts in 2-second windows and the key may make 1 request in each: a GET
// spends the budget, then the SDK's POST gets a 429 and is sent again with the same key.
func TestRetryOn429ReusesTheIdempotencyKey(t *testing.T) {
	base := env(t, "POSTAL_LIMITED_BASE_URL")
	key := env(t, "POSTAL_LIMITED_KEY")
	data, err := os.ReadFile(env(t, "POSTAL_LETTER_PDF"))
	if err != nil {
		t.Fatal(err)
	}
	type attempt struct {
		status int
		key    string
	}
	var seen []attempt
	recording := doerFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			seen = append(seen, attempt{resp.StatusCode, req.Header.Get("Idempotency-Key")})
		}
		return resp, err
	})
	c, err := New(Options{BaseURL: base, APIKey: key, HTTPClient: recording})
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; try < 5 && (len(seen) == 0 || seen[0].status != 429); try++ {
		seen = nil
		spend, _ := http.NewRequest("GET", strings.TrimRight(base, "/")+"/v1/credits", nil)
		spend.Header.Set("Authorization", "Bearer "+key)
		if resp, err := http.DefaultClient.Do(spend); err == nil {
			resp.Body.Close()
		}
		ct, body, err := Multipart(letterFields(map[string]string{"allow_duplicate": "true"}), FileFromBytes("document", filepath.Base("letter.pdf"), data))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.PostV1MailWithBodyWithResponse(t.Context(), &PostV1MailParams{}, ct, body)
		if err != nil || res.StatusCode() != 201 {
			t.Fatalf("send: %v", err)
		}
	}
	if len(seen) != 2 || seen[0].status != 429 || seen[1].status != 201 {
		t.Fatalf("attempts: %+v", seen)
	}
	if seen[0].key == "" || seen[1].key != seen[0].key {
		t.Fatalf("keys differ: %+v", seen)
	}
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }
