package fnenv

import (
	"net/netip"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/retry"
	"github.com/stretchr/testify/require"
)

// What functions/api read and refused before the contract, it reads and
// refuses the same, with the same errors.
func TestLoadAPI(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_OPERATOR_KEY_SECRET_ARN": "arn:secret", "HOOKLINE_SECRETS_KEY_ARN": "arn:key"}
	get := func(over map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return env[k]
		}
	}
	c, err := LoadAPI(get(nil))
	require.NoError(t, err)
	require.False(t, c.URLs.AllowHTTP, "https only by default")
	require.Empty(t, c.URLs.Guard.Allow)
	require.Equal(t, "arn:key", c.SecretsKeyARN)
	require.Equal(t, 15*24*time.Hour, c.PayloadRetention)
	require.Equal(t, 15*24*time.Hour, c.Retention(), "the records' default retention")
	require.False(t, c.OperatorIAM, "the operator key by default")
	require.Equal(t, 15*time.Second, c.Endpoints.MaxRequestTimeout, "an endpoint's timeout: the stack's request timeout at most, by default")
	require.Equal(t, 8, c.Endpoints.Retry.Attempts(), "the default schedule's attempts")
	require.Equal(t, domain.DefaultMaxEndpoints, c.Endpoints.MaxEndpoints, "the tenant caps' defaults")
	require.Equal(t, domain.DefaultMaxEndpointBytes, c.Endpoints.MaxEndpointBytes)
	require.Equal(t, domain.DefaultMaxMetricsEventTypes, c.Endpoints.MaxMetricsEventTypes)
	for k, v := range map[string]string{"HOOKLINE_MAX_ENDPOINTS": "0", "HOOKLINE_MAX_ENDPOINT_BYTES": "4096", "HOOKLINE_MAX_METRICS_EVENT_TYPES": "many"} {
		_, err := LoadAPI(get(map[string]string{k: v}))
		require.ErrorContains(t, err, k, "a cap below its least is refused, naming it")
	}
	c, err = LoadAPI(get(map[string]string{"HOOKLINE_DELIVERY_RETENTION": "720h"}))
	require.NoError(t, err)
	require.Equal(t, 720*time.Hour, c.Retention())
	require.Empty(t, c.OutboxTable, "no outbox table: the event routes answer 503")

	c, err = LoadAPI(get(map[string]string{"HOOKLINE_ALLOW_HTTP": "true", "HOOKLINE_ALLOW_CIDRS": "127.0.0.0/8"}))
	require.NoError(t, err)
	require.True(t, c.URLs.AllowHTTP)
	require.Len(t, c.URLs.Guard.Allow, 1)

	for name, tc := range map[string]struct {
		over map[string]string
		want string
	}{
		"no table":                  {map[string]string{"HOOKLINE_STATE_TABLE": ""}, "HOOKLINE_STATE_TABLE"},
		"no operator key":           {map[string]string{"HOOKLINE_OPERATOR_KEY_SECRET_ARN": ""}, "HOOKLINE_OPERATOR_KEY"},
		"no secrets key":            {map[string]string{"HOOKLINE_SECRETS_KEY_ARN": ""}, "HOOKLINE_SECRETS_KEY_ARN is required"},
		"bad allow http":            {map[string]string{"HOOKLINE_ALLOW_HTTP": "sometimes"}, "HOOKLINE_ALLOW_HTTP"},
		"bad cidrs":                 {map[string]string{"HOOKLINE_ALLOW_CIDRS": "nope"}, "HOOKLINE_ALLOW_CIDRS"},
		"bad retention":             {map[string]string{"HOOKLINE_PAYLOAD_RETENTION": "-1h"}, "HOOKLINE_PAYLOAD_RETENTION"},
		"short records":             {map[string]string{"HOOKLINE_DELIVERY_RETENTION": "1h"}, "HOOKLINE_DELIVERY_RETENTION"},
		"bad records":               {map[string]string{"HOOKLINE_DELIVERY_RETENTION": "long"}, "HOOKLINE_DELIVERY_RETENTION"},
		"short max request timeout": {map[string]string{"HOOKLINE_MAX_REQUEST_TIMEOUT": "500ms"}, `HOOKLINE_MAX_REQUEST_TIMEOUT: "500ms" is not a duration of at least 1s`},
		"bad retry schedule":        {map[string]string{"HOOKLINE_RETRY_SCHEDULE": "0s,13h"}, "HOOKLINE_RETRY_SCHEDULE"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadAPI(get(tc.over))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// What functions/deliver read and refused before the contract, it reads and
// refuses the same, with the same errors.
func TestLoadDeliver(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_DELIVERY_QUEUE_URL": "https://q", "HOOKLINE_DLQ_URL": "https://dlq",
		"HOOKLINE_SECRETS_KEY_ARN": "arn:aws:kms:us-east-1:000000000000:key/k",
	}
	with := func(k, v string) func(string) string {
		return func(name string) string {
			if name == k {
				return v
			}
			return base[name]
		}
	}
	c, err := LoadDeliver(with("", ""))
	require.NoError(t, err)
	require.Equal(t, 15*time.Second, c.RequestTimeout)
	require.Equal(t, 50, c.DisableAfter)
	require.Equal(t, 10, c.FailingAfter)
	require.Equal(t, 5*time.Minute, c.Notices.DeadNoticeWindow)
	require.Empty(t, c.Notices.OutboxTable, "no outbox table: no operational events")
	require.Empty(t, c.LaneQueueURL, "no lane variable: no lane, and not required")
	require.Equal(t, 8, c.Retry.Attempts())
	require.Empty(t, c.Guard.Allow)
	require.Equal(t, "arn:aws:kms:us-east-1:000000000000:key/k", c.SecretsKeyARN)
	require.Equal(t, domain.DefaultDisableAfterFor, c.DisableAfterFor)
	require.Equal(t, domain.Breaker{Cooldown: domain.DefaultBreakerCooldown, MaxCooldown: domain.DefaultBreakerMaxCooldown}, c.Breaker)
	require.Equal(t, domain.DefaultEndpointConcurrency, c.EndpointConcurrency)
	require.Equal(t, domain.DefaultTenantConcurrency, c.TenantConcurrency)
	require.Equal(t, 25, c.FastConcurrency)
	require.Equal(t, 10*time.Second, c.StatsFlushEvery)
	c, err = LoadDeliver(with("HOOKLINE_STATS_FLUSH_EVERY", "0s"))
	require.NoError(t, err)
	require.Zero(t, c.StatsFlushEvery, "every batch's counters at its end")

	require.Equal(t, 11*time.Hour+57*time.Minute, c.Retry.LongestDelay(), "the default 2 min queue visibility timeout")

	c, err = LoadDeliver(with("HOOKLINE_QUEUE_VISIBILITY_TIMEOUT", "90m"))
	require.NoError(t, err)
	require.Equal(t, 10*time.Hour+29*time.Minute, c.Retry.LongestDelay(), "the queue's visibility timeout shortens the longest delay")

	c, err = LoadDeliver(with("HOOKLINE_ALLOW_CIDRS", "127.0.0.0/8, ::1/128"))
	require.NoError(t, err)
	require.Len(t, c.Guard.Allow, 2)

	c, err = LoadDeliver(with("HOOKLINE_BREAKER_COOLDOWN", "12m"))
	require.NoError(t, err)
	require.Equal(t, domain.Breaker{Cooldown: 12 * time.Minute, MaxCooldown: 12 * time.Minute}, c.Breaker, "a cooldown above the default maximum raises the maximum, as domain.Breaker does")
	c, err = LoadDeliver(with("HOOKLINE_BREAKER_MAX_COOLDOWN", "15m"))
	require.NoError(t, err)
	require.Equal(t, 15*time.Minute, c.Breaker.MaxCooldown, "the longest SQS delay")

	for name, tc := range map[string]struct{ key, value, want string }{
		"no table":               {"HOOKLINE_STATE_TABLE", "", "HOOKLINE_STATE_TABLE is required"},
		"no dlq":                 {"HOOKLINE_DLQ_URL", "", "HOOKLINE_DLQ_URL is required"},
		"no key":                 {"HOOKLINE_SECRETS_KEY_ARN", "", "HOOKLINE_SECRETS_KEY_ARN is required"},
		"bad timeout":            {"HOOKLINE_REQUEST_TIMEOUT", "soon", "HOOKLINE_REQUEST_TIMEOUT"},
		"zero timeout":           {"HOOKLINE_REQUEST_TIMEOUT", "0s", "positive"},
		"bad schedule":           {"HOOKLINE_RETRY_SCHEDULE", "0s,24h", "exceeds 12h"},
		"bad queue visibility":   {"HOOKLINE_QUEUE_VISIBILITY_TIMEOUT", "12h", "leaves no delay"},
		"bad cidr":               {"HOOKLINE_ALLOW_CIDRS", "127.0.0.1", "HOOKLINE_ALLOW_CIDRS"},
		"bad disable":            {"HOOKLINE_DISABLE_AFTER", "many", "HOOKLINE_DISABLE_AFTER"},
		"zero disable":           {"HOOKLINE_DISABLE_AFTER", "0", "non-zero"},
		"bad failing":            {"HOOKLINE_FAILING_AFTER", "soon", "HOOKLINE_FAILING_AFTER"},
		"failing not below":      {"HOOKLINE_FAILING_AFTER", "50", "must be below HOOKLINE_DISABLE_AFTER 50"},
		"window too long":        {"HOOKLINE_DEAD_NOTICE_WINDOW", "16m", "at most 15m"},
		"window zero":            {"HOOKLINE_DEAD_NOTICE_WINDOW", "0s", "HOOKLINE_DEAD_NOTICE_WINDOW"},
		"bad disable for":        {"HOOKLINE_DISABLE_AFTER_FOR", "a week", `HOOKLINE_DISABLE_AFTER_FOR: "a week" is not a positive duration`},
		"zero disable for":       {"HOOKLINE_DISABLE_AFTER_FOR", "0s", "HOOKLINE_DISABLE_AFTER_FOR"},
		"negative disable for":   {"HOOKLINE_DISABLE_AFTER_FOR", "-1h", "positive"},
		"bad cooldown":           {"HOOKLINE_BREAKER_COOLDOWN", "soon", "HOOKLINE_BREAKER_COOLDOWN"},
		"zero cooldown":          {"HOOKLINE_BREAKER_COOLDOWN", "0s", "HOOKLINE_BREAKER_COOLDOWN"},
		"cooldown too long":      {"HOOKLINE_BREAKER_COOLDOWN", "16m", "at most 15m0s (SQS delays a message at most 900 s)"},
		"bad max cooldown":       {"HOOKLINE_BREAKER_MAX_COOLDOWN", "-1m", "HOOKLINE_BREAKER_MAX_COOLDOWN"},
		"max cooldown too long":  {"HOOKLINE_BREAKER_MAX_COOLDOWN", "901s", `HOOKLINE_BREAKER_MAX_COOLDOWN: "901s" is not a duration above 0 and at most 15m0s`},
		"max below cooldown":     {"HOOKLINE_BREAKER_MAX_COOLDOWN", "5s", "HOOKLINE_BREAKER_MAX_COOLDOWN 5s must be at least HOOKLINE_BREAKER_COOLDOWN 10s"},
		"bad concurrency":        {"HOOKLINE_ENDPOINT_CONCURRENCY", "few", "HOOKLINE_ENDPOINT_CONCURRENCY"},
		"zero concurrency":       {"HOOKLINE_ENDPOINT_CONCURRENCY", "0", "at least 1"},
		"concurrency above fast": {"HOOKLINE_ENDPOINT_CONCURRENCY", "26", "HOOKLINE_ENDPOINT_FAST_CONCURRENCY 25 must be at least HOOKLINE_ENDPOINT_CONCURRENCY 26"},
		"bad fast":               {"HOOKLINE_ENDPOINT_FAST_CONCURRENCY", "many", "HOOKLINE_ENDPOINT_FAST_CONCURRENCY"},
		"fast too high":          {"HOOKLINE_ENDPOINT_FAST_CONCURRENCY", "101", "from 1 to 100"},
		"fast below slow":        {"HOOKLINE_ENDPOINT_FAST_CONCURRENCY", "2", "HOOKLINE_ENDPOINT_FAST_CONCURRENCY 2 must be at least HOOKLINE_ENDPOINT_CONCURRENCY 3"},
		"bad tenant share":       {"HOOKLINE_TENANT_CONCURRENCY", "some", "HOOKLINE_TENANT_CONCURRENCY"},
		"zero tenant share":      {"HOOKLINE_TENANT_CONCURRENCY", "0", "at least 1"},
		"tenant share over pool": {"HOOKLINE_TENANT_CONCURRENCY", "26", "HOOKLINE_TENANT_CONCURRENCY 26 must be at most HOOKLINE_ENDPOINT_FAST_CONCURRENCY 25"},
		"bad stats flush":        {"HOOKLINE_STATS_FLUSH_EVERY", "often", "HOOKLINE_STATS_FLUSH_EVERY"},
		"stats flush too long":   {"HOOKLINE_STATS_FLUSH_EVERY", "6m", "from 0 to 5m0s"},
		"negative stats flush":   {"HOOKLINE_STATS_FLUSH_EVERY", "-1s", "from 0 to 5m0s"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadDeliver(with(tc.key, tc.value))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// What functions/enqueue read and refused before the contract, it reads and
// refuses the same, with the same errors.
func TestLoadEnqueue(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_DELIVERY_QUEUE_URL": "https://q", "HOOKLINE_EVENT_BUS": "ops-bus"}
	c, err := LoadEnqueue(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "state", c.StateTable)
	require.Equal(t, "https://q", c.QueueURL)
	require.Equal(t, "ops-bus", c.EventBus)
	for _, missing := range []string{"HOOKLINE_STATE_TABLE", "HOOKLINE_DELIVERY_QUEUE_URL", "HOOKLINE_EVENT_BUS"} {
		_, err := LoadEnqueue(func(k string) string {
			if k == missing {
				return ""
			}
			return env[k]
		})
		require.ErrorContains(t, err, missing+" is required")
	}
	require.Zero(t, c.SendConcurrency, "unset: the handler's default")
	require.Empty(t, c.LaneQueueURL, "unset: no lane, and not required")
	require.Zero(t, c.LaneAfter, "unset: the handler's default")
	require.Empty(t, c.FanOutQueueURL, "unset: no deferral, and not required")
}

// The lane threshold is a whole number of at least 1; anything else is
// refused with the variable's name.
func TestLoadEnqueueLaneAfter(t *testing.T) {
	t.Parallel()
	with := func(v string) func(string) string {
		env := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_DELIVERY_QUEUE_URL": "https://q", "HOOKLINE_EVENT_BUS": "ops-bus",
			"HOOKLINE_LANE_QUEUE_URL": "https://lane", "HOOKLINE_LANE_AFTER": v}
		return func(k string) string { return env[k] }
	}
	for v, want := range map[string]int{"1": 1, "100": 100, "5000": 5000} {
		c, err := LoadEnqueue(with(v))
		require.NoError(t, err)
		require.Equal(t, want, c.LaneAfter)
		require.Equal(t, "https://lane", c.LaneQueueURL)
	}
	for _, v := range []string{"0", "-1", "1.5", "many"} {
		_, err := LoadEnqueue(with(v))
		require.ErrorContains(t, err, "HOOKLINE_LANE_AFTER: \""+v+"\" is not a whole number of at least 1")
	}
}

// The send concurrency is 1 to MaxSendConcurrency; anything else is refused
// with the variable's name.
func TestLoadEnqueueSendConcurrency(t *testing.T) {
	t.Parallel()
	with := func(v string) func(string) string {
		env := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_DELIVERY_QUEUE_URL": "https://q", "HOOKLINE_EVENT_BUS": "ops-bus",
			"HOOKLINE_ENQUEUE_SEND_CONCURRENCY": v}
		return func(k string) string { return env[k] }
	}
	for _, v := range []string{"1", "10"} {
		c, err := LoadEnqueue(with(v))
		require.NoError(t, err)
		require.Equal(t, map[string]int{"1": 1, "10": 10}[v], c.SendConcurrency)
	}
	for _, v := range []string{"0", "11", "-1", "few"} {
		_, err := LoadEnqueue(with(v))
		require.ErrorContains(t, err, "HOOKLINE_ENQUEUE_SEND_CONCURRENCY: \""+v+"\" is not a whole number from 1 to 10")
	}
}

// What functions/replay read and refused before the contract, it reads and
// refuses the same, with the same errors.
func TestLoadReplay(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOOKLINE_STATE_TABLE": "s", "HOOKLINE_DELIVERY_QUEUE_URL": "q", "HOOKLINE_DLQ_URL": "d", "HOOKLINE_DLQ_ARRIVALS_URL": "a", "HOOKLINE_REPLAY_QUEUE_URL": "j"}
	get := func(k, v string) func(string) string {
		return func(name string) string {
			if name == k {
				return v
			}
			return env[name]
		}
	}
	c, err := LoadReplay(get("", ""))
	require.NoError(t, err)
	require.EqualValues(t, 10, c.Rate)
	require.Empty(t, c.OpsQueueURL)
	c, err = LoadReplay(get("HOOKLINE_REPLAY_OPS_QUEUE_URL", "o"))
	require.NoError(t, err)
	require.Equal(t, "o", c.OpsQueueURL)
	c, err = LoadReplay(get("HOOKLINE_REPLAY_RATE", "2.5"))
	require.NoError(t, err)
	require.EqualValues(t, 2.5, c.Rate)
	for _, tc := range []struct{ k, v, want string }{
		{"HOOKLINE_REPLAY_QUEUE_URL", "", "HOOKLINE_REPLAY_QUEUE_URL is required"},
		{"HOOKLINE_DLQ_URL", "", "HOOKLINE_DLQ_URL is required"},
		{"HOOKLINE_DLQ_ARRIVALS_URL", "", "HOOKLINE_DLQ_ARRIVALS_URL is required"},
		{"HOOKLINE_REPLAY_RATE", "fast", "HOOKLINE_REPLAY_RATE"},
		{"HOOKLINE_REPLAY_RATE", "0", "HOOKLINE_REPLAY_RATE"},
	} {
		_, err := LoadReplay(get(tc.k, tc.v))
		require.ErrorContains(t, err, tc.want)
	}
}

// lookup reads vars as the environment.
func lookup(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// What infra sets with Vars, the function reads back with Load: the same
// struct, every field. A variable renamed on one side only fails here.
func TestVarsRoundTrip(t *testing.T) {
	t.Parallel()
	common := Common{StateTable: "state", LogLevel: "DEBUG"}
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	policy := retry.Policy{Schedule: []time.Duration{0, time.Second, 4 * time.Second}, Jitter: 0.1, Mode: retry.JitterFull, MaxAge: time.Hour, VisibilityTimeout: time.Minute}
	wantPolicy, err := retry.FromEnv(lookup(policy.Env()))
	require.NoError(t, err)

	t.Run("enqueue", func(t *testing.T) {
		for _, e := range []EnqueueEnv{
			{Common: common, QueueURL: "https://q", EventBus: "ops-bus", Faults: fault.Rates{}},
			{Common: common, QueueURL: "https://q", EventBus: "arn:aws:events:us-east-1:000000000000:event-bus/ops", FailureQueueURL: "https://failures", Faults: fault.Rates{fault.EnqueueFail: 0.05}},
			{Common: common, QueueURL: "https://q", EventBus: "ops-bus", SendConcurrency: 7, Faults: fault.Rates{}},
			{Common: common, QueueURL: "https://q", EventBus: "ops-bus", LaneQueueURL: "https://lane", LaneAfter: 40, Faults: fault.Rates{}},
			{Common: common, QueueURL: "https://q", EventBus: "ops-bus", LaneQueueURL: "https://lane", FanOutQueueURL: "https://fanout", Faults: fault.Rates{}},
			{Common: common, QueueURL: "https://q", EventBus: "ops-bus", MessageLog: true, Faults: fault.Rates{}},
			{Common: common, QueueURL: "https://q", EventBus: "ops-bus", EventTypes: "event-types.json", Faults: fault.Rates{}},
		} {
			got, err := LoadEnqueue(lookup(e.Vars()))
			require.NoError(t, err)
			require.Equal(t, e, got)
		}
	})
	t.Run("deliver", func(t *testing.T) {
		e := DeliverEnv{
			Common: common, QueueURL: "https://q", LaneQueueURL: "https://lane", DLQURL: "https://dlq", SecretsKeyARN: "arn:key",
			Retry: policy, RequestTimeout: 7 * time.Second, Guard: netguard.Guard{Allow: allow}, DisableAfter: -1, FailingAfter: 3,
			DisableAfterFor: 30 * time.Second, Breaker: domain.Breaker{Cooldown: time.Second, MaxCooldown: 4 * time.Second},
			EndpointConcurrency: 2, FastConcurrency: 7, TenantConcurrency: 5,
			Notices:     Notices{OutboxTable: "outbox", OpsQueueURL: "https://ops", DeadNoticeWindow: 5 * time.Second},
			Faults:      fault.Rates{fault.DeliverCrash: 0.01, fault.EnqueueFail: 0.05},
			NoRoleProbe: true, OwnResources: []string{"arn:aws:sqs:eu-west-1:111122223333:q", "arn:aws:events:eu-west-1:111122223333:event-bus/b"},
		}
		got, err := LoadDeliver(lookup(e.Vars()))
		require.NoError(t, err)
		want := e
		want.Retry = wantPolicy
		require.Equal(t, want, got)
	})
	t.Run("api", func(t *testing.T) {
		// The stack's policy, its defaults filled in as the stack renders it.
		stackLimits := EndpointLimits{Retry: mustPolicy(t, retry.Policy{}), MaxRequestTimeout: DefaultRequestTimeout,
			MaxEndpoints: domain.DefaultMaxEndpoints, MaxEndpointBytes: domain.DefaultMaxEndpointBytes, MaxMetricsEventTypes: domain.DefaultMaxMetricsEventTypes}
		for _, e := range []APIEnv{
			{Common: common, OperatorKeySecretARN: "arn:secret", SecretsKeyARN: "arn:key", URLs: netguard.URLPolicy{AllowHTTP: true, Guard: netguard.Guard{Allow: allow}},
				ReplayQueueURL: "https://jobs", ReplayOpsQueueURL: "https://ops", OutboxTable: "outbox", MessageLog: true, PayloadRetention: 72 * time.Hour, DeliveryQueueURL: "https://delivery",
				ConsoleFrameAncestors: []string{"'self'", "https://app.example.com"}, AlarmNamePrefix: "Hookline-", PortalMinTTL: time.Second, OperatorIAM: true,
				TenantExpensiveRate: -1, ExpensiveBudget: 5 * time.Second, Mail: Mail{From: "alerts@hookline.example"},
				Destinations: Destinations{Partition: "aws-cn", Account: "111122223333", StackName: "Hookline", Regions: []string{"cn-north-1", "cn-northwest-1"},
					Roles: []string{"arn:aws-cn:iam::*:role/hookline-*", "arn:aws-cn:iam::444455556666:role/x?"}, OwnResources: []string{"arn:aws-cn:events:cn-north-1:111122223333:event-bus/Ops", "arn:aws-cn:iam::111122223333:role/Hookline-Deliver"}, OwnAccount: true}, Endpoints: EndpointLimits{Retry: wantPolicy, MaxRequestTimeout: 40 * time.Second, MaxEndpoints: 7, MaxEndpointBytes: 9000, MaxMetricsEventTypes: 3}},
			{Common: common, OperatorKey: "op", SecretsKeyARN: "arn:key", OutboxTable: "outbox", PayloadRetention: DefaultPayloadRetention, PortalMinTTL: DefaultPortalMinTTL, TenantExpensiveRate: DefaultTenantExpensiveRate, ExpensiveBudget: DefaultExpensiveBudget, Endpoints: stackLimits},
			{Common: common, OperatorKey: "op", SecretsKeyARN: "arn:key", OutboxTable: "outbox", MessageLog: true, MessageLogSharded: true, PayloadRetention: DefaultPayloadRetention, PortalMinTTL: DefaultPortalMinTTL, TenantExpensiveRate: DefaultTenantExpensiveRate, ExpensiveBudget: DefaultExpensiveBudget, Endpoints: stackLimits},
			{Common: common, OperatorKey: "op", SecretsKeyARN: "arn:key", PayloadRetention: DefaultPayloadRetention, PortalMinTTL: DefaultPortalMinTTL, TenantExpensiveRate: DefaultTenantExpensiveRate, ExpensiveBudget: DefaultExpensiveBudget, Endpoints: stackLimits},
			{Common: common, OperatorKey: "op", SecretsKeyARN: "arn:key", EventTypes: "event-types.json", PayloadRetention: DefaultPayloadRetention, PortalMinTTL: DefaultPortalMinTTL, TenantExpensiveRate: DefaultTenantExpensiveRate, ExpensiveBudget: DefaultExpensiveBudget, Endpoints: stackLimits},
		} {
			got, err := LoadAPI(lookup(e.Vars()))
			require.NoError(t, err)
			require.Equal(t, e, got)
		}
	})
	t.Run("replay", func(t *testing.T) {
		e := ReplayEnv{Common: common, DeliveryQueueURL: "q", DLQURL: "d", ArrivalsURL: "a", JobsQueueURL: "j", OpsQueueURL: "o", Rate: 2.5, OutboxTable: "outbox", MessageLog: true, DeadNoticeWindow: 15 * time.Minute, PayloadRetention: 72 * time.Hour,
			Mail: Mail{From: "alerts@hookline.example", ConfigurationSet: "hookline"}}
		got, err := LoadReplay(lookup(e.Vars()))
		require.NoError(t, err)
		require.Equal(t, e, got)
		e.MessageLogSharded = true
		require.Equal(t, "sharded", e.Vars()["HOOKLINE_MESSAGE_LOG"])
		got, err = LoadReplay(lookup(e.Vars()))
		require.NoError(t, err)
		require.Equal(t, e, got)
	})
}

// A deployment without faults sets no HOOKLINE_FAULTS, nor an operator key
// in plain text when the secret names it.
func TestVarsLeaveOutWhatIsNotAsked(t *testing.T) {
	t.Parallel()
	require.NotContains(t, DeliverEnv{}.Vars(), "HOOKLINE_FAULTS")
	for _, k := range []string{"HOOKLINE_DESTINATION_ROLE_PROBE", "HOOKLINE_OWN_RESOURCES", "HOOKLINE_DISABLE_AFTER_FOR", "HOOKLINE_BREAKER_COOLDOWN", "HOOKLINE_BREAKER_MAX_COOLDOWN", "HOOKLINE_ENDPOINT_CONCURRENCY", "HOOKLINE_ENDPOINT_FAST_CONCURRENCY", "HOOKLINE_TENANT_CONCURRENCY"} {
		require.NotContains(t, DeliverEnv{}.Vars(), k, "a zero field is left to the function's default")
	}
	require.NotContains(t, DeliverEnv{}.Vars(), "HOOKLINE_LANE_QUEUE_URL", "no lane: the variable unset")
	for _, k := range []string{"HOOKLINE_FAULTS", "HOOKLINE_LANE_QUEUE_URL", "HOOKLINE_LANE_AFTER", "HOOKLINE_FANOUT_QUEUE_URL", "HOOKLINE_EVENT_TYPES"} {
		require.NotContains(t, EnqueueEnv{Faults: fault.Rates{}}.Vars(), k)
	}
	require.Equal(t, "enqueue_fail:0.05", EnqueueEnv{Faults: fault.Rates{fault.EnqueueFail: 0.05}}.Vars()["HOOKLINE_FAULTS"])
	require.NotContains(t, APIEnv{OperatorKeySecretARN: "arn:secret"}.Vars(), "HOOKLINE_OPERATOR_KEY")
	require.NotContains(t, APIEnv{OperatorKeySecretARN: "arn:secret"}.Vars(), "HOOKLINE_EVENT_TYPES", "no catalog: no variable")
}

// The catalog's file is a name beside the bootstrap, never a path.
func TestLoadEventTypes(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"../event-types.json", "/etc/passwd", `a\b`, ".."} {
		_, err := loadEventTypes(lookup(map[string]string{"HOOKLINE_EVENT_TYPES": bad}))
		require.ErrorContains(t, err, "HOOKLINE_EVENT_TYPES", bad)
	}
}

// The destination regions default to the function's own; a list is read
// trimmed.
func TestLoadAPIDestinations(t *testing.T) {
	t.Parallel()
	base := map[string]string{varStateTable: "state", varSecretsKeyARN: "arn:key", varOperatorKey: "k", "AWS_REGION": "eu-west-1"}
	e, err := LoadAPI(lookup(base))
	require.NoError(t, err)
	require.Equal(t, Destinations{Regions: []string{"eu-west-1"}}, e.Destinations)
	base[varDestinationRegions] = " eu-west-1, eu-central-1 ,"
	base[varDestinationOwnAccount] = "yes"
	e, err = LoadAPI(lookup(base))
	require.NoError(t, err)
	require.Equal(t, []string{"eu-west-1", "eu-central-1"}, e.Destinations.Regions)
	require.False(t, e.Destinations.OwnAccount, `only "on" turns it on`)
	require.Nil(t, e.Destinations.Roles, "no pattern: none set")
	base[varDestinationRoles] = "arn:aws:iam::*:role/hookline-*, arn:aws:iam::111122223333:role/x"
	e, err = LoadAPI(lookup(base))
	require.NoError(t, err)
	require.Equal(t, []string{"arn:aws:iam::*:role/hookline-*", "arn:aws:iam::111122223333:role/x"}, e.Destinations.Roles)
}

// mustPolicy is p as a function reads it back from its environment.
func mustPolicy(t *testing.T, p retry.Policy) retry.Policy {
	t.Helper()
	got, err := retry.FromEnv(lookup(p.Env()))
	require.NoError(t, err)
	return got
}

// Tracing "xray" sends spans to the daemon Lambda names; off, none, even
// where Lambda sets the address.
func TestTracing(t *testing.T) {
	t.Parallel()
	base := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_DELIVERY_QUEUE_URL": "https://q", "HOOKLINE_EVENT_BUS": "ops-bus", "AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000"}
	c, err := LoadEnqueue(func(k string) string { return base[k] })
	require.NoError(t, err)
	require.False(t, c.XRay)
	require.Empty(t, c.TraceDaemon())
	require.NotContains(t, c.Vars(), "HOOKLINE_TRACING")

	on := EnqueueEnv{Common: Common{StateTable: "state", XRay: true}, QueueURL: "https://q", EventBus: "ops-bus"}
	vars := on.Vars()
	require.Equal(t, "xray", vars["HOOKLINE_TRACING"])
	vars["AWS_XRAY_DAEMON_ADDRESS"] = base["AWS_XRAY_DAEMON_ADDRESS"]
	c, err = LoadEnqueue(lookup(vars))
	require.NoError(t, err)
	require.Equal(t, "169.254.79.129:2000", c.TraceDaemon())
	require.Equal(t, DefaultTracingSampleRate, c.TraceSampleRate(), "no rate set: X-Ray's default rule's")
	require.NotContains(t, vars, "HOOKLINE_TRACING_SAMPLE_RATE")

	on.XRaySampleRate = 1
	vars = on.Vars()
	require.Equal(t, "1", vars["HOOKLINE_TRACING_SAMPLE_RATE"])
	c, err = LoadEnqueue(lookup(vars))
	require.NoError(t, err)
	require.Equal(t, 1.0, c.TraceSampleRate())
	for _, bad := range []string{"0", "-0.1", "1.5", "5%", "NaN"} {
		vars["HOOKLINE_TRACING_SAMPLE_RATE"] = bad
		_, err = LoadEnqueue(lookup(vars))
		require.ErrorContains(t, err, "HOOKLINE_TRACING_SAMPLE_RATE", bad)
	}
}

// The sender of hookline's e-mails is a bare address, or none at all.
func TestLoadMail(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"not an address", "Alerts <alerts@hookline.example>"} {
		_, err := loadMail(lookup(map[string]string{"HOOKLINE_NOTIFY_FROM": bad}))
		require.ErrorContains(t, err, "HOOKLINE_NOTIFY_FROM")
	}
	m, err := loadMail(lookup(map[string]string{}))
	require.NoError(t, err)
	require.Equal(t, Mail{}, m)
	require.NotContains(t, ReplayEnv{}.Vars(), "HOOKLINE_NOTIFY_FROM", "no sender: the variable unset")
}
