package store

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"
)

// url is a reserved word in DynamoDB expressions: an update that names it
// bare is refused (a PATCH of an endpoint's url answered 500). Every field,
// set or cleared, goes by an alias.
func TestUpdateEndpointNamesEveryAttributeByAnAlias(t *testing.T) {
	db := newFakeDB()
	s := newTestStore(db)
	url, desc, empty := "https://hooks.example.com/new", "d", ""
	types, headers := []string{"a.b"}, map[string]string{"X-A": "1"}
	for name, c := range map[string]EndpointChange{
		"set all":   {URL: &url, Description: &desc, EventTypes: &types, Headers: &headers},
		"clear all": {Description: &empty, EventTypes: &[]string{}, Headers: &map[string]string{}},
		"url only":  {URL: &url},
		"nothing":   {}, // DynamoDB refuses an empty ExpressionAttributeNames
	} {
		_, err := s.UpdateEndpoint(context.Background(), "t1", "ep_1", c)
		require.NoError(t, err, name)
	}
	require.Len(t, db.updates, 4)
	for _, up := range db.updates {
		for alias, attr := range up.ExpressionAttributeNames {
			require.Contains(t, aws.ToString(up.UpdateExpression), alias, attr)
		}
	}
}
