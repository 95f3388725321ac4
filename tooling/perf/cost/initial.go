package cost

import "math"

// Assumptions are the workload figures an estimate rests on before they
// are measured. Each field says where its value comes from; Inputs turns
// them into per-delivery counts along the calls the code makes today.
type Assumptions struct {
	// RetriedFraction of deliveries fail their first attempt (retryable)
	// and succeed on the second. 0.05 in the issue.
	RetriedFraction float64
	// RecordsPerEnqueueInvocation is how many outbox records one enqueue
	// invocation handles (the stream batch size is 100; a light load sends
	// fewer). 10 assumed, to be measured.
	RecordsPerEnqueueInvocation float64
	// TenantsPerEnqueueInvocation is how many tenants' endpoints one
	// enqueue invocation reads (one Query each, whatever the tenant's
	// records): 1 in the one-tenant workload. The model counted a Query
	// per record (0.5 RRU a delivery) until TestModelEnqueueUnitsAreBilledUnits
	// measured one per invocation (0.05).
	TenantsPerEnqueueInvocation float64
	// DeliverBatchSize is messages per deliver invocation: the event source
	// mapping's batch size, 10 (infra/hookline/functions.go), when the queue is busy.
	DeliverBatchSize float64

	// EnqueueDurationMS per invocation: 30 assumed.
	EnqueueDurationMS float64
	// DeliverOwnMS is the deliver function's own time per invocation
	// (reads, signing, writes), without waiting on receivers: 20 assumed.
	DeliverOwnMS float64
	// ReceiverLatencyMS is the slowest receiver answer of a batch: 100
	// assumed, which with DeliverOwnMS makes the 120 ms.
	ReceiverLatencyMS float64
	// EnqueueMemoryMB and DeliverMemoryMB: 256 each (infra/hookline/functions.go).
	EnqueueMemoryMB, DeliverMemoryMB float64

	// DeliveryIndexCopies is how many full copies of a delivery record
	// each write of it (each attempt) also writes to an index: 0, since
	// no index projects the whole record (the dead index by_dead holds
	// the dead only, without their message, gsi1 those of earlier
	// versions, and the delivery log by_log the listed attributes only,
	// DeliveryLogIndexWRU; the event index gsi2 is gone). An index
	// projecting every attribute of every delivery would make it 1, and
	// store a copy of each record.
	DeliveryIndexCopies float64
	// DeliveryLogIndexWRU is the WRUs of the delivery log's entry
	// (store.IndexLog, by_log) that each write of a delivery record also
	// writes: 0, since a record of an id that carries its tenant's hash
	// and its event's time is kept in its tenant's shards of records and
	// listed by its own key (store.RecordsPK), measured by
	// TestModelDeliverUnitsAreBilledUnits; 1 before (the keys and
	// store.LogIndexAttributes, at most 923 bytes, on every attempt),
	// which a record of a legacy id still writes until it expires.
	DeliveryLogIndexWRU float64
	// DeliveryLogIndexBytes is that entry's billed size: a delivered
	// delivery's (TestDeliveryRecordSizes) plus 100 bytes, kept as long as
	// the record. Indexes are not backed up by PITR.
	DeliveryLogIndexBytes float64
	// DeliveryWRU is the WRUs of one write of a delivery record: 1, since
	// the record stays under 1 KB (595 bytes delivered at the first
	// attempt, 583 after a failed one with a short answer, its delivery
	// log keys included; see the tests).
	// It holds the message only once dead.
	DeliveryWRU float64
	// DeliveryWRUAfterFailure is the WRUs of a failed attempt's write and
	// of the writes that follow it: its attempt log keeps up to 1 KB of
	// the receiver's answer, so a long error page pushes the record past
	// 1 KB (1,470 bytes with a 1 KB excerpt): 2 then, 1 with short error
	// bodies.
	DeliveryWRUAfterFailure float64
	// StatsWRU is the WRUs of one write of an endpoint's hour of attempt
	// counters (store.AddEndpointStats): 1, since the item stays under
	// 1 KB at its largest (store's TestStatsItemIsOneWriteUnit: 728
	// bytes with a 64-byte tenant id and every counter in the millions).
	StatsWRU float64
	// TypeStatsWRU is the WRUs of one write of an endpoint's hour of
	// attempt counters of one event type (store.AddEndpointTypeStats): 1,
	// since the item stays under 1 KB at its largest (store's
	// TestTypeStatsItemIsOneWriteUnit: 747 bytes with a 256-byte type, a
	// 64-byte tenant id, every counter in the millions).
	TypeStatsWRU float64
	// TypesPerBatch is how many event types each endpoint's attempts of
	// one deliver batch are of (one more write per endpoint, hour and
	// type): 1 in the one-endpoint, one-type workload; a batch of 10 to
	// an endpoint subscribed to many types writes up to 10.
	TypesPerBatch float64
	// EndpointsPerBatch is how many endpoints' counters one deliver batch
	// writes (one write per endpoint and hour it attempted): 1 in the
	// one-endpoint workload.
	EndpointsPerBatch float64
	// BatchesPerStatsWrite is how many batches an instance works per
	// write of an endpoint's counters: it writes them once per
	// StatsFlushEvery (10 s) and at its shutdown, merging the batches' in
	// between (deliver's statsBuffer). 10: an instance working a batch a
	// second, a conservative rate for the full batches of a busy endpoint
	// and about that of the sparse one-at-a-time traffic of the latency
	// section. Until 2026-12-06 every batch wrote its counters (1).
	BatchesPerStatsWrite float64
	// LogIndexWRU is the WRUs of the message log's index entry that each
	// event's outbox item wrote while the outbox package's Item wrote its
	// index keys (the outbox's by_tenant_shard index: log_pk, log_sk, id,
	// type, occurred_at, endpoint_id, under 1 KB): 1, once per event, until
	// 2026-12-07; 0 since enqueue lists events in the message log's pages
	// (MessageLogEntryBytes).
	LogIndexWRU float64
	// LogIndexBytes is that index entry's billed size: about 150 bytes of
	// attributes plus 100 of overhead, kept as long as the outbox item
	// (16 days, about StoredMonths). Indexes are not backed up by PITR.
	LogIndexBytes float64
	// MessageLogEntryBytes is an event's entry on a message log page
	// (messagelog.Pages), which enqueue writes once per tenant and second
	// of the events' times per stream invocation: about 82 bytes (a
	// 30-character event id, a type, the time, the default expiry). 0 with
	// the message log off (hookline.Props.DisableMessageLog).
	MessageLogEntryBytes float64
	// OutcomeRowBytes is a delivery delivered at its first attempt as a
	// row of an outcome page (store.RecordFirstAttempts): 0 while each
	// had a record of its own (DeliveryWRU), else its size with an event
	// id of 30 characters and an empty answer (its delivery id is made
	// again from the event, endpoint and time, its endpoint and type named
	// once a page): 65 bytes. TestModelDeliverUnitsAreBilledUnits holds
	// the page's units to the billed ones.
	OutcomeRowBytes float64
	// OutcomePageBytes is an outcome page's own size beside its rows (its
	// keys, tenant, state, expiry, attribute names and its endpoint and
	// type named once): 210 bytes, so a page of ten is one write unit.
	OutcomePageBytes float64
	// MessageLogPageBytes is a page's own size beside its entries (its
	// keys, tenant, attribute names, expiry): about 110 bytes.
	MessageLogPageBytes float64
	// DeadFraction of deliveries die at their first attempt (a 4xx): 0.001
	// (issue 37's 0.1%).
	DeadFraction float64
	// DeathWRU and DeathRRU are what one death costs deliver beyond a
	// delivery's success, measured by TestModelDeathUnitsAreBilledUnits:
	// the record written dead with its message in a transaction with the
	// tenant's DLQ depth shard (twice the units), the dead and
	// delivery-log index entries, the shard's gsi1 entry, the dead
	// window's count; and the endpoint's failure count and its reset by
	// the next success only when the death is its batch's last attempt (a
	// success of its batch after it ends the run: no health write), 2 WRU
	// a tenth of the time: 5 + 0.2 = 5.2 (7 while the count and the reset
	// were two writes, each written). No read: the instance patches its
	// copy of the endpoint with the write's result (3 RRU, a strong
	// re-read after each, before).
	DeathWRU, DeathRRU float64
	// SweepPasses is how many DLQ sweeps receive a dead message: the
	// daily pass over the whole DLQ (dlq.FullPassGap) for the DLQ's 14
	// days, 14; each receives ten messages a request. SweepReadsPerDead is
	// how many of them read its record (strongly, one unit): each, 14.
	// Until 2026-12-06 every 5-minute pass received it (4,032) and read
	// it (then the first 12 and one a day, 26); deliver sends its deaths
	// to the DLQ, and only the deaths it could not record (a crash) come
	// through the arrivals, received once (not modelled: no death here is
	// a crash). Not counted: the tenant sweeps after a job, per job.
	SweepPasses, SweepReadsPerDead float64
	// HealthWritesPerFailure is how many endpoint failure-count writes
	// (RecordEndpointHealth) one failed attempt costs: a batch writes its
	// attempts' count and reset to one endpoint together, in one write
	// (deliver's batchHealth), and a failure followed in its batch by a
	// success writes none (the run it began has ended); a batch's last
	// failure is a count, and a reset at the next batch's success. 0.5,
	// measured by TestModelDeliverUnitsAreBilledUnits with a failure at
	// each position of a batch. Until 2026-12-07 the count and the reset
	// were two writes, 2 a failure; until 2026-12-06 each success wrote
	// its own reset, about 0.3 a delivery on this workload, which this
	// model missed.
	HealthWritesPerFailure float64
	// EndpointRereadsPerFailure is how many strongly consistent reads of
	// the endpoint a failed attempt costs the instance's next batch: its
	// copy is patched with what its health write left (deliver's
	// keepWritten), and read again only after a write that moved the
	// failing mark, the breaker or the disable: none on this workload
	// (failures far below FailingAfter). It was taken as 0.1 while a
	// batch that both reset and counted read again (what was measured was
	// RetryGateReads), and 2 before the copy was patched, a read after
	// every count and every reset.
	EndpointRereadsPerFailure float64
	// RetryGateReads is how many more reads of its endpoint's gate a
	// retried delivery costs than its share of a full batch's: a retry
	// comes back when its delay ends, in a batch with fewer others. 0.3,
	// measured by TestModelDeliverUnitsAreBilledUnits.
	RetryGateReads float64

	// StoredBytesPerRecord is a delivered record's billed size: 504 bytes
	// (633 while it carried the delivery log's keys, log_pk and log_sk,
	// with ids of 43 characters; 595 with ids of 30) plus 100 bytes of
	// item overhead.
	StoredBytesPerRecord float64
	// StoredMonths: 15 days' TTL retention (store.DefaultRetention), 0.49
	// of a month, plus the lag before TTL deletes an expired item
	// (typically days; not measured): 0.5.
	StoredMonths float64
	// PITR is whether point-in-time recovery is on: it is (infra/hookline/tables.go).
	PITR bool

	// EnqueueLogBytes per delivery: the event's fan-out span, a row of the
	// invocation's one line of spans (trace.Rows, since issue 37), 163
	// bytes for a one-endpoint event in an invocation of ten, measured by
	// internal/enqueue's TestLogBytesPerDelivery (329 while each span was
	// a line of its own; "delivery sent" is a DEBUG line; "delivery
	// created" was 264 bytes at INFO; 0 before the span lines).
	EnqueueLogBytes float64
	// DeliveredLogBytes per successful attempt: its span, a row of the
	// batch's one line of spans (its "delivered" line is at DEBUG since
	// issue 37), and its share of the batch's one EMF document, 243 bytes
	// in a batch of ten messages, 608 in a batch of one (internal/deliver's
	// TestLogBytesPerDelivery). It was 527 and 731 with the "delivered"
	// line at INFO (the attempt's span, with its trace ids since issue
	// 27), 407 and 611 before the trace ids, 729 with an EMF line per
	// message and metric.
	DeliveredLogBytes float64
	// RetryLogBytes per failed attempt: "retry scheduled" (the attempt's
	// span too, its parent's id included) and its share of the EMF
	// document, 667 bytes in a batch of ten, 867 in a batch of one (627 and
	// 830 as measured without the parent's id; 450 and 713 before the
	// trace ids; it was 935).
	RetryLogBytes float64
	// PlatformLogBytes per invocation: Lambda's START, END and REPORT
	// lines in the text format, about 250 bytes (not measured here).
	PlatformLogBytes float64

	// DeliveriesPerDecrypt is how many deliveries one KMS Decrypt of an
	// endpoint's signing secret serves. deliver keeps an opened secret in
	// memory for an hour (sealing.DefaultMaxAge) in each warm instance, so
	// this is about an endpoint's deliveries per hour divided by the
	// deliver instances that serve it (and halved during a rotation's
	// grace period, when two secrets sign). 100 assumed: a million
	// deliveries a month to one endpoint are about 1,400 an hour; an
	// endpoint that receives one delivery an hour gets 1, a Decrypt per
	// delivery. To be measured: CloudTrail's Decrypt events of the key ÷
	// deliveries.
	DeliveriesPerDecrypt float64

	// EgressBytesPerAttempt is one POST on a reused connection: about 500
	// bytes of headers, a 205-byte body for a small event, and TCP/TLS
	// framing: 1,000 assumed.
	EgressBytesPerAttempt float64
	// RateLimitWritesPerBatch is, for an endpoint with a rate limit, how
	// many limiter writes (store.TakeSlots UpdateItems, 1 WRU each, a
	// failed condition billed the same) one deliver batch makes: 1 when
	// the batch's slots are taken at once in one window, more when it
	// waits for the next window or a partial grant takes a second write.
	// 0 for an endpoint without a limit (no limiter read or write).
	RateLimitWritesPerBatch float64
	// RateWaitMS is how long a deliver invocation of a rate-limited
	// endpoint waits for its slots, on average (billed as duration): a
	// batch of ten to a 10/s endpoint is paced over the second, its last
	// request 0.9 s after its first. 0 without a limit.
	RateWaitMS float64
	// DeferredFraction is the share of deliveries a rate limit sends back
	// to the queue, delayed, because their slot is further off than the
	// invocation can wait: each is one more SendMessage, one more pass
	// through a batch (receive, delete, the batch's reads and limiter
	// write) and no attempt. 0 without a limit.
	DeferredFraction float64
	// GateWritesPerBatch is, per endpoint a deliver batch sends to, its
	// gate's writes (store.TakeGate and ReleaseGate UpdateItems, 1 WRU
	// each, a failed condition billed the same): 0 for an endpoint shown
	// fast (the fast path takes no slot; its mark is renewed once per
	// 2.5 s, not per batch), as the one fast endpoint of this workload
	// is; 2 for one that is slow, or new.
	GateWritesPerBatch float64
	// EndpointCacheMissesPerBatch is, per endpoint a deliver batch sends
	// to, the share of batches whose instance holds no copy of the
	// endpoint younger than domain.DefaultEndpointCacheTTL (1 s) new
	// enough for the batch's messages, and so reads the endpoint and its
	// tenant's tombstone (eventually consistent, half a unit each: 1 RRU).
	// Assumed 0.12: one busy endpoint, each instance's batches back to
	// back, a batch taking about DeliverOwnMS + ReceiverLatencyMS = 120 ms,
	// so about one batch in 8 (a hit rate of 88%) comes after the copy
	// ran out; a change of the endpoint through the API adds a miss per
	// instance. Sparse or paced batches (a rate-limited endpoint's take
	// about 1 s) miss every time: 1. Not measured.
	EndpointCacheMissesPerBatch float64
	// MessageBytes is one delivery message on the queue: the payload plus
	// about 270 bytes of ids, 360 for the small event measured. SQS bills
	// every started 64 KB of a call's payload as a request, so a batch of
	// ten received at once is one request up to about 6 KB a message.
	MessageBytes float64
}

// InitialAssumptions are the figures the estimate rests on before the
// workload is measured: the first estimate's workload (retries, batch
// sizes, durations, receiver latency) with the figures the code decides
// (index copies, record and log sizes) as of the current code.
var InitialAssumptions = Assumptions{
	RetriedFraction:             0.05,
	RecordsPerEnqueueInvocation: 10,
	TenantsPerEnqueueInvocation: 1,
	DeliverBatchSize:            10,
	EnqueueDurationMS:           30,
	DeliverOwnMS:                20,
	ReceiverLatencyMS:           100,
	EnqueueMemoryMB:             256,
	DeliverMemoryMB:             256,
	DeliveryIndexCopies:         0,
	DeliveryLogIndexWRU:         0,
	DeliveryLogIndexBytes:       0,
	DeliveryWRU:                 1,
	DeliveryWRUAfterFailure:     1,
	HealthWritesPerFailure:      0.5,
	EndpointRereadsPerFailure:   0,
	RetryGateReads:              0.3,
	DeadFraction:                0.001,
	DeathWRU:                    6.2,
	DeathRRU:                    0,
	SweepPasses:                 14,
	SweepReadsPerDead:           14,
	LogIndexWRU:                 0,
	LogIndexBytes:               0,
	MessageLogEntryBytes:        82,
	MessageLogPageBytes:         110,
	OutcomeRowBytes:             65,
	OutcomePageBytes:            210,
	StatsWRU:                    1,
	EndpointsPerBatch:           1,
	BatchesPerStatsWrite:        10,
	TypeStatsWRU:                1,
	TypesPerBatch:               1,
	StoredBytesPerRecord:        604,
	StoredMonths:                0.5,
	PITR:                        true,
	EnqueueLogBytes:             163,
	DeliveredLogBytes:           243,
	RetryLogBytes:               667,
	PlatformLogBytes:            250,
	DeliveriesPerDecrypt:        100,
	EgressBytesPerAttempt:       1000,
	MessageBytes:                360,
	GateWritesPerBatch:          0,
	EndpointCacheMissesPerBatch: 0.12,
}

// RateLimited is a's workload to one endpoint with a rate limit under a
// steady backlog: one limiter write per batch and window (RateLimitWritesPerBatch
// 1.2: a fifth of the batches take a second write, for a partial grant or
// the next window), the batch paced over RateWaitMS 900 ms, and
// deferred of the deliveries sent back to wait.
func (a Assumptions) RateLimited(deferred float64) Assumptions {
	a.RateLimitWritesPerBatch = 1.2
	a.RateWaitMS = 900
	a.DeferredFraction = deferred
	return a
}

// RateLimitedOff is a without a rate limit: no limiter writes, no wait,
// nothing deferred.
func (a Assumptions) RateLimitedOff() Assumptions {
	a.RateLimitWritesPerBatch, a.RateWaitMS, a.DeferredFraction = 0, 0, 0
	return a
}

// Initial is the estimate's inputs before measurement.
func Initial() Inputs { return InitialAssumptions.Inputs() }

// Inputs counts, per delivery to one endpoint, the requests the code makes
// today:
//
//	enqueue, per invocation:     Query each tenant's endpoints (once per tenant, at most
//	                             once per record); BatchGetItem whether the deliveries
//	                             exist (eventually consistent, 100 a request);
//	                             SendMessageBatch of the messages across records, ten a
//	                             request. No delivery write.
//	SQS event source, per batch: ReceiveMessage; DeleteMessageBatch of the successes
//	deliver, per batch:          BatchGetItem of the deliveries (consistent); of the
//	                             endpoint and its tombstone only when the instance's
//	                             cache (1 s) has no fresh enough copy: eventually
//	                             consistent on EndpointCacheMissesPerBatch of the
//	                             batches, strongly after the instance's own writes to
//	                             the endpoint (a failure count, a reset)
//	deliver, per attempt:        UpdateItem RecordAttempt, an upsert: the first attempt's
//	                             creates the record, and each writes its delivery log
//	                             entry (by_log: the listed attributes, one unit)
//	  on a failed attempt:       UpdateItem endpoint failure count; a share of a
//	                             SendMessageBatch (the retry sent again, delayed: waits
//	                             stay out of the queue's in-flight count)
//	  on the success after one:  UpdateItem endpoint failure count reset
//	deliver, per BatchesPerStatsWrite batches of an instance:
//	                             UpdateItem AddEndpointStats, the endpoint's hour of
//	                             attempt counters, once per endpoint (and hour) attempted;
//	                             UpdateItem AddEndpointTypeStats, the endpoint's hour of one
//	                             event type, once per endpoint, hour and type (TypesPerBatch)
//	outbox, per event:           the by_tenant index entry of the message log (the
//	                             producer's put writes it; hookline's cost, as its index)
//	deliver, per secret opened:  KMS Decrypt, once per DeliveriesPerDecrypt deliveries (the
//	                             opened secret is kept in the warm function)
//	deliver, per batch:          the endpoint's gate in the same BatchGetItem (consistent);
//	                             UpdateItem TakeGate and ReleaseGate (GateWritesPerBatch per
//	                             endpoint the batch sends to: none for a fast endpoint)
//	rate-limited endpoint only:  UpdateItem TakeSlots, RateLimitWritesPerBatch per batch;
//	                             RateWaitMS more duration per batch; a deferred delivery
//	                             (DeferredFraction) is a share of a SendMessageBatch (a
//	                             batch's deferrals go out together) and one more pass
//	                             through a batch (receive, delete, reads), no attempt
//
// When a call is added or removed, change it here: the counts are data.
func (a Assumptions) Inputs() Inputs {
	r := a.RetriedFraction
	attempts := 1 + r
	// A pass is a message through a deliver batch: an attempt, or a
	// deferral to wait for the rate limit.
	passes := attempts + a.DeferredFraction
	batches := passes / a.DeliverBatchSize
	// One-endpoint events: a SendMessageBatch carries the messages of up to
	// ten records of an invocation.
	perSend := math.Max(1, math.Min(10, a.RecordsPerEnqueueInvocation))
	// An attempt's write (the first creates the record) also writes
	// DeliveryIndexCopies index entries.
	update := a.DeliveryWRU * (1 + a.DeliveryIndexCopies)
	afterFailure := a.DeliveryWRUAfterFailure * (1 + a.DeliveryIndexCopies)
	// Of the 1+r attempt writes, 1-r are first attempts that succeed, r are
	// failed first attempts and r are successes after a failure: the last
	// two write a record holding the failure's answer.
	recordAttempt := ((1-r)*update + 2*r*afterFailure) / attempts
	// Packed: a batch's first-attempt successes (of one tenant and second)
	// are one outcome page, every other attempt writes its record.
	records, recordUnits, outcomePages, outcomeWRU, recordBytes, outcomeQueries := attempts, recordAttempt, 0.0, 0.0, a.StoredBytesPerRecord, 0.0
	if a.OutcomeRowBytes > 0 {
		rows := a.DeliverBatchSize * (1 - r) / attempts // a batch's first attempts that succeed
		records, recordUnits = 2*r, afterFailure
		outcomePages = (1 - r) / rows
		outcomeWRU = math.Ceil((rows*a.OutcomeRowBytes + a.OutcomePageBytes) / 1024)
		recordBytes = (1-r)*(a.OutcomeRowBytes+(a.OutcomePageBytes+100)/rows) + r*a.StoredBytesPerRecord
		outcomeQueries = a.TenantsPerEnqueueInvocation / a.RecordsPerEnqueueInvocation
	}
	chunks := func(bytes float64) float64 { return math.Max(1, math.Ceil(bytes/(64<<10))) }
	// The message log's pages: one per tenant per stream invocation, its
	// events' entries billed together.
	pagesPerDelivery, pageWRU, pageBytes := 0.0, 0.0, 0.0
	if a.MessageLogEntryBytes > 0 {
		pagesPerDelivery = a.TenantsPerEnqueueInvocation / a.RecordsPerEnqueueInvocation
		pageWRU = math.Ceil((a.MessageLogEntryBytes/pagesPerDelivery + a.MessageLogPageBytes) / 1024)
		pageBytes = a.MessageLogEntryBytes + a.MessageLogPageBytes*pagesPerDelivery
	}
	backedUp := 0.0
	if a.PITR {
		backedUp = recordBytes + pageBytes
	}
	in := Inputs{
		Enqueue: Function{
			InvocationsPerDelivery: 1 / a.RecordsPerEnqueueInvocation,
			DurationMS:             a.EnqueueDurationMS,
			MemoryMB:               a.EnqueueMemoryMB,
		},
		Deliver: Function{
			InvocationsPerDelivery: batches,
			DurationMS:             a.DeliverOwnMS + a.RateWaitMS,
			MemoryMB:               a.DeliverMemoryMB,
		},
		ReceiverLatencyMS: a.ReceiverLatencyMS,
		SQS: []Op{
			{Name: "enqueue SendMessageBatch (ten messages a request, across records)", PerDelivery: 1 / perSend, Units: chunks(perSend * a.MessageBytes)},
			{Name: "event source ReceiveMessage (one per batch)", PerDelivery: batches, Units: chunks(a.DeliverBatchSize * a.MessageBytes)},
			{Name: "event source DeleteMessageBatch (one per batch)", PerDelivery: batches, Units: 1},
			// A retry waits out of flight (deliver.DefaultHopAfter): sent
			// again, delayed, at the batch's end, ten to a request, and the
			// received message deleted with the batch's successes (the
			// event source mapping's DeleteMessageBatch, counted per batch
			// above), where it used to be one ChangeMessageVisibility each.
			// Counted as one request per retry, the worst case (one retry
			// per batch): no more than before.
			{Name: "deliver SendMessageBatch (a retry sent again, delayed; one request each at worst)", PerDelivery: r, Units: chunks(a.MessageBytes)},
			{Name: "deliver SendMessage of a death to the DLQ", PerDelivery: a.DeadFraction, Units: chunks(a.MessageBytes)},
			// The daily pass receives every DLQ message, ten a request,
			// for the DLQ's 14 days.
			{Name: "DLQ sweep ReceiveMessage (a dead message in the daily pass, ten a request)", PerDelivery: a.DeadFraction * a.SweepPasses / 10, Units: 1},
		},
		DynamoDBWrites: []Op{
			{Name: "deliver records: every attempt but a first one delivered, an UpdateItem each (before the outcome pages: a batch's first attempts delivered in one BatchWriteItem too, a record each)", PerDelivery: records, Units: recordUnits},
			{Name: "deliver outcome page BatchWriteItem (a batch's first attempts delivered, a page per tenant and second of their events)", PerDelivery: outcomePages, Units: outcomeWRU},
			{Name: "deliver by_log index entry (the delivery log: each attempt's write of the record)", PerDelivery: attempts, Units: a.DeliveryLogIndexWRU},
			{Name: "deliver RecordEndpointHealth UpdateItem (one per endpoint per batch that failed or reset: its count and its reset in one)", PerDelivery: r * a.HealthWritesPerFailure, Units: 1},
			{Name: "deliver AddEndpointStats UpdateItem (once per endpoint per instance's 10 s)", PerDelivery: batches / a.BatchesPerStatsWrite * a.EndpointsPerBatch, Units: a.StatsWRU},
			{Name: "deliver AddEndpointTypeStats UpdateItem (once per endpoint and event type per instance's 10 s)", PerDelivery: batches / a.BatchesPerStatsWrite * a.EndpointsPerBatch * a.TypesPerBatch, Units: a.TypeStatsWRU},
			{Name: "enqueue message log page BatchWriteItem (a page per tenant and second of the events' times per stream invocation)", PerDelivery: pagesPerDelivery, Units: pageWRU},
			{Name: "outbox by_tenant_shard index entry (the message log, once per event, until 2026-12-07)", PerDelivery: 1, Units: a.LogIndexWRU},
			{Name: "deliver a death's writes beyond a success's (measured)", PerDelivery: a.DeadFraction, Units: a.DeathWRU},
		},
		DynamoDBReads: []Op{
			{Name: "enqueue LoadWith BatchGetItem: does the delivery exist (eventual)", PerDelivery: 1, Units: 0.5},
			{Name: "deliver Load BatchGetItem: the delivery (consistent)", PerDelivery: passes, Units: 1},
			{Name: "deliver LoadWith BatchGetItem: the endpoint and its tombstone on a cache miss (eventual, once per endpoint per batch that misses)", PerDelivery: batches * a.EndpointsPerBatch * a.EndpointCacheMissesPerBatch, Units: 1},
			// What the instance wrote to the endpoint (a failure counted, a
			// reset) it patches into its copy, and reads again strongly at
			// its next batch only when it cannot know the result.
			{Name: "deliver LoadWith BatchGetItem: the endpoint and its tombstone after the instance wrote to it and could not patch its copy (consistent)", PerDelivery: r * a.EndpointRereadsPerFailure, Units: 2},
			{Name: "deliver Load BatchGetItem: the endpoint's gate (consistent, one per endpoint per batch)", PerDelivery: batches * a.EndpointsPerBatch, Units: 1},
			{Name: "deliver Load BatchGetItem: the endpoint's gate, a retry's batch being seldom full (measured)", PerDelivery: r * a.RetryGateReads, Units: 1},
			{Name: "enqueue Endpoints Query (eventual, once per tenant per invocation)", PerDelivery: a.TenantsPerEnqueueInvocation / a.RecordsPerEnqueueInvocation, Units: 0.5},
			{Name: "enqueue outcome pages Query beside its existence read (eventual, once per tenant and second of an invocation's events: a delivered delivery is not sent again)", PerDelivery: outcomeQueries, Units: 0.5},
			{Name: "deliver a death's reads beyond a success's (measured)", PerDelivery: a.DeadFraction, Units: a.DeathRRU},
			{Name: "DLQ sweep: a dead message's record read (once a day)", PerDelivery: a.DeadFraction * a.SweepReadsPerDead, Units: 1},
		},
		KMS: []Op{
			{Name: "deliver Decrypt of the endpoint's signing secret (kept an hour in the warm function)", PerDelivery: 1 / a.DeliveriesPerDecrypt, Units: 1},
		},
		StoredBytesPerDelivery: recordBytes*(1+a.DeliveryIndexCopies) + a.LogIndexBytes*math.Min(1, a.LogIndexWRU) + pageBytes +
			a.DeliveryLogIndexBytes*math.Min(1, a.DeliveryLogIndexWRU),
		BackedUpBytesPerDelivery: backedUp,
		StoredMonths:             a.StoredMonths,
		LogBytesPerDelivery: a.EnqueueLogBytes + a.DeliveredLogBytes + r*a.RetryLogBytes +
			a.PlatformLogBytes*(1/a.RecordsPerEnqueueInvocation+batches),
		EgressBytesPerDelivery: a.EgressBytesPerAttempt * attempts,
		ProducerOutboxWRU:      2,
	}
	if a.GateWritesPerBatch > 0 {
		in.DynamoDBWrites = append(in.DynamoDBWrites, Op{Name: "deliver TakeGate and ReleaseGate UpdateItems (an endpoint not shown fast: once each per endpoint per batch)", PerDelivery: batches * a.EndpointsPerBatch * a.GateWritesPerBatch, Units: 1})
	}
	if a.RateLimitWritesPerBatch > 0 {
		in.DynamoDBWrites = append(in.DynamoDBWrites, Op{Name: "deliver TakeSlots UpdateItem (rate-limited endpoint: once per batch and window)", PerDelivery: batches * a.RateLimitWritesPerBatch, Units: 1})
	}
	if a.DeferredFraction > 0 {
		in.SQS = append(in.SQS, Op{Name: "deliver SendMessageBatch (sent back to wait for the rate limit, a batch's together)", PerDelivery: a.DeferredFraction / a.DeliverBatchSize, Units: chunks(a.DeliverBatchSize * a.MessageBytes)})
	}
	return in
}
