package domain

import (
	"net/mail"
	"time"
)

// NotifyStatus is where a notification address stands.
type NotifyStatus string

const (
	// NotifyPending: the address was named and sent its verification
	// e-mail; it gets no notice until its link is followed.
	NotifyPending NotifyStatus = "pending"
	// NotifyVerified: its owner followed the verification link; it gets
	// the tenant's notices.
	NotifyVerified NotifyStatus = "verified"
	// NotifyUnsubscribed: its owner followed an unsubscribe link; it gets
	// nothing more (the tenant may name it again, which verifies it anew).
	NotifyUnsubscribed NotifyStatus = "unsubscribed"
)

// Notification addresses' bounds.
const (
	// MaxNotifyEmails is the most notification addresses a tenant may name.
	MaxNotifyEmails = 5
	// NoticesPerHour is the most notice e-mails hookline sends a tenant in
	// a clock hour, across its addresses' sends (each address's e-mail
	// counts one): past it, notices are dropped and counted, the webhooks
	// and the operator's bus still carry every event. An endpoint's
	// failure episode raises each of its events once and delivery.dead is
	// coalesced per window, so the bound is reached only by a tenant with
	// many endpoints failing at once.
	NoticesPerHour = 20
	// NotifyVerifyFor is how long a verification link works.
	NotifyVerifyFor = 7 * 24 * time.Hour
)

// NotifyEmail is an address a tenant named to receive notices by e-mail
// (endpoint.failing, endpoint.disabled, endpoint.recovered,
// endpoint.degraded and the delivery.dead summaries).
type NotifyEmail struct {
	TenantID string       `dynamodbav:"tenant_id"`
	ID       string       `dynamodbav:"notify_id"`
	Address  string       `dynamodbav:"address"`
	Status   NotifyStatus `dynamodbav:"status"`
	// VerifyHash is the SHA-256 (hex) of the verification link's token:
	// the token itself is in the e-mail only.
	VerifyHash string `dynamodbav:"verify_hash,omitempty"`
	// UnsubscribeToken is the token of the address's unsubscribe links.
	// It is kept as it is (every notice carries it), and it can do one
	// thing: stop the notices to this address.
	UnsubscribeToken string `dynamodbav:"unsubscribe_token"`
	// BaseURL is the API's address as the tenant reached it when naming
	// the address (its links: verify, unsubscribe); ConsoleURL the
	// console's, which the notices link to.
	BaseURL    string     `dynamodbav:"base_url"`
	ConsoleURL string     `dynamodbav:"console_url"`
	CreatedAt  time.Time  `dynamodbav:"created_at"`
	VerifiedAt *time.Time `dynamodbav:"verified_at,omitempty"`
}

// BareAddress reports whether s is an e-mail address alone, as SES sends
// to and from one: net/mail reads it, with no display name, and reads it
// back the same.
func BareAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}
