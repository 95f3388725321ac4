package message

import (
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

func TestCheckAttributes(t *testing.T) {
	str := func(v string) sqstypes.MessageAttributeValue {
		return sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	ok := map[string]sqstypes.MessageAttributeValue{"webhook-id": str("x"), "hookline.event_id": str("y"), "n": {DataType: aws.String("Number.int"), StringValue: aws.String("1")}}
	require.NoError(t, CheckAttributes(ok))
	for name, want := range map[string]string{
		"": "1 to 256", strings.Repeat("a", 257): "1 to 256", "AWS.x": "reserved", "amazon.y": "reserved",
		".a": "period", "a.": "period", "a..b": "period", "a b": "only letters", "é": "only letters",
	} {
		require.ErrorContains(t, CheckAttributes(map[string]sqstypes.MessageAttributeValue{name: str("v")}), want, name)
	}
	require.ErrorContains(t, CheckAttributes(map[string]sqstypes.MessageAttributeValue{"a": str("")}), "non-empty")
	require.ErrorContains(t, CheckAttributes(map[string]sqstypes.MessageAttributeValue{"a": {DataType: aws.String("Blob"), StringValue: aws.String("v")}}), "not String")
	eleven := map[string]sqstypes.MessageAttributeValue{}
	for i := range 11 {
		eleven["a"+strconv.Itoa(i)] = str("v")
	}
	require.ErrorContains(t, CheckAttributes(eleven), "at most 10")
}
