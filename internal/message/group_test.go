package message

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"
)

func TestGroupID(t *testing.T) {
	t.Parallel()
	punctuation := "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	cases := []struct {
		name, tenant string
		asIs         bool // the group id is the tenant id
	}{
		{"an API tenant id", "acme", true},
		{"a generated tenant id", "tn_01HZX3K5Q7", true},
		{"letters, digits, _ and -, 64 of them", strings.Repeat("aZ9_-", 12) + "abcd", true},
		{"every punctuation SQS takes", "a" + punctuation, true},
		{"128 characters", strings.Repeat("t", 128), true},
		{"129 characters", strings.Repeat("t", 129), false},
		{"the longest outbox tenant id", strings.Repeat("t", 256), false},
		{"a space", "acme corp", false},
		{"a tab", "acme\tcorp", false},
		{"non-ASCII", "café", false},
		{"an astral character", "t\U0001F600", false},
		{"DEL", "t\x7f", false},
		{"the hashed prefix itself", "~sha256:" + strings.Repeat("0", 64), false},
		{"the wait suffix", "acme#wait", false},
	}
	seen := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := GroupID(c.tenant)
			require.NotNil(t, g)
			require.True(t, ValidGroupID(*g), "SQS takes it: %q", *g)
			require.Equal(t, *g, *GroupID(c.tenant), "the same tenant, the same group")
			if c.asIs {
				require.Equal(t, c.tenant, *g)
			} else {
				require.True(t, strings.HasPrefix(*g, "~sha256:"), *g)
				require.Len(t, *g, len("~sha256:")+64)
			}
			if other, dup := seen[*g]; dup {
				t.Fatalf("tenants %q and %q share group %q", other, c.tenant, *g)
			}
			seen[*g] = c.tenant
			w := WaitGroupID(c.tenant)
			require.NotNil(t, w)
			require.True(t, ValidGroupID(*w), "SQS takes the wait group too: %q", *w)
			require.NotEqual(t, *g, *w, "waits are in a group of their own")
			require.True(t, strings.HasSuffix(*w, "#wait"), *w)
			if other, dup := seen[*w]; dup {
				t.Fatalf("tenants %q and %q share group %q", other, c.tenant, *w)
			}
			seen[*w] = c.tenant
		})
	}
	require.Nil(t, GroupID(""), "no tenant, no group")
	require.Nil(t, WaitGroupID(""), "no tenant, no wait group")
	require.Equal(t, "acme#wait", *WaitGroupID("acme"))
	g := GroupID("acme")
	*g = "changed"
	require.Equal(t, "acme", *GroupID("acme"), "each call its own pointer")
}

func TestCheckGroupID(t *testing.T) {
	t.Parallel()
	body := `{"delivery_id":"d","tenant_id":"acme","endpoint_id":"e","event_id":"v","payload":{}}`
	odd := `{"delivery_id":"d","tenant_id":"acme corp","endpoint_id":"e","event_id":"v","payload":{}}`
	cases := []struct {
		name, body string
		group      *string
		refused    string // "" when the message keeps the rule
	}{
		{"its tenant's group", body, GroupID("acme"), ""},
		{"a hashed tenant's group", odd, GroupID("acme corp"), ""},
		{"its tenant's wait group", body, WaitGroupID("acme"), ""},
		{"a hashed tenant's wait group", odd, WaitGroupID("acme corp"), ""},
		{"another tenant's wait group", body, WaitGroupID("globex"), `not its tenant's "acme"`},
		{"no group", body, nil, "without a MessageGroupId"},
		{"another tenant's group", body, GroupID("globex"), `not its tenant's "acme"`},
		{"the endpoint's id", body, aws.String("e"), "not its tenant's"},
		{"the raw id SQS refuses", odd, aws.String("acme corp"), "InvalidParameterValue"},
		{"too long", body, aws.String(strings.Repeat("a", 129)), "InvalidParameterValue"},
		{"empty", body, aws.String(""), "InvalidParameterValue"},
		{"malformed body, a group", `{"delivery_id":`, aws.String("acme"), ""},
		{"malformed body, no group", `{"delivery_id":`, nil, "without a MessageGroupId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckGroupID(c.body, c.group)
			if c.refused == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.refused)
		})
	}
}
