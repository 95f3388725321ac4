package destination

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

// stsSessionName is STS's rule for RoleSessionName (AssumeRole's
// parameter): 2 to 64 of [\w+=,.@-], \w being ASCII letters, digits and
// underscore.
var stsSessionName = regexp.MustCompile(`^[A-Za-z0-9_+=,.@-]{2,64}$`)

func TestSessionName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ endpoint, want string }{
		{"ep_abcdefghij234567", "hookline-ep_abcdefghij234567"},
		{"", SessionNameUnknown},
		{"ep/1:2 é", "hookline-ep-1-2---"},
		{"e", "hookline-e"},
		{strings.Repeat("x", 80), "hookline-" + strings.Repeat("x", 55)},
		{"A+=,.@-_9", "hookline-A+=,.@-_9"},
	} {
		got := SessionName(tc.endpoint)
		require.Equal(t, tc.want, got, "%q", tc.endpoint)
		require.Regexp(t, stsSessionName, got)
	}
	require.Regexp(t, stsSessionName, ProbeSessionName)
}

// Whatever an endpoint id holds, its session name is one STS takes, names
// the endpoint's id when that fits STS's rules, and differs for two ids
// that differ within the name's length.
func FuzzSessionName(f *testing.F) {
	f.Add("ep_abcdefghij234567")
	f.Add("ep/\x00\xff")
	f.Add(strings.Repeat("é", 40))
	f.Fuzz(func(t *testing.T, id string) {
		got := SessionName(id)
		require.Regexp(t, stsSessionName, got)
		if id != "" {
			require.True(t, strings.HasPrefix(got, SessionNamePrefix))
		}
		if id != "" && stsSessionName.MatchString("xx"+id) && len(SessionNamePrefix+id) <= MaxSessionName {
			require.Equal(t, SessionNamePrefix+id, got, "a valid id is kept as it is")
		}
	})
}

// Each endpoint's deliveries are made by a session named for the endpoint,
// what the customer's CloudTrail shows for each call
// (assumed-role/ROLE/hookline-<endpoint id>): two endpoints on one role are
// two sessions, and an id with characters STS refuses still makes a name
// the STS fake (which holds RoleSessionName to STS's rules) takes.
func TestSessionNamedForEndpoint(t *testing.T) {
	w := newWorld(t)
	sentAs := func(endpoint string) string {
		t.Helper()
		r := request(t, domain.TypeSQS)
		r.Destination.EndpointID = endpoint
		res := w.send(t, r)
		require.Equal(t, sender.Delivered, res.Outcome, "%+v", res)
		reqs := w.srv.Requests()
		last := reqs[len(reqs)-1]
		require.Equal(t, "sqs", last.Service)
		arn, ok := w.sts.AssumedRoleARN(last.AccessKey)
		require.True(t, ok)
		return arn
	}
	const session = "arn:aws:sts::222222222222:assumed-role/hookline-delivery/"
	require.Equal(t, session+"hookline-ep_abcdefghij234567", sentAs("ep_abcdefghij234567"))
	require.Equal(t, session+"hookline-ep_bbbbbbbbbb234567", sentAs("ep_bbbbbbbbbb234567"), "another endpoint on the same role: a session of its own")
	require.Equal(t, session+"hookline-ep_abcdefghij234567", sentAs("ep_abcdefghij234567"), "the first endpoint's session, reused")
	require.Equal(t, 3, w.sts.Calls(), "the role's probe, then one session per endpoint")
	require.Equal(t, session+"hookline-ep-x-"+strings.Repeat("y", 50), sentAs("ep/x:"+strings.Repeat("y", 70)))
}
