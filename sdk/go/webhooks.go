package postalmail

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far a signature's timestamp may be from now.
const WebhookTolerance = 5 * time.Minute

// ErrWebhookSignature is wrapped by every verification failure.
var ErrWebhookSignature = errors.New("postalmail: webhook signature not verified")

func sigErr(msg string) error { return &webhookError{msg} }

type webhookError struct{ msg string }

func (e *webhookError) Error() string { return "postalmail: webhook signature: " + e.msg }
func (e *webhookError) Unwrap() error { return ErrWebhookSignature }

// VerifyStandardWebhook verifies a custom endpoint delivery (Standard Webhooks): webhook-id,
// webhook-timestamp and webhook-signature (`v1,<base64>`, several space-separated during a
// secret rotation) over id.timestamp.body, keyed by the base64 secret after `whsec_`. Pass the
// raw body as received. now is time.Now() when zero.
func VerifyStandardWebhook(body []byte, header http.Header, secret string, now time.Time) error {
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return sigErr("missing webhook-id, webhook-timestamp or webhook-signature header")
	}
	if err := checkTimestamp(ts, now); err != nil {
		return err
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return sigErr("the secret is not base64 after whsec_")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	expected := mac.Sum(nil)
	for _, sig := range strings.Fields(sigs) {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, expected) {
			return nil
		}
	}
	return sigErr("no signature matches")
}

// AgentWebhookSignature is what a verified X-Service-Signature names.
type AgentWebhookSignature struct {
	KeyID     string
	Timestamp int64
}

var agentSignature = regexp.MustCompile(`^(whsk_[A-Za-z0-9]+):t=(\d+),v1=([0-9a-f]{64})$`)

// VerifyAgentWebhook verifies an agent webhook delivery: X-Service-Signature
// `<whsk_ key id>:t=<ts>,v1=<hex HMAC-SHA256(ts.body)>` keyed by the 64-character secret.
// signingKey is the one-time webhook_signing_key (`whsk_` + secret) or the secret alone.
func VerifyAgentWebhook(body []byte, header http.Header, signingKey string, now time.Time) (AgentWebhookSignature, error) {
	value := strings.TrimSpace(header.Get("X-Service-Signature"))
	if value == "" {
		return AgentWebhookSignature{}, sigErr("missing X-Service-Signature header")
	}
	m := agentSignature.FindStringSubmatch(value)
	if m == nil {
		return AgentWebhookSignature{}, sigErr("malformed X-Service-Signature header")
	}
	if err := checkTimestamp(m[2], now); err != nil {
		return AgentWebhookSignature{}, err
	}
	secret := strings.TrimPrefix(signingKey, "whsk_")
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(m[2] + "."))
	mac.Write(body)
	got, _ := hex.DecodeString(m[3])
	if !hmac.Equal(got, mac.Sum(nil)) {
		return AgentWebhookSignature{}, sigErr("signature mismatch")
	}
	ts, _ := strconv.ParseInt(m[2], 10, 64)
	return AgentWebhookSignature{KeyID: m[1], Timestamp: ts}, nil
}

func checkTimestamp(value string, now time.Time) error {
	ts, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return sigErr("timestamp is not a number")
	}
	if now.IsZero() {
		now = time.Now()
	}
	diff := now.Sub(time.Unix(ts, 0))
	if diff > WebhookTolerance || diff < -WebhookTolerance {
		return sigErr("timestamp outside the tolerance")
	}
	return nil
}
