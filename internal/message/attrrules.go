package message

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// MaxAttributes is the most message attributes one SQS message (or SNS
// message) carries.
const MaxAttributes = 10

// MaxAttributeNameLen is the longest message attribute name.
const MaxAttributeNameLen = 256

// CheckAttributeName holds a message attribute's name to SQS's and SNS's
// rules: 1 to 256 of letters, digits, underscore, hyphen and period; no
// period first or last, no two in a row; not starting with "AWS." or
// "Amazon." (any case), which AWS reserves.
func CheckAttributeName(name string) error {
	if name == "" || len(name) > MaxAttributeNameLen {
		return fmt.Errorf("InvalidParameterValue: message attribute name %q is not 1 to %d characters", name, MaxAttributeNameLen)
	}
	low := strings.ToLower(name)
	if strings.HasPrefix(low, "aws.") || strings.HasPrefix(low, "amazon.") {
		return fmt.Errorf("InvalidParameterValue: message attribute name %q starts with a reserved prefix (AWS., Amazon.)", name)
	}
	if name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") {
		return fmt.Errorf("InvalidParameterValue: message attribute name %q has a period first, last or twice in a row", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("InvalidParameterValue: message attribute name %q may hold only letters, digits, underscores, hyphens and periods", name)
		}
	}
	return nil
}

// CheckAttributes holds a message's attributes to SQS's rules: at most
// MaxAttributes, each name valid (CheckAttributeName), each a String,
// Number or Binary type (with an optional ".custom" suffix) with a
// non-empty value.
func CheckAttributes(attrs map[string]sqstypes.MessageAttributeValue) error {
	if len(attrs) > MaxAttributes {
		return fmt.Errorf("InvalidParameterValue: %d message attributes, at most %d", len(attrs), MaxAttributes)
	}
	for name, v := range attrs {
		if err := CheckAttributeName(name); err != nil {
			return err
		}
		typ, _, _ := strings.Cut(aws.ToString(v.DataType), ".")
		switch {
		case typ != "String" && typ != "Number" && typ != "Binary":
			return fmt.Errorf("InvalidParameterValue: message attribute %q has type %q, not String, Number or Binary", name, aws.ToString(v.DataType))
		case typ == "Binary" && len(v.BinaryValue) == 0, typ != "Binary" && aws.ToString(v.StringValue) == "":
			return fmt.Errorf("InvalidParameterValue: message attribute %q must contain a non-empty value of type %s", name, typ)
		}
	}
	return nil
}
