package destination

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

type posterFunc func(sender.Request) sender.Result

func (f posterFunc) Send(_ context.Context, r sender.Request) sender.Result { return f(r) }

func TestRouter(t *testing.T) {
	http := posterFunc(func(sender.Request) sender.Result { return sender.Result{Error: "http"} })
	aws := posterFunc(func(sender.Request) sender.Result { return sender.Result{Error: "aws"} })
	r := Router{HTTP: http, AWS: aws}
	require.Equal(t, "http", r.Send(context.Background(), sender.Request{URL: "https://x"}).Error)
	require.Equal(t, "aws", r.Send(context.Background(), sender.Request{Destination: &sender.Destination{Type: domain.TypeSQS}}).Error)
	res := Router{HTTP: http}.Send(context.Background(), sender.Request{Destination: &sender.Destination{Type: domain.TypeSQS}})
	require.Equal(t, sender.Dead, res.Outcome)
	require.Equal(t, domain.ReasonInvalidDestination, res.Reason)
}
