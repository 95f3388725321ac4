// Package snsfake is SNS's Publish for tests, over HTTP in SNS's query
// protocol (package awsfake), held to the AWS rules the local cloud
// forgives: the topic must exist (NotFound); a message is non-empty
// UTF-8 of at most 262,144 bytes counting its message attributes' names,
// types and values; at most 10 message attributes, each named by SNS's
// rules with a String, String.Array, Number or Binary value that is not
// empty. Every limit is written here from AWS's documentation, never read
// from the product (codeshape's TestFakesImportNoProduct).
//
// Config.Authorize stands for IAM (AuthorizationError, 403); Config.Fail
// scripts any other answer (throttling, KMS, 5xx). Published returns what
// each topic accepted, its attributes and the access key that signed it.
package snsfake

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookline/hookline/internal/fakes/awsfake"
)

// SNS's limits, as AWS documents them (Amazon SNS Developer Guide, "Amazon
// SNS message attributes" and the Publish API Reference).
const (
	// MaxMessageBytes: a message "can be up to 256 KB (262,144 bytes)",
	// its attributes' names, types and values counted in.
	MaxMessageBytes = 262_144
	// MaxAttributes: "up to 10 message attributes" a message.
	MaxAttributes = 10
	// MaxAttributeNameLen: a name "can be up to 256 characters long".
	MaxAttributeNameLen = 256
)

// Attribute is a message attribute as published.
type Attribute struct{ DataType, Value string }

// Message is a message a topic accepted.
type Message struct {
	ID, Body   string
	Attributes map[string]Attribute
	// AccessKey signed the Publish.
	AccessKey string
}

// Config sets up a Fake.
type Config struct {
	// Authorize, if set, is asked about each Publish: the access key that
	// signed it and the topic's ARN. False is AuthorizationError (403).
	Authorize func(accessKey, topicARN string) bool
	// Fail, if set, is asked before the rules; an error it returns is the
	// answer (an awsfake.Error for a status and code).
	Fail func(topicARN string) error
}

// Fake holds topics. Safe for concurrent use.
type Fake struct {
	cfg    Config
	mu     sync.Mutex
	topics map[string][]Message
	seq    int
}

// New returns an SNS with no topic.
func New(cfg Config) *Fake { return &Fake{cfg: cfg, topics: map[string][]Message{}} }

// AddTopic creates the topic arn.
func (f *Fake) AddTopic(arn string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.topics[arn]; !ok {
		f.topics[arn] = nil
	}
}

// Published returns the messages topic arn accepted, in order.
func (f *Fake) Published(arn string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.topics[arn]...)
}

type publishResponse struct {
	XMLName   xml.Name `xml:"PublishResponse"`
	MessageID string   `xml:"PublishResult>MessageId"`
}

// ServeHTTP answers Publish, the one action the fake has.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("Action") != "Publish" {
		awsfake.WriteQueryError(w, awsfake.Errorf(400, "InvalidAction", "the fake answers Publish only"))
		return
	}
	id, err := f.publish(awsfake.Scope(r).AccessKey, r.PostForm)
	if err != nil {
		awsfake.WriteQueryError(w, err)
		return
	}
	awsfake.WriteXML(w, publishResponse{MessageID: id})
}

func (f *Fake) publish(key string, in url.Values) (string, error) {
	topic := in.Get("TopicArn")
	if f.cfg.Fail != nil {
		if err := f.cfg.Fail(topic); err != nil {
			return "", err
		}
	}
	if f.cfg.Authorize != nil && !f.cfg.Authorize(key, topic) {
		return "", awsfake.Errorf(403, "AuthorizationError", "User: %s is not authorized to perform: SNS:Publish on resource: %s", key, topic)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.topics[topic]; !ok {
		return "", awsfake.Errorf(404, "NotFound", "Topic does not exist")
	}
	m := Message{Body: in.Get("Message"), AccessKey: key}
	attrs, err := attributes(in)
	if err != nil {
		return "", err
	}
	if err := check(m.Body, attrs); err != nil {
		return "", err
	}
	f.seq++
	m.ID, m.Attributes = "sns-"+strconv.Itoa(f.seq), map[string]Attribute{}
	for name, v := range attrs {
		m.Attributes[name] = Attribute{DataType: aws.ToString(v.DataType), Value: aws.ToString(v.StringValue) + string(v.BinaryValue)}
	}
	f.topics[topic] = append(f.topics[topic], m)
	return m.ID, nil
}

// attributes reads MessageAttributes.entry.N.{Name,Value.DataType,
// Value.StringValue,Value.BinaryValue} from a query request.
func attributes(in url.Values) (map[string]sqstypes.MessageAttributeValue, error) {
	out := map[string]sqstypes.MessageAttributeValue{}
	for n := 1; ; n++ {
		p := "MessageAttributes.entry." + strconv.Itoa(n) + "."
		name, ok := in[p+"Name"]
		if !ok {
			return out, nil
		}
		v := sqstypes.MessageAttributeValue{DataType: aws.String(in.Get(p + "Value.DataType"))}
		if s, ok := in[p+"Value.StringValue"]; ok {
			v.StringValue = aws.String(s[0])
		}
		if b := in.Get(p + "Value.BinaryValue"); b != "" {
			raw, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return nil, awsfake.Errorf(400, "InvalidParameterValue", "message attribute %q: binary value is not base64", name[0])
			}
			v.BinaryValue = raw
		}
		out[name[0]] = v
	}
}

// check holds a message and its attributes to SNS's limits.
func check(body string, attrs map[string]sqstypes.MessageAttributeValue) error {
	if body == "" {
		return awsfake.Errorf(400, "InvalidParameter", "Invalid parameter: Empty message")
	}
	if !utf8.ValidString(body) {
		return awsfake.Errorf(400, "InvalidParameter", "Invalid parameter: Message must be UTF-8")
	}
	if err := checkAttributes(attrs); err != nil {
		return awsfake.Errorf(400, "InvalidParameterValue", "%s", err)
	}
	size := len(body)
	for name, a := range attrs {
		size += len(name) + len(aws.ToString(a.DataType)) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
	}
	if size > MaxMessageBytes {
		return awsfake.Errorf(400, "InvalidParameter", "Invalid parameter: Message too long: %d bytes with its attributes, at most %d", size, MaxMessageBytes)
	}
	return nil
}

// checkAttributes holds a message's attributes to SNS's rules ("Amazon SNS
// message attributes"): at most MaxAttributes; each name 1 to
// MaxAttributeNameLen of letters, digits, underscore, hyphen and period, no
// period first, last or two in a row, not starting with "AWS." or "Amazon."
// in any case; each of type String, String.Array, Number or Binary (a
// custom ".label" suffix allowed) with a non-empty value.
func checkAttributes(attrs map[string]sqstypes.MessageAttributeValue) error {
	if len(attrs) > MaxAttributes {
		return fmt.Errorf("%d message attributes, at most %d", len(attrs), MaxAttributes)
	}
	for name, v := range attrs {
		if err := checkAttributeName(name); err != nil {
			return err
		}
		dt := aws.ToString(v.DataType)
		typ, _, _ := strings.Cut(dt, ".")
		if dt == "String.Array" || strings.HasPrefix(dt, "String.Array.") {
			typ = "String.Array"
		}
		switch {
		case typ != "String" && typ != "String.Array" && typ != "Number" && typ != "Binary":
			return fmt.Errorf("message attribute %q has type %q, not String, String.Array, Number or Binary", name, dt)
		case typ == "Binary" && len(v.BinaryValue) == 0, typ != "Binary" && aws.ToString(v.StringValue) == "":
			return fmt.Errorf("message attribute %q must contain a non-empty value of type %s", name, typ)
		}
	}
	return nil
}

func checkAttributeName(name string) error {
	if name == "" || len(name) > MaxAttributeNameLen {
		return fmt.Errorf("message attribute name %q is not 1 to %d characters", name, MaxAttributeNameLen)
	}
	low := strings.ToLower(name)
	if strings.HasPrefix(low, "aws.") || strings.HasPrefix(low, "amazon.") {
		return fmt.Errorf("message attribute name %q starts with a reserved prefix (AWS., Amazon.)", name)
	}
	if name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") {
		return fmt.Errorf("message attribute name %q has a period first, last or twice in a row", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("message attribute name %q may hold only letters, digits, underscores, hyphens and periods", name)
		}
	}
	return nil
}
