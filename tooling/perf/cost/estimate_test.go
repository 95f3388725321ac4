package cost

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// roundPrices are made-up prices that keep the hand arithmetic short.
var roundPrices = Prices{
	LambdaArmGBSecond: Price{USD: 0.00001},
	LambdaRequests:    Price{USD: 0.20},
	SQSRequests:       Price{USD: 0.40},
	DynamoDBWrites:    Price{USD: 1},
	DynamoDBReads:     Price{USD: 0.5},
	DynamoDBStorage:   Price{USD: 0.25},
	DynamoDBBackup:    Price{USD: 0.20},
	LogsIngestion:     Price{USD: 0.50},
	DataTransferOut:   Price{USD: 0.10},
	KMSRequests:       Price{USD: 3},
}

// gbPerMillion is the per-delivery byte count that makes 1 GB (2^30 bytes)
// per million deliveries.
const gbPerMillion = float64(1<<30) / 1e6

func TestEstimateByHand(t *testing.T) {
	t.Parallel()
	in := Inputs{
		Enqueue:                  Function{InvocationsPerDelivery: 0.1, DurationMS: 29.2, MemoryMB: 512},
		Deliver:                  Function{InvocationsPerDelivery: 0.2, DurationMS: 20, MemoryMB: 1024},
		ReceiverLatencyMS:        79.5,
		SQS:                      []Op{{Name: "send", PerDelivery: 1, Units: 1}, {Name: "big", PerDelivery: 0.5, Units: 2}},
		DynamoDBWrites:           []Op{{Name: "put", PerDelivery: 1, Units: 2}, {Name: "update", PerDelivery: 2, Units: 1.5}},
		DynamoDBReads:            []Op{{Name: "get", PerDelivery: 4, Units: 0.5}},
		KMS:                      []Op{{Name: "decrypt", PerDelivery: 0.1, Units: 1}},
		StoredBytesPerDelivery:   gbPerMillion,
		BackedUpBytesPerDelivery: gbPerMillion / 2,
		StoredMonths:             2,
		LogBytesPerDelivery:      2 * gbPerMillion,
		EgressBytesPerDelivery:   gbPerMillion,
		ProducerOutboxWRU:        2,
	}
	b := Estimate(roundPrices, in)

	// Lambda requests: (0.1 + 0.2) × 1e6 = 300,000 × $0.20/1M = $0.06.
	require.InDelta(t, 0.06, b.LambdaRequests, 1e-9)
	// Enqueue: 29.2 ms is billed 30 ms; 100,000 invocations × 0.030 s ×
	// 0.5 GB = 1,500 GB-s × $0.00001 = $0.015.
	require.InDelta(t, 0.015, b.LambdaEnqueue, 1e-9)
	// Deliver: 20 + 79.5 = 99.5 ms, billed 100 ms; 200,000 × 0.1 s × 1 GB
	// = 20,000 GB-s × $0.00001 = $0.20.
	require.InDelta(t, 0.20, b.LambdaDeliver, 1e-9)
	// SQS: 1×1 + 0.5×2 = 2 requests per delivery × $0.40 = $0.80.
	require.InDelta(t, 0.80, b.SQS, 1e-9)
	// Writes: 1×2 + 2×1.5 = 5 WRU × $1 = $5. Reads: 4×0.5 = 2 RRU × $0.5 = $1.
	require.InDelta(t, 5.0, b.DynamoDBWrites, 1e-9)
	require.InDelta(t, 1.0, b.DynamoDBReads, 1e-9)
	// KMS: 0.1 Decrypt per delivery × $3 per million = $0.30.
	require.InDelta(t, 0.30, b.KMS, 1e-9)
	// Storage: 1 GB × 2 months × $0.25 = $0.50; PITR: 0.5 GB × 2 × $0.20 =
	// $0.20; together $0.70.
	require.InDelta(t, 0.70, b.DynamoDBStorage, 1e-9)
	// Logs: 2 GB × $0.50 = $1. Transfer: 1 GB × $0.10 = $0.10.
	require.InDelta(t, 1.0, b.Logs, 1e-9)
	require.InDelta(t, 0.10, b.DataTransfer, 1e-9)
	// Total: 0.06 + 0.015 + 0.20 + 0.80 + 5 + 1 + 0.30 + 0.70 + 1 + 0.10 = 9.175.
	require.InDelta(t, 9.175, b.Total, 1e-9)
	// The producer's 2 WRU × $1 = $2, outside the total.
	require.InDelta(t, 2.0, b.ProducerOutbox, 1e-9)

	// Ops, most expensive first: update $3, put $2, get $1, then the two
	// $0.40 SQS kinds in their input order, then decrypt $0.30.
	var names []string
	for _, op := range b.Ops {
		names = append(names, op.Name)
	}
	require.Equal(t, []string{"update", "put", "get", "send", "big", "decrypt"}, names)
	require.InDelta(t, 3.0, b.Ops[0].USD, 1e-9)
	require.InDelta(t, 3.0, b.Ops[0].Units, 1e-9)
}

func TestLambdaDurationRoundsUpToAMillisecond(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ms, billed float64
	}{
		{30, 30},
		{30.0001, 31},
		{0.2, 1},
	} {
		t.Run(fmt.Sprint(tc.ms), func(t *testing.T) {
			// One invocation per delivery at 1024 MB and $0.00001 per GB-s:
			// 1e6 × billed/1000 s × 1 GB × $0.00001 = billed × $0.01.
			b := Estimate(roundPrices, Inputs{Enqueue: Function{InvocationsPerDelivery: 1, DurationMS: tc.ms, MemoryMB: 1024}})
			require.InDelta(t, tc.billed*0.01, b.LambdaEnqueue, 1e-9)
		})
	}
}

func TestInitialByHand(t *testing.T) {
	t.Parallel()
	in := Initial()
	sum := func(ops []Op) float64 {
		s := 0.0
		for _, op := range ops {
			s += op.PerDelivery * op.Units
		}
		return s
	}
	// SQS: 1/10 send (ten records' messages a request) + 1.05/10 receives
	// + 1.05/10 deletes + 0.05 retries sent again (a SendMessageBatch
	// each at worst, where each was a ChangeMessageVisibility) + 0.001
	// deaths sent to the DLQ + the DLQ sweep's receives of them, 0.001 ×
	// 14 daily passes / 10 = 0.0014 → 0.3624 requests (0.36 without
	// deaths; 0.7642 when every 5-minute pass received them).
	require.InDelta(t, 0.3624, sum(in.SQS), 1e-9)
	// Writes: 0.95 first attempts delivered, packed: a batch holds 10 ×
	// 0.95 / 1.05 = 9.05 of them, one outcome page of 9.05 × 65 + 210
	// bytes, 1 unit, 0.105 pages a delivery = 0.105; the 0.05 failed first
	// attempts and the 0.05 successes after them a record write each, 0.1;
	// the rest as below, and a death 6.2 beyond a success's = 0.3572 WRU
	// (1.2012 while each first attempt delivered wrote its record).
	require.InDelta(t, 0.3572, sum(in.DynamoDBWrites), 1e-9)
	// Before the pages: no create (enqueue writes none), 1.05 attempts × 1 (the
	// first creates the record; no delivery log index entry since records
	// are listed by their key, 1.05 more before), 0.05 × 0.5 failure-count writes (a batch's count and reset
	// to an endpoint in one, none for a failure a success of its batch
	// follows; 2 while they were two), 1.05/100 endpoint counter
	// writes (one per ten batches of an instance: once per 10 s),
	// 1.05/100 endpoint counter writes by event type (one type), 1/10
	// message log page (one per stream invocation of ten events of one
	// tenant: 10 × 82 + 110 bytes, one unit) = 1.196 WRU (2.096 while each
	// event wrote a message log index entry, 3.146 with the delivery log's
	// entries, 3.221 while the count and the reset were two writes, 3.41
	// while every batch wrote its counters), + 0.001 deaths × 5.2 = 1.2012
	// WRU.
	require.InDelta(t, 1.2012, sum(recordEach(InitialAssumptions).Inputs().DynamoDBWrites), 1e-9)
	// Reads: enqueue's existence check 0.5 (eventual) + deliver's delivery
	// 1.05 (consistent) + the endpoint's gate 1.05/10 (consistent, one per
	// batch) + the endpoint and its tombstone on a cache miss, 1.05/10 ×
	// 0.12 × 1 (eventual) = 0.0126, none after the instance's own writes,
	// whose results it patches into its copy (0.01 was counted for them
	// until the count and the reset were one write, 0.2 while every count
	// and reset was read again), the gate again for the retries' batches,
	// seldom full, 0.05 × 0.3 = 0.015, + the endpoints query, one per tenant per invocation of ten records,
	// 0.05 = 1.7326 RRU (2.1776 while the query was counted per record), +
	// 0.001 deaths × (0 + 14 sweep reads, one a day; 3 + 26 before the
	// patched copy and the arrivals) = 1.7466 RRU, + enqueue's query of
	// the outcome pages beside its existence read, one per invocation of
	// ten events of one second, 0.5 each: 0.05 = 1.7966 RRU.
	require.InDelta(t, 1.7966, sum(in.DynamoDBReads), 1e-9)
	// Logs: 163 + 243 + 0.05 × 667 + 250 × (0.1 + 0.105) = 490.6 bytes
	// (938.6 with a line per fan-out span and per delivered attempt;
	// 480.75 before the trace ids and the fan-out's span line).
	require.InDelta(t, 490.6, in.LogBytesPerDelivery, 1e-9)
	// Storage: the delivered record, 604 bytes, and the event's share of
	// its message log page, 82 + 110/10 (the message log's index entry,
	// 250, until the pages; the delivery log's entry, 446, until records
	// were listed by their key), kept half a month (15 and 16 days); PITR
	// backs up both (the state table), where it backed up no index.
	// Since the outcome pages, 0.95 of the 604 are a row of 65 bytes and
	// its share of its page's 210 + 100 (9.05 rows a page): 124.5.
	require.InDelta(t, 124.5+93, in.StoredBytesPerDelivery, 1e-9)
	require.InDelta(t, 124.5+93, in.BackedUpBytesPerDelivery, 1e-9)
	require.InDelta(t, 0.5, in.StoredMonths, 1e-9)

	b := Estimate(Default, in)
	// 0.3572 × $0.625 = $0.22325; 1.7966 × $0.125 = $0.224575; 0.3624 × $0.40 = $0.14496.
	require.InDelta(t, 0.22325, b.DynamoDBWrites, 1e-9)
	require.InDelta(t, 0.224575, b.DynamoDBReads, 1e-9)
	require.InDelta(t, 0.14496, b.SQS, 1e-9)
	// One Decrypt per 100 deliveries (the secret kept in the warm
	// function) × $3 per million = $0.03.
	require.InDelta(t, 0.03, b.KMS, 1e-9)
	// 217.5 × 10⁶ / 2³⁰ GB × 0.5 month × ($0.25 + $0.20).
	require.InDelta(t, 217.5e6/(1<<30)*0.5*0.25+217.5e6/(1<<30)*0.5*0.20, b.DynamoDBStorage, 1e-9)
	// Deliver: 105,000 invocations × 0.120 s × 0.25 GB = 3,150 GB-s ×
	// $0.0000133334 = $0.04200021.
	require.InDelta(t, 0.04200021, b.LambdaDeliver, 1e-9)
	// Requests: 205,000 × $0.20/1M = $0.041.
	require.InDelta(t, 0.041, b.LambdaRequests, 1e-9)
}

// With an index that projects every attribute of every delivery (gsi2 did,
// before it became keys only and then went), each write of a record writes
// the index again and the index stores a copy.
func TestIndexOfAllAttributesDoublesUpdates(t *testing.T) {
	t.Parallel()
	a := noDeliveryLog(shortIDs(noMessageLog()))
	a.DeliveryIndexCopies = 1
	in := a.Inputs()
	for _, op := range in.DynamoDBWrites {
		if strings.HasPrefix(op.Name, "deliver records:") {
			require.InDelta(t, 2.1, op.PerDelivery*op.Units, 1e-9)
		}
	}
	require.InDelta(t, 2*577, in.StoredBytesPerDelivery, 1e-9)
	require.InDelta(t, 577, in.BackedUpBytesPerDelivery, 1e-9, "PITR backs up the table, not its indexes")
}

// Under light load an enqueue invocation holds one record: a request per
// message.
func TestOneRecordAnInvocationSendsARequestPerMessage(t *testing.T) {
	t.Parallel()
	a := InitialAssumptions
	a.RecordsPerEnqueueInvocation = 1
	send := a.Inputs().SQS[0]
	require.Contains(t, send.Name, "SendMessageBatch")
	require.InDelta(t, 1, send.PerDelivery*send.Units, 1e-9)
}

func TestLongErrorBodiesCostAWriteUnitMore(t *testing.T) {
	t.Parallel()
	a := recordEach(InitialAssumptions)
	a.DeliveryWRUAfterFailure = 2
	var attempt Op
	for _, op := range a.Inputs().DynamoDBWrites {
		if strings.HasPrefix(op.Name, "deliver records:") {
			attempt = op
		}
	}
	// 0.95 first-attempt successes × 1 + 0.05 failures × 2 (the record
	// after the write holds the 1 KB answer) + 0.05 successes after a
	// failure × 2 = 1.15 WRU per delivery (no index write).
	require.InDelta(t, 1.15, attempt.PerDelivery*attempt.Units, 1e-9)
	// With the outcome pages, only the two records of a retried one: 0.2.
	a.OutcomeRowBytes, a.OutcomePageBytes = InitialAssumptions.OutcomeRowBytes, InitialAssumptions.OutcomePageBytes
	for _, op := range a.Inputs().DynamoDBWrites {
		if strings.HasPrefix(op.Name, "deliver records:") {
			require.InDelta(t, 0.2, op.PerDelivery*op.Units, 1e-9)
		}
	}
}

func TestLargeMessagesCostMoreReceiveRequests(t *testing.T) {
	t.Parallel()
	a := noDeaths(InitialAssumptions)
	a.MessageBytes = 10 << 10
	sum := 0.0
	for _, op := range a.Inputs().SQS {
		sum += op.PerDelivery * op.Units
	}
	// Ten 10 KB messages are 100 KB, two 64 KB chunks, to send and to
	// receive. 0.1 × 2 + 0.105 × 2 + 0.105 + 0.05 = 0.565.
	require.InDelta(t, 0.565, sum, 1e-9)
}

func TestDefaultPricesAreSourced(t *testing.T) {
	t.Parallel()
	require.Equal(t, "us-east-1", Default.Region)
	require.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, Default.Date)
	for name, p := range map[string]Price{
		"LambdaArmGBSecond": Default.LambdaArmGBSecond, "LambdaRequests": Default.LambdaRequests,
		"SQSRequests": Default.SQSRequests, "DynamoDBWrites": Default.DynamoDBWrites,
		"DynamoDBReads": Default.DynamoDBReads, "DynamoDBStorage": Default.DynamoDBStorage,
		"DynamoDBBackup": Default.DynamoDBBackup, "LogsIngestion": Default.LogsIngestion,
		"DataTransferOut": Default.DataTransferOut, "CustomMetric": Default.CustomMetric,
		"KMSRequests": Default.KMSRequests, "KMSKey": Default.KMSKey,
	} {
		require.Positive(t, p.USD, name)
		require.NotEmpty(t, p.Unit, name)
		require.True(t, strings.HasPrefix(p.Source, "https://"), "%s has no source address", name)
	}
	// The units Estimate assumes.
	require.Equal(t, "GB-second", Default.LambdaArmGBSecond.Unit)
	for _, p := range []Price{Default.LambdaRequests, Default.SQSRequests, Default.KMSRequests} {
		require.Equal(t, "1M requests", p.Unit)
	}
	require.True(t, strings.HasPrefix(Default.DynamoDBWrites.Unit, "1M "))
	require.True(t, strings.HasPrefix(Default.DynamoDBReads.Unit, "1M "))
}

func TestTable(t *testing.T) {
	t.Parallel()
	table := Estimate(roundPrices, Inputs{DynamoDBWrites: []Op{{Name: "put", PerDelivery: 1, Units: 1}}}).Table()
	require.Contains(t, table, "| DynamoDB writes | 1.000 | 100% |")
	require.Contains(t, table, "| DynamoDB writes: put | 1.000 | 1.000 | 100% |")
}

// shortIDs is a as the model was before delivery ids carried their
// event's time and their tenant's hash (domain.DeliveryID, 2026-12-07): a
// delivered record of 595 bytes and its delivery log entry of 321, one
// unit each write.
func shortIDs(a Assumptions) Assumptions {
	a.StoredBytesPerRecord, a.DeliveryLogIndexBytes, a.DeliveryLogIndexWRU = 695, 421, 1
	return a
}

// indexedRecords is a as the model was while records of ids of 43
// characters were each in a partition of their own and listed through the
// delivery log's index (2026-12-07, one commit): a record of 633 bytes
// and an entry of 346, one unit each write.
func indexedRecords(a Assumptions) Assumptions {
	a.StoredBytesPerRecord, a.DeliveryLogIndexBytes, a.DeliveryLogIndexWRU = 733, 446, 1
	return a
}

// noMessageLog is the initial workload with the message log off
// (hookline.Props.DisableMessageLog): no page, no outbox index entry.
func noMessageLog() Assumptions {
	a := recordEach(InitialAssumptions)
	a.LogIndexWRU, a.LogIndexBytes, a.MessageLogEntryBytes = 0, 0, 0
	return a
}

// recordEach is a as the model was while a first attempt delivered wrote
// a record of its own (until 2026-12-07): one write unit each, 604 bytes
// stored, and a death 0.8 units dearer than the success it replaced
// by less (5.2 WRU beyond it).
func recordEach(a Assumptions) Assumptions {
	a.OutcomeRowBytes, a.OutcomePageBytes, a.DeathWRU = 0, 0, 5.2
	return a
}

// indexedMessageLog is a as the model was while the outbox package's Item
// wrote the message log's index keys (until 2026-12-07): an index entry of
// 250 bytes, one write unit, per event, and no page.
func indexedMessageLog(a Assumptions) Assumptions {
	a.LogIndexWRU, a.LogIndexBytes, a.MessageLogEntryBytes = 1, 250, 0
	return a
}

// logKeyBytes is the size of a delivered record's delivery log keys
// (log_pk, log_sk) in a: none once records are listed by their own key,
// 131 bytes while ids of 43 characters were indexed (indexedRecords), 118
// with ids of 30 (shortIDs).
func logKeyBytes(a Assumptions) float64 {
	switch a.StoredBytesPerRecord {
	case shortIDs(a).StoredBytesPerRecord:
		return 118
	case indexedRecords(a).StoredBytesPerRecord:
		return 131
	}
	return 0
}

// noDeliveryLog is a as the pipeline was before the delivery log (issue
// 27): no by_log entry written or stored, and a record without its keys.
// No setting turns the delivery log off: the erasure finds the deliveries
// to deleted endpoints and of expired events through it.
func noDeliveryLog(a Assumptions) Assumptions {
	a.DeliveryLogIndexWRU, a.DeliveryLogIndexBytes, a.StoredBytesPerRecord = 0, 0, a.StoredBytesPerRecord-logKeyBytes(a)
	return a
}

// What the logs cost in the estimate: the message log, in pages, a write
// unit a page of ten events and 93 bytes an event, stored and backed up
// ($0.08; it was $0.65 while each event wrote an index entry of 250
// bytes), a documented choice that DisableMessageLog undoes. The delivery
// log costs no write of its own since records are listed by their key (it
// was one write unit per write of a record, 1.05 a delivery, its entry's
// storage and the record's keys: $0.74); no setting undoes the counters
// (docs/performance.md).
func TestTargetAndTheLogs(t *testing.T) {
	t.Parallel()
	total := func(a Assumptions) float64 { return Estimate(Default, a.Inputs()).Total }
	require.InDelta(t, 1.0778, total(InitialAssumptions), 5e-4, "every log on, first attempts delivered in outcome pages")
	on := total(recordEach(InitialAssumptions))
	require.InDelta(t, 1.6996, on, 5e-4, "before the outcome pages: what each log costs beside a record a delivery")
	require.InDelta(t, 1.6171, total(noMessageLog()), 5e-4, "the message log off")
	require.InDelta(t, 1.6171, total(noDeliveryLog(noMessageLog())), 5e-4, "neither log")
	require.InDelta(t, 1.6106, total(noTypeCounters(noDeliveryLog(noMessageLog()))), 5e-4, "neither log nor the counters by type")
	require.InDelta(t, 0.0105*0.625, on-total(noTypeCounters(recordEach(InitialAssumptions))), 1e-9, "a write unit per ten batches of ten")
	require.InDelta(t, 0.1*0.625+93e6/(1<<30)*0.5*(0.25+0.20), on-total(noMessageLog()), 1e-9, "a write unit a page of ten events, and 93 bytes an event stored and backed up for half a month")
	require.InDelta(t, 0.625+250e6/(1<<30)*0.5*0.25, total(indexedMessageLog(recordEach(InitialAssumptions)))-total(noMessageLog()), 1e-9, "before: one write unit and 250 bytes of index for half a month per event")
	require.InDelta(t, 0, on-total(noDeliveryLog(recordEach(InitialAssumptions))), 1e-9, "the delivery log writes nothing of its own")
	a := indexedRecords(recordEach(InitialAssumptions))
	require.InDelta(t, 1.05*0.625+(446+131-2)*1e6/(1<<30)*0.5*0.25+(131-2)*1e6/(1<<30)*0.5*0.20,
		total(a)-on, 1e-9, "before: a write unit per attempt, the 446-byte entry and the record's 131 bytes of keys (less the 2 its longer partition key adds) for half a month")
}

// The last rows of README.md's "How it got here", rebuilt from today's
// inputs by putting back, change by change, what each one took away.
func TestHowItGotHere(t *testing.T) {
	t.Parallel()
	total := func(in Inputs) float64 { return Estimate(Default, in).Total }
	require.InDelta(t, 1.0778, total(Initial()), 5e-4, "a batch's first attempts delivered packed in outcome pages (store.RecordFirstAttempts), a page per tenant and second of their events: no record each")

	// Before: a record each.
	require.InDelta(t, 1.700, total(recordEach(InitialAssumptions).Inputs()), 5e-4, "the message log in pages enqueue writes, a page per tenant and second of a stream batch's events (messagelog.Pages): no index entry an event")

	// Before: the outbox item wrote the message log's index entry.
	base := indexedMessageLog(recordEach(InitialAssumptions))
	require.InDelta(t, 2.272, total(base.Inputs()), 5e-4, "a record of a time-carrying id kept in its tenant's shards of records, under its id, and listed by it: no by_log entry a write, 131 bytes of keys less")

	// Before: records each in a partition of their own, listed by by_log.
	require.InDelta(t, 3.007, total(indexedRecords(base).Inputs()), 5e-4, "delivery ids carry their event's time and their tenant's hash (issue 37: the key the delivery log is to be read by): 38 bytes more a record, 25 an index entry")

	// Before: ids of 30 characters.
	require.InDelta(t, 2.996, total(shortIDs(base).Inputs()), 5e-4, "a batch's failure count and reset of an endpoint in one write (RecordEndpointHealth), its result patched into the instance's copy; no count for a failure a success of its batch follows")

	// Before: two writes, and a strong re-read after a batch with both.
	require.InDelta(t, 3.043, total(twoHealthWrites(shortIDs(base)).Inputs()), 5e-4, "the instance patches its copy of an endpoint it wrote to (a count, a reset) instead of reading it again")

	// Before: a strong re-read after every failure count and reset.
	require.InDelta(t, 3.067, total(rereadAll(shortIDs(base)).Inputs()), 5e-4, "fan-out spans and delivered attempts as rows of one line per invocation (trace.Rows)")

	// Before: a line per fan-out span and per delivered attempt.
	require.InDelta(t, 3.276, total(spanLines(rereadAll(shortIDs(base))).Inputs()), 5e-4, "the endpoints' counters written once per instance's 10 s (BatchesPerStatsWrite), not once per batch")

	// Before: the counters written by every batch.
	require.InDelta(t, 3.394, total(statsPerBatch(spanLines(rereadAll(shortIDs(base)))).Inputs()), 5e-4, "the DLQ passed over once a day, each message checked on its way in (deliver's deaths sent by deliver, SQS's redrive to the arrivals): 14 receives and reads of a dead message")

	// Before: a sweep of the whole DLQ every 5 minutes.
	require.InDelta(t, 3.556, total(sweptEveryPass(statsPerBatch(spanLines(rereadAll(shortIDs(base))))).Inputs()), 5e-4, "deaths counted, 0.1% of deliveries: their writes and reads as measured, their DLQ sends, the sweep's reads (26 each) and receives (4,032 passes each)")

	// Before: no deaths in the model.
	require.InDelta(t, 3.387, total(noDeaths(statsPerBatch(spanLines(rereadAll(shortIDs(base))))).Inputs()), 5e-4, "enqueue's endpoints query counted once per tenant per invocation, as TestModelEnqueueUnitsAreBilledUnits measures it")

	// Before: the query counted once per record (an upper bound).
	require.InDelta(t, 3.443, total(queryPerRecord(noDeaths(statsPerBatch(spanLines(rereadAll(shortIDs(base)))))).Inputs()), 5e-4, "the endpoints' counters by event type: one write per endpoint and type per batch")

	// Before: no counters by event type (issue 27).
	before := noTypeCounters(queryPerRecord(noDeaths(statsPerBatch(spanLines(rereadAll(shortIDs(base)))))))
	require.InDelta(t, 3.377, total(before.Inputs()), 5e-4, "the delivery log's index, one entry per write of a record")

	// Before: no delivery log (issue 27).
	require.InDelta(t, 2.647, total(noDeliveryLog(before).Inputs()), 5e-4, "trace ids on deliver's attempt lines, enqueue's fan-out span line")

	// Before: no traces (issue 27).
	require.InDelta(t, 2.434, total(untraced(noDeliveryLog(before)).Inputs()), 5e-4, "deliver's endpoint read behind the per-instance cache")

	// Before: the endpoint read strongly consistent for every message.
	require.InDelta(t, 2.539, total(strongEndpointRead(untraced(noDeliveryLog(before)).Inputs())), 5e-4, "the message log's index, one entry per event")

	// Before: no message log.
	require.InDelta(t, 1.885, total(strongEndpointRead(untraced(noDeliveryLog(noTypeCounters(queryPerRecord(noDeaths(statsPerBatch(rereadAll(shortIDs(noMessageLog())))))))).Inputs())), 5e-4, "endpoint counters: one write per endpoint per batch")

	// Before: no endpoint counters.
	noCounters := untraced(noDeliveryLog(noTypeCounters(queryPerRecord(noDeaths(statsPerBatch(rereadAll(shortIDs(noMessageLog()))))))))
	noCounters.EndpointsPerBatch = 0
	require.InDelta(t, 1.806, total(strongEndpointRead(noCounters.Inputs())), 5e-4, "signing secrets sealed")

	// Before: no KMS request (the secrets were stored in plaintext).
	in := strongEndpointRead(noCounters.Inputs())
	in.KMS = nil
	require.InDelta(t, 1.776, total(in), 5e-4, "records kept 15 days")

	// Before: kept 30 days, a month.
	a := noCounters
	a.DeliveriesPerDecrypt = math.Inf(1)
	a.StoredMonths = 1
	require.InDelta(t, 1.897, total(strongEndpointRead(a.Inputs())), 5e-4, "enqueue writes no record; its existence read eventually consistent")

	// Before: enqueue's conditional put (1 WRU, no index entry once gsi2
	// had gone), a record carrying enqueued_at, a consistent existence read.
	withEnqueuedAt := sampleDelivered()
	withEnqueuedAt.EnqueuedAt = &withEnqueuedAt.CreatedAt
	item := deliveryItem(t, withEnqueuedAt)
	delete(item, store.AttrLogPK)
	delete(item, store.AttrLogSK)
	a.StoredBytesPerRecord = float64(ItemSize(item) + 100 - 26) // ids of 30 characters then: 13 bytes less in its key and its message
	in = strongEndpointRead(a.Inputs())
	in.DynamoDBWrites = append(in.DynamoDBWrites, Op{Name: "enqueue CreateDelivery PutItem (enqueued_at included)", PerDelivery: 1, Units: 1})
	for i, op := range in.DynamoDBReads {
		if strings.HasPrefix(op.Name, "enqueue LoadWith") {
			in.DynamoDBReads[i].Units = 1
		}
	}
	require.InDelta(t, 2.602, total(in), 5e-4, "gsi2 dropped")
}

// noDeaths is a as the model was before it counted deaths (2026-12-06).
// statsPerBatch is a as deliver wrote the endpoints' counters until
// 2026-12-06: every batch its own.
func statsPerBatch(a Assumptions) Assumptions {
	a.BatchesPerStatsWrite = 1
	return a
}

// sweptEveryPass is a as the DLQ was swept until 2026-12-06: SQS's
// redrive straight to the DLQ, so every 5-minute pass received every
// message (4,032 over 14 days) and read its record in its first 12 passes
// and once a day (26).
func sweptEveryPass(a Assumptions) Assumptions {
	a.SweepPasses, a.SweepReadsPerDead = 4032, 26
	return a
}

func noDeaths(a Assumptions) Assumptions {
	a.DeadFraction = 0
	return a
}

// queryPerRecord is a as the model counted enqueue's endpoints Query
// until it was measured (2026-12-06): one per record, an upper bound.
func queryPerRecord(a Assumptions) Assumptions {
	a.TenantsPerEnqueueInvocation = a.RecordsPerEnqueueInvocation
	return a
}

// noTypeCounters is a as the model was before issue 27's counters by
// event type: no AddEndpointTypeStats write.
func noTypeCounters(a Assumptions) Assumptions {
	a.TypesPerBatch = 0
	return a
}

// untraced is a as the model was before issue 27's traces: no fan-out
// span line in enqueue, no trace ids on deliver's attempt lines.
func untraced(a Assumptions) Assumptions {
	a.EnqueueLogBytes, a.DeliveredLogBytes, a.RetryLogBytes = 0, 407, 450
	return a
}

// strongEndpointRead is in as the model was before issue 25's endpoint
// cache: deliver's endpoint read strongly consistent, once per message
// (1 RRU a pass), in place of the cache's rows.
func strongEndpointRead(in Inputs) Inputs {
	var reads []Op
	passes := 0.0
	for _, op := range in.DynamoDBReads {
		if strings.Contains(op.Name, "the endpoint and its tombstone") {
			continue
		}
		if strings.HasPrefix(op.Name, "deliver Load BatchGetItem: the delivery") {
			passes = op.PerDelivery
		}
		reads = append(reads, op)
	}
	in.DynamoDBReads = append(reads, Op{Name: "deliver Load BatchGetItem: the endpoint (consistent, at most one per message)", PerDelivery: passes, Units: 1})
	return in
}

// The KMS requests depend on how many deliveries one opened secret serves:
// without the two logs' indexes and the counters by event type, the
// target ($2) holds down to about 10 deliveries per Decrypt (an endpoint's
// deliveries an hour per deliver instance; about 100 while each fan-out
// span and delivered attempt had a line of its own, about 12 before the
// traces' log bytes); below that the Decrypts of sparse endpoints pass it.
func TestDecryptsPerDeliverySensitivity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		perDecrypt, total float64
	}{
		{100, 1.6106}, {15, 1.7806}, {10, 1.8806}, {1, 4.5806},
	} {
		t.Run(fmt.Sprint(tc.perDecrypt), func(t *testing.T) {
			a := noTypeCounters(noDeliveryLog(noMessageLog()))
			a.DeliveriesPerDecrypt = tc.perDecrypt
			require.InDelta(t, tc.total, Estimate(Default, a.Inputs()).Total, 5e-4)
		})
	}
}

// The estimate, per million deliveries to one endpoint with 5% retried
// once and 0.1% dying, at Default prices, for the calls the code makes
// today: $2.27, over the $2 target (and EventBridge API destinations'
// $1.20, issue 37) by the message log's index (TestTargetAndTheLogs:
// $0.65, $1.62 with DisableMessageLog; the delivery log's index cost $0.74
// until records were listed by their own key), the counters by event type
// ($0.01) and a record written per delivery ($0.66, which packing would
// make a page per batch);
// $0.03 of it opens the sealed signing secrets and $0.07 writes the
// endpoints' hourly counters. The first estimate, before gsi2 became keys
// only and then went, enqueue stopped writing deliveries, sends and
// metrics were batched and records were kept 15 days, was $5.799; see
// README.md.
func ExampleEstimate() {
	fmt.Print(Estimate(Default, Initial()).Table())
	// Output:
	// | per million deliveries | USD | share |
	// |---|---:|---:|
	// | Lambda requests | 0.041 | 4% |
	// | Lambda duration, enqueue | 0.010 | 1% |
	// | Lambda duration, deliver | 0.042 | 4% |
	// | SQS requests | 0.145 | 13% |
	// | DynamoDB writes | 0.223 | 21% |
	// | DynamoDB reads | 0.225 | 21% |
	// | KMS requests | 0.030 | 3% |
	// | DynamoDB storage and PITR | 0.046 | 4% |
	// | CloudWatch Logs ingestion | 0.228 | 21% |
	// | Data transfer out | 0.088 | 8% |
	// | **hookline total** | **1.078** | 100% |
	// | producer's outbox write (not in total) | 1.250 | |
	//
	// | request kind | units per delivery | USD | share |
	// |---|---:|---:|---:|
	// | DynamoDB reads: deliver Load BatchGetItem: the delivery (consistent) | 1.050 | 0.131 | 12% |
	// | DynamoDB writes: deliver outcome page BatchWriteItem (a batch's first attempts delivered, a page per tenant and second of their events) | 0.105 | 0.066 | 6% |
	// | DynamoDB writes: deliver records: every attempt but a first one delivered, an UpdateItem each (before the outcome pages: a batch's first attempts delivered in one BatchWriteItem too, a record each) | 0.100 | 0.062 | 6% |
	// | DynamoDB writes: enqueue message log page BatchWriteItem (a page per tenant and second of the events' times per stream invocation) | 0.100 | 0.062 | 6% |
	// | DynamoDB reads: enqueue LoadWith BatchGetItem: does the delivery exist (eventual) | 0.500 | 0.062 | 6% |
	// | SQS: event source ReceiveMessage (one per batch) | 0.105 | 0.042 | 4% |
	// | SQS: event source DeleteMessageBatch (one per batch) | 0.105 | 0.042 | 4% |
	// | SQS: enqueue SendMessageBatch (ten messages a request, across records) | 0.100 | 0.040 | 4% |
	// | KMS: deliver Decrypt of the endpoint's signing secret (kept an hour in the warm function) | 0.010 | 0.030 | 3% |
	// | SQS: deliver SendMessageBatch (a retry sent again, delayed; one request each at worst) | 0.050 | 0.020 | 2% |
	// | DynamoDB writes: deliver RecordEndpointHealth UpdateItem (one per endpoint per batch that failed or reset: its count and its reset in one) | 0.025 | 0.016 | 1% |
	// | DynamoDB reads: deliver Load BatchGetItem: the endpoint's gate (consistent, one per endpoint per batch) | 0.105 | 0.013 | 1% |
	// | DynamoDB writes: deliver AddEndpointStats UpdateItem (once per endpoint per instance's 10 s) | 0.011 | 0.007 | 1% |
	// | DynamoDB writes: deliver AddEndpointTypeStats UpdateItem (once per endpoint and event type per instance's 10 s) | 0.011 | 0.007 | 1% |
	// | DynamoDB reads: enqueue Endpoints Query (eventual, once per tenant per invocation) | 0.050 | 0.006 | 1% |
	// | DynamoDB reads: enqueue outcome pages Query beside its existence read (eventual, once per tenant and second of an invocation's events: a delivered delivery is not sent again) | 0.050 | 0.006 | 1% |
	// | DynamoDB writes: deliver a death's writes beyond a success's (measured) | 0.006 | 0.004 | 0% |
	// | DynamoDB reads: deliver Load BatchGetItem: the endpoint's gate, a retry's batch being seldom full (measured) | 0.015 | 0.002 | 0% |
	// | DynamoDB reads: DLQ sweep: a dead message's record read (once a day) | 0.014 | 0.002 | 0% |
	// | DynamoDB reads: deliver LoadWith BatchGetItem: the endpoint and its tombstone on a cache miss (eventual, once per endpoint per batch that misses) | 0.013 | 0.002 | 0% |
	// | SQS: DLQ sweep ReceiveMessage (a dead message in the daily pass, ten a request) | 0.001 | 0.001 | 0% |
	// | SQS: deliver SendMessage of a death to the DLQ | 0.001 | 0.000 | 0% |
	// | DynamoDB writes: deliver by_log index entry (the delivery log: each attempt's write of the record) | 0.000 | 0.000 | 0% |
	// | DynamoDB writes: outbox by_tenant_shard index entry (the message log, once per event, until 2026-12-07) | 0.000 | 0.000 | 0% |
	// | DynamoDB reads: deliver LoadWith BatchGetItem: the endpoint and its tombstone after the instance wrote to it and could not patch its copy (consistent) | 0.000 | 0.000 | 0% |
	// | DynamoDB reads: deliver a death's reads beyond a success's (measured) | 0.000 | 0.000 | 0% |
}

// A rate-limited endpoint adds the limiter's writes (one per batch and
// window, 1.2 with the second writes) and the pacing's wait to the deliver
// function's duration; deliveries sent back to wait add a SendMessage and
// another pass through a batch each. An unlimited endpoint adds nothing.
func TestRateLimitedByHand(t *testing.T) {
	t.Parallel()
	sum := func(ops []Op) float64 {
		s := 0.0
		for _, op := range ops {
			s += op.PerDelivery * op.Units
		}
		return s
	}
	base := Initial()
	require.Equal(t, base, InitialAssumptions.RateLimited(0).RateLimitedOff().Inputs(), "no limit, no limiter cost")
	for _, op := range base.DynamoDBWrites {
		require.NotContains(t, op.Name, "TakeSlots")
	}

	lim := InitialAssumptions.RateLimited(0).Inputs()
	// 1.05 attempts in batches of ten, 1.2 limiter writes a batch: 0.126 WRU.
	require.InDelta(t, sum(base.DynamoDBWrites)+0.126, sum(lim.DynamoDBWrites), 1e-9)
	require.InDelta(t, sum(base.SQS), sum(lim.SQS), 1e-9)
	require.InDelta(t, sum(base.DynamoDBReads), sum(lim.DynamoDBReads), 1e-9)
	b, bl := Estimate(Default, base), Estimate(Default, lim)
	require.InDelta(t, 0.126*0.625, bl.DynamoDBWrites-b.DynamoDBWrites, 1e-9)
	// Deliver: 105,000 invocations × (0.020 + 0.900 + 0.100) s × 0.25 GB.
	require.InDelta(t, 105000*1.020*0.25*0.0000133334, bl.LambdaDeliver, 1e-9)

	def := InitialAssumptions.RateLimited(0.1).Inputs()
	// 1.15 passes: receives and deletes 0.115 each, reads 1.15 + 1.15 +
	// 1, the gate's 0.115 and the endpoint's on a cache miss 0.115 × 0.12,
	// a tenth of a SendMessageBatch per deferral (a batch's deferrals go
	// out together: 0.01), limiter writes 0.115 × 1.2 and the endpoint
	// counters' writes of the extra batches (0.001 of the hour's, 0.001
	// of the type's: one per ten batches).
	require.InDelta(t, sum(base.SQS)+0.01+0.01+0.01, sum(def.SQS), 1e-9)
	require.InDelta(t, sum(base.DynamoDBReads)+0.1+0.01+0.01*0.12, sum(def.DynamoDBReads), 1e-9)
	require.InDelta(t, sum(base.DynamoDBWrites)+0.115*1.2+0.001+0.001, sum(def.DynamoDBWrites), 1e-9)
	require.InDelta(t, base.EgressBytesPerDelivery, def.EgressBytesPerDelivery, 1e-9, "a deferral sends nothing")
	t.Logf("per million deliveries: unlimited $%.2f, rate-limited $%.2f (of which limiter writes $%.3f, pacing wait $%.3f), rate-limited with 10%% deferred $%.2f",
		b.Total, bl.Total, bl.DynamoDBWrites-b.DynamoDBWrites, bl.LambdaDeliver-b.LambdaDeliver, Estimate(Default, def).Total)
}

// spanLines is a as the logs were until issue 37's rows: a line of its own
// per fan-out span (329 bytes) and per delivered attempt (527), and a
// retry's line as measured without its parent span id (627).
func spanLines(a Assumptions) Assumptions {
	a.EnqueueLogBytes, a.DeliveredLogBytes, a.RetryLogBytes = 329, 527, 627
	return a
}

// twoHealthWrites is a as the model was until a batch's failure count and
// reset of an endpoint were one write: two writes a failure, a re-read
// taken as 0.1 a failure (in fact the retries' gate reads, not counted
// apart until then).
func twoHealthWrites(a Assumptions) Assumptions {
	a.HealthWritesPerFailure, a.EndpointRereadsPerFailure, a.RetryGateReads, a.DeathWRU = 2, 0.1, 0, 7
	return a
}

// rereadAll is a as the model was until deliver patched its copy of an
// endpoint it wrote to: a strongly consistent read after every failure
// count and every reset.
func rereadAll(a Assumptions) Assumptions {
	a = twoHealthWrites(a)
	a.EndpointRereadsPerFailure, a.DeathRRU = 2, 3
	return a
}
