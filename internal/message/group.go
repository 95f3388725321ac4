package message

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// hashedGroupPrefix begins every group id GroupID hashes. A tenant id that
// itself begins with it is hashed too, so a hashed group id is never
// also a tenant id used as it is.
const hashedGroupPrefix = "~sha256:"

// GroupID is the MessageGroupId of a delivery message of tenant tenantID,
// on the delivery queue and on the DLQ: every sender sets it, so that SQS
// fair queues, which reorder a standard queue's messages by group, keep a
// quiet tenant's dwell time low beside a noisy one. The group is the
// tenant, not the endpoint: isolation between a tenant's own endpoints is
// the per-endpoint gate's job (package deliver), and a tenant with many endpoints
// must not get a larger share of the queue than a tenant with one.
//
// A tenant id SQS accepts as a group id (1 to MaxGroupIDLen characters,
// each an ASCII letter, digit or punctuation: every tenant id the API
// creates, 1 to 64 letters, digits, _ or -) is the group id as it is. Any
// other (longer, or with a space, a control or a non-ASCII character,
// which an outbox item may carry) is hashed: hashedGroupPrefix and the hex
// SHA-256 of the id, 72 characters, so that a send is never refused for
// its group id; so is one that ends in waitGroupSuffix, so that no
// tenant's group is another's wait group. An empty tenant id gives nil:
// no group.
func GroupID(tenantID string) *string {
	if tenantID == "" {
		return nil
	}
	if ValidGroupID(tenantID) && !strings.HasPrefix(tenantID, hashedGroupPrefix) && !strings.HasSuffix(tenantID, waitGroupSuffix) {
		return aws.String(tenantID)
	}
	return aws.String(hashedGroup(tenantID))
}

// hashedGroup is tenantID's hashed group id: hashedGroupPrefix and the hex
// SHA-256 of the id, 72 characters.
func hashedGroup(tenantID string) string {
	sum := sha256.Sum256([]byte(tenantID))
	return hashedGroupPrefix + hex.EncodeToString(sum[:])
}

// waitGroupSuffix ends every wait group (WaitGroupID).
const waitGroupSuffix = "#wait"

// WaitGroupID is the MessageGroupId of a delivery message of tenant
// tenantID sent again to wait (a retry's hop, a deferral for a rate
// limit, a breaker, a gate or a dependency): its tenant's group
// (GroupID) and waitGroupSuffix; the hashed group's (77 characters) when
// that would be longer than SQS takes. SQS fair queues
// mark a group noisy when it holds a large share of the in-flight
// messages and then serve its messages after the quiet groups'; a
// tenant's retries to one failing endpoint, in a group of their own,
// leave its fresh messages (to its healthy endpoints) in a quiet group.
// An empty tenant id gives nil: no group.
func WaitGroupID(tenantID string) *string {
	g := GroupID(tenantID)
	if g == nil {
		return nil
	}
	if len(*g)+len(waitGroupSuffix) > MaxGroupIDLen {
		return aws.String(hashedGroup(tenantID) + waitGroupSuffix)
	}
	return aws.String(*g + waitGroupSuffix)
}

// CheckGroupID reports a message, with body body, sent to the delivery
// queue or the DLQ with group id groupID, that breaks GroupID's rule: no
// group id, one SQS refuses, or one that is neither the group nor the
// wait group (WaitGroupID) of the tenant the body names. A body with no tenant id (malformed: deliver parks it
// dead again) must still carry a group id SQS accepts. The fakes of SQS
// in tests call it on every delivery message, so that every sender is held
// to the rule (the local cloud stores the group id but does not reorder by
// it).
func CheckGroupID(body string, groupID *string) error {
	if groupID == nil {
		return errors.New("delivery message sent without a MessageGroupId (message.GroupID of its tenant)")
	}
	if !ValidGroupID(*groupID) {
		return fmt.Errorf("InvalidParameterValue: MessageGroupId %q is not 1 to %d ASCII letters, digits or punctuation", *groupID, MaxGroupIDLen)
	}
	var m struct {
		TenantID string `json:"tenant_id"`
	}
	if json.Unmarshal([]byte(body), &m) != nil || m.TenantID == "" {
		return nil
	}
	if want, wait := GroupID(m.TenantID), WaitGroupID(m.TenantID); *groupID != *want && *groupID != *wait {
		return fmt.Errorf("delivery message of tenant %q sent with MessageGroupId %q, not its tenant's %q (or %q)", m.TenantID, *groupID, *want, *wait)
	}
	return nil
}
