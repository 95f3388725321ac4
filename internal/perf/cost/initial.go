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
	// DeliverBatchSize is messages per deliver invocation: the event source
	// mapping's batch size, 10 (infra/functions.go), when the queue is busy.
	DeliverBatchSize float64

	// EnqueueDurationMS per invocation: 30 assumed.
	EnqueueDurationMS float64
	// DeliverOwnMS is the deliver function's own time per invocation
	// (reads, signing, writes), without waiting on receivers: 20 assumed.
	DeliverOwnMS float64
	// ReceiverLatencyMS is the slowest receiver answer of a batch: 100
	// assumed, which with DeliverOwnMS makes the 120 ms.
	ReceiverLatencyMS float64
	// EnqueueMemoryMB and DeliverMemoryMB: 256 each (infra/functions.go).
	EnqueueMemoryMB, DeliverMemoryMB float64

	// DeliveryIndexCopies is how many index entries each update of a
	// delivery record (each attempt) also writes: 0, since gsi2
	// (deliveries of an event) projects keys only and an update changes
	// none of them. It was 1 while gsi2 projected all attributes, and is 1
	// again for an index that does. The put that creates a record writes
	// its gsi2 entry whatever the projection: one index write unit.
	DeliveryIndexCopies float64
	// EventIndexEntryBytes is the billed storage of a delivery's gsi2
	// entry when gsi2 projects keys only: the table's and the index's keys
	// plus 100 bytes of overhead (see the tests).
	EventIndexEntryBytes float64
	// DeliveryWRU is the WRUs of one write of a delivery record: 1, since
	// the record stays under 1 KB (428 bytes created, 623 after one
	// attempt; see the tests). It holds the message only once dead.
	DeliveryWRU float64
	// DeliveryWRUAfterFailure is the WRUs of the writes that follow a
	// failed attempt: its attempt log keeps up to 1 KB of the receiver's
	// answer, so a long error page pushes the record past 1 KB (1,626
	// bytes with a 1 KB excerpt): 2 then, 1 with short error bodies.
	DeliveryWRUAfterFailure float64
	// ResetsPerFailure is how many endpoint failure-count resets follow
	// one failed attempt: a success resets the count only when the
	// endpoint it read had failures, so about 1 (more when concurrent
	// deliveries read the count before the reset lands).
	ResetsPerFailure float64

	// StoredBytesPerRecord is a delivered record's billed size: 623 bytes
	// plus 100 bytes of item overhead.
	StoredBytesPerRecord float64
	// StoredMonths: 30 days' TTL retention plus deletion lag, about 1.
	StoredMonths float64
	// PITR is whether point-in-time recovery is on: it is (infra/tables.go).
	PITR bool

	// EnqueueLogBytes per delivery: 0 at INFO, measured by
	// internal/enqueue's TestLogBytesPerDelivery ("delivery created" is a
	// DEBUG line; it was 264 bytes at INFO).
	EnqueueLogBytes float64
	// DeliveredLogBytes per successful attempt: the "delivered" line and
	// its share of the batch's one EMF document, 407 bytes in a batch of
	// ten messages, 611 in a batch of one (internal/deliver's
	// TestLogBytesPerDelivery). It was 729 with an EMF line per message and
	// metric.
	DeliveredLogBytes float64
	// RetryLogBytes per failed attempt: "retry scheduled" and its share of
	// the EMF document, 450 bytes in a batch of ten, 713 in a batch of one
	// (it was 935).
	RetryLogBytes float64
	// PlatformLogBytes per invocation: Lambda's START, END and REPORT
	// lines in the text format, about 250 bytes (not measured here).
	PlatformLogBytes float64

	// EgressBytesPerAttempt is one POST on a reused connection: about 500
	// bytes of headers, a 205-byte body for a small event, and TCP/TLS
	// framing: 1,000 assumed.
	EgressBytesPerAttempt float64
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
	DeliverBatchSize:            10,
	EnqueueDurationMS:           30,
	DeliverOwnMS:                20,
	ReceiverLatencyMS:           100,
	EnqueueMemoryMB:             256,
	DeliverMemoryMB:             256,
	DeliveryIndexCopies:         0,
	EventIndexEntryBytes:        266,
	DeliveryWRU:                 1,
	DeliveryWRUAfterFailure:     1,
	ResetsPerFailure:            1,
	StoredBytesPerRecord:        723,
	StoredMonths:                1,
	PITR:                        true,
	EnqueueLogBytes:             0,
	DeliveredLogBytes:           407,
	RetryLogBytes:               450,
	PlatformLogBytes:            250,
	EgressBytesPerAttempt:       1000,
	MessageBytes:                360,
}

// Initial is the estimate's inputs before measurement.
func Initial() Inputs { return InitialAssumptions.Inputs() }

// Inputs counts, per delivery to one endpoint, the requests the code makes
// today:
//
//	enqueue, per invocation:     Query each tenant's endpoints (once per tenant, at most
//	                             once per record); BatchGetItem whether the deliveries
//	                             exist (consistent, 100 a request); SendMessageBatch of
//	                             the messages across records, ten a request; then a
//	                             conditional PutItem per delivery, enqueued_at included
//	                             (+ its gsi2 entry)
//	SQS event source, per batch: ReceiveMessage; DeleteMessageBatch of the successes
//	deliver, per batch:          BatchGetItem of the deliveries and their endpoints
//	                             (consistent; an endpoint once per batch, counted here
//	                             once per message)
//	deliver, per attempt:        UpdateItem RecordAttempt (no index write: gsi2 is keys
//	                             only and no key changes)
//	  on a failed attempt:       UpdateItem endpoint failure count; ChangeMessageVisibility
//	  on the success after one:  UpdateItem endpoint failure count reset
//
// When deliver receives a message before enqueue's put (enqueue sends
// first), its RecordAttempt creates the record (and its gsi2 entry) and the
// put fails its condition, which is billed as a write: the same units in
// another order, so it is not counted apart. When a call is added or
// removed, change it here: the counts are data.
func (a Assumptions) Inputs() Inputs {
	r := a.RetriedFraction
	attempts := 1 + r
	batches := attempts / a.DeliverBatchSize
	// One-endpoint events: a SendMessageBatch carries the messages of up to
	// ten records of an invocation.
	perSend := math.Max(1, math.Min(10, a.RecordsPerEnqueueInvocation))
	// The creating put writes the record and one gsi2 entry (under 1 KB
	// whatever the projection); an update also rewrites DeliveryIndexCopies
	// index entries.
	create := a.DeliveryWRU + 1
	update := a.DeliveryWRU * (1 + a.DeliveryIndexCopies)
	afterFailure := a.DeliveryWRUAfterFailure * (1 + a.DeliveryIndexCopies)
	// Of the 1+r attempt writes, 1-r are first attempts that succeed, r are
	// failed first attempts (written at the record's first-attempt size)
	// and r are successes after a failure.
	recordAttempt := ((1-r)*update + r*update + r*afterFailure) / attempts
	chunks := func(bytes float64) float64 { return math.Max(1, math.Ceil(bytes/(64<<10))) }
	indexBytes := a.EventIndexEntryBytes
	if a.DeliveryIndexCopies > 0 {
		indexBytes = a.DeliveryIndexCopies * a.StoredBytesPerRecord
	}
	backedUp := 0.0
	if a.PITR {
		backedUp = a.StoredBytesPerRecord
	}
	return Inputs{
		Enqueue: Function{
			InvocationsPerDelivery: 1 / a.RecordsPerEnqueueInvocation,
			DurationMS:             a.EnqueueDurationMS,
			MemoryMB:               a.EnqueueMemoryMB,
		},
		Deliver: Function{
			InvocationsPerDelivery: batches,
			DurationMS:             a.DeliverOwnMS,
			MemoryMB:               a.DeliverMemoryMB,
		},
		ReceiverLatencyMS: a.ReceiverLatencyMS,
		SQS: []Op{
			{Name: "enqueue SendMessageBatch (ten messages a request, across records)", PerDelivery: 1 / perSend, Units: chunks(perSend * a.MessageBytes)},
			{Name: "event source ReceiveMessage (one per batch)", PerDelivery: batches, Units: chunks(a.DeliverBatchSize * a.MessageBytes)},
			{Name: "event source DeleteMessageBatch (one per batch)", PerDelivery: batches, Units: 1},
			{Name: "deliver ChangeMessageVisibility (retry)", PerDelivery: r, Units: 1},
		},
		DynamoDBWrites: []Op{
			{Name: "enqueue CreateDelivery PutItem (enqueued_at included) + gsi2 entry", PerDelivery: 1, Units: create},
			{Name: "deliver RecordAttempt UpdateItem", PerDelivery: attempts, Units: recordAttempt},
			{Name: "deliver RecordEndpointFailure UpdateItem", PerDelivery: r, Units: 1},
			{Name: "deliver ResetEndpointFailures UpdateItem", PerDelivery: r * a.ResetsPerFailure, Units: 1},
		},
		DynamoDBReads: []Op{
			{Name: "enqueue Load BatchGetItem: does the delivery exist (consistent)", PerDelivery: 1, Units: 1},
			{Name: "deliver Load BatchGetItem: the delivery (consistent)", PerDelivery: attempts, Units: 1},
			{Name: "deliver Load BatchGetItem: the endpoint (consistent, at most one per message)", PerDelivery: attempts, Units: 1},
			{Name: "enqueue Endpoints Query (eventual, at most one per record)", PerDelivery: 1, Units: 0.5},
		},
		StoredBytesPerDelivery:   a.StoredBytesPerRecord + indexBytes,
		BackedUpBytesPerDelivery: backedUp,
		StoredMonths:             a.StoredMonths,
		LogBytesPerDelivery: a.EnqueueLogBytes + a.DeliveredLogBytes + r*a.RetryLogBytes +
			a.PlatformLogBytes*(1/a.RecordsPerEnqueueInvocation+batches),
		EgressBytesPerDelivery: a.EgressBytesPerAttempt * attempts,
		ProducerOutboxWRU:      2,
	}
}
