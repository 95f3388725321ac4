package destination

import (
	"encoding/json"
	"fmt"
)

// SessionActions are what a role's session may do, whatever the role's
// own permissions allow: the three sends and the KMS calls an encrypted
// queue or topic makes with the sender's permissions. The session policy
// passed to AssumeRole allows these only, so a session can neither assume
// another role nor act beyond a delivery.
var SessionActions = []string{"sqs:SendMessage", "sns:Publish", "events:PutEvents", "kms:GenerateDataKey", "kms:Decrypt"}

// MaxSessionPolicy is the most characters STS takes in AssumeRole's
// Policy (plain text, before packing).
const MaxSessionPolicy = 2048

// sessionPolicy is the session policy of every role hookline assumes: an
// Allow of SessionActions, and an explicit Deny of everything on own, the
// exact ARNs of hookline's own queues, topic and bus, which IAM enforces
// whatever the role allows and whatever the resources are named.
func sessionPolicy(own []string) (string, error) {
	type statement struct {
		Effect   string `json:"Effect"`
		Action   any    `json:"Action"`
		Resource any    `json:"Resource"`
	}
	doc := struct {
		Version   string      `json:"Version"`
		Statement []statement `json:"Statement"`
	}{Version: "2012-10-17", Statement: []statement{{Effect: "Allow", Action: SessionActions, Resource: "*"}}}
	if len(own) > 0 {
		doc.Statement = append(doc.Statement, statement{Effect: "Deny", Action: "*", Resource: own})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	if len(b) > MaxSessionPolicy {
		return "", fmt.Errorf("session policy of %d characters is over STS's %d: %d own resources", len(b), MaxSessionPolicy, len(own))
	}
	return string(b), nil
}
