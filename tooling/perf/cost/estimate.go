package cost

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Deliveries is how many deliveries an estimate is for: a million.
const Deliveries = 1e6

// gib is the byte count of a GB as AWS bills storage, logs and transfer
// (DynamoDB states 1 GB = 1,024 MB; the same is assumed for the others).
const gib = 1 << 30

// Function is one Lambda function's share of a delivery.
type Function struct {
	// InvocationsPerDelivery is invocations divided by deliveries: 0.1
	// when each invocation handles ten deliveries.
	InvocationsPerDelivery float64
	// DurationMS is the mean duration of one invocation (the REPORT line's
	// Duration, with Init Duration amortised over invocations: a custom
	// runtime is billed its init). Estimate rounds it up to a whole
	// millisecond, as Lambda does per invocation; rounding the mean
	// instead of each invocation understates by less than 1 ms.
	DurationMS float64
	// MemoryMB is the configured memory; GB-seconds use MemoryMB/1024.
	MemoryMB float64
}

// Op is one kind of billed request, counted per delivery.
type Op struct {
	// Name says which call it is and who makes it.
	Name string
	// PerDelivery is how many such calls one delivery causes, on average.
	PerDelivery float64
	// Units is what one call is billed: write or read request units for
	// DynamoDB (the index writes it causes included), requests for SQS
	// (one per started 64 KB of payload).
	Units float64
}

// Inputs are what one delivery costs in billed units, averaged over a
// workload (one endpoint, a share of deliveries retried).
type Inputs struct {
	// Enqueue is the function on the outbox stream.
	Enqueue Function
	// Deliver is the function on the delivery queue. Its DurationMS is the
	// function's own time; ReceiverLatencyMS is added to it.
	Deliver Function
	// ReceiverLatencyMS is how long a deliver invocation waits on
	// receivers: it POSTs a batch concurrently and returns when the last
	// answer is in, so this is the slowest answer of a batch, not the mean.
	// It is billed as deliver duration.
	ReceiverLatencyMS float64

	// SQS lists the SQS requests per delivery.
	SQS []Op
	// DynamoDBWrites lists the write request units per delivery.
	DynamoDBWrites []Op
	// DynamoDBReads lists the read request units per delivery.
	DynamoDBReads []Op
	// KMS lists the KMS requests per delivery.
	KMS []Op

	// StoredBytesPerDelivery is the table and index storage one delivery
	// record occupies, 100 bytes of overhead per item and per index entry
	// included.
	StoredBytesPerDelivery float64
	// BackedUpBytesPerDelivery is the part of it point-in-time recovery is
	// billed on (the table, not its indexes). Zero when PITR is off.
	BackedUpBytesPerDelivery float64
	// StoredMonths is how long a record is kept (TTL retention plus the
	// lag before TTL deletes it), in months.
	StoredMonths float64

	// LogBytesPerDelivery is what both functions write to CloudWatch Logs
	// per delivery: JSON lines, EMF lines and the platform's START, END and
	// REPORT lines (amortised over a batch).
	LogBytesPerDelivery float64
	// EgressBytesPerDelivery is what the deliver function sends to
	// receivers on the internet per delivery, every attempt, headers and
	// TLS overhead included.
	EgressBytesPerDelivery float64

	// ProducerOutboxWRU is the producer's own outbox write per event, in
	// write request units (a transactional put of an item up to 1 KB is
	// 2). It is the producer's cost, not hookline's: Breakdown reports it
	// apart and leaves it out of Total.
	ProducerOutboxWRU float64
}

// OpCost is what one kind of request costs per million deliveries.
type OpCost struct {
	// Service is "SQS", "DynamoDB writes", "DynamoDB reads" or "KMS".
	Service string
	// Name is the Op's name.
	Name string
	// Units is billed units per delivery (PerDelivery × Units).
	Units float64
	// USD per million deliveries.
	USD float64
}

// Breakdown is the cost of Deliveries deliveries, in US dollars.
type Breakdown struct {
	// LambdaRequests is both functions' invocations.
	LambdaRequests float64
	// LambdaEnqueue is the enqueue function's duration.
	LambdaEnqueue float64
	// LambdaDeliver is the deliver function's duration, receiver latency
	// included.
	LambdaDeliver float64
	// SQS is every request on the delivery queue.
	SQS float64
	// DynamoDBWrites and DynamoDBReads are the state table's request units.
	DynamoDBWrites float64
	DynamoDBReads  float64
	// KMS is the requests that open endpoints' signing secrets.
	KMS float64
	// DynamoDBStorage is the state table's storage and backups.
	DynamoDBStorage float64
	// Logs is CloudWatch Logs ingestion.
	Logs float64
	// DataTransfer is the POSTs to receivers.
	DataTransfer float64
	// Total is hookline's cost: the sum of the fields above.
	Total float64
	// ProducerOutbox is the producer's outbox write, not in Total.
	ProducerOutbox float64
	// Ops is each SQS and DynamoDB request kind's cost, most expensive
	// first.
	Ops []OpCost
}

// Estimate returns the cost of Deliveries deliveries at prices p:
//
//	Lambda requests  = N × (enqueue + deliver invocations per delivery) × price per 1M / 1M
//	Lambda duration  = N × invocations × ⌈ms⌉/1000 × MB/1024 × price per GB-s   (each function)
//	SQS              = N × Σ(calls × requests per call) × price per 1M / 1M
//	DynamoDB         = N × Σ(calls × units per call) × price per 1M / 1M          (writes, reads)
//	KMS              = N × Σ(calls × requests per call) × price per 1M / 1M
//	storage          = N × bytes/GiB × months × price per GB-month                (table+indexes; PITR on table)
//	logs, transfer   = N × bytes/GiB × price per GB
//
// with N = Deliveries. Tiers and free tiers are not applied: each price is
// the first paid tier.
func Estimate(p Prices, in Inputs) Breakdown {
	const n = Deliveries
	perMillion := func(units float64, price Price) float64 { return n * units * price.USD / 1e6 }
	duration := func(f Function, extraMS float64) float64 {
		ms := math.Ceil(f.DurationMS + extraMS)
		return n * f.InvocationsPerDelivery * ms / 1000 * f.MemoryMB / 1024 * p.LambdaArmGBSecond.USD
	}
	var b Breakdown
	b.LambdaRequests = perMillion(in.Enqueue.InvocationsPerDelivery+in.Deliver.InvocationsPerDelivery, p.LambdaRequests)
	b.LambdaEnqueue = duration(in.Enqueue, 0)
	b.LambdaDeliver = duration(in.Deliver, in.ReceiverLatencyMS)
	ops := func(service string, list []Op, price Price) float64 {
		sum := 0.0
		for _, op := range list {
			units := op.PerDelivery * op.Units
			c := OpCost{Service: service, Name: op.Name, Units: units, USD: perMillion(units, price)}
			b.Ops = append(b.Ops, c)
			sum += c.USD
		}
		return sum
	}
	b.SQS = ops("SQS", in.SQS, p.SQSRequests)
	b.DynamoDBWrites = ops("DynamoDB writes", in.DynamoDBWrites, p.DynamoDBWrites)
	b.DynamoDBReads = ops("DynamoDB reads", in.DynamoDBReads, p.DynamoDBReads)
	b.KMS = ops("KMS", in.KMS, p.KMSRequests)
	b.DynamoDBStorage = n*in.StoredBytesPerDelivery/gib*in.StoredMonths*p.DynamoDBStorage.USD +
		n*in.BackedUpBytesPerDelivery/gib*in.StoredMonths*p.DynamoDBBackup.USD
	b.Logs = n * in.LogBytesPerDelivery / gib * p.LogsIngestion.USD
	b.DataTransfer = n * in.EgressBytesPerDelivery / gib * p.DataTransferOut.USD
	b.Total = b.LambdaRequests + b.LambdaEnqueue + b.LambdaDeliver + b.SQS +
		b.DynamoDBWrites + b.DynamoDBReads + b.KMS + b.DynamoDBStorage + b.Logs + b.DataTransfer
	b.ProducerOutbox = perMillion(in.ProducerOutboxWRU, p.DynamoDBWrites)
	slices.SortStableFunc(b.Ops, func(x, y OpCost) int { return cmp.Compare(y.USD, x.USD) })
	return b
}

// Table renders the breakdown as a markdown table, services then the
// request kinds behind SQS, DynamoDB and KMS, in dollars per million
// deliveries.
func (b Breakdown) Table() string {
	var s strings.Builder
	row := func(name string, usd float64) {
		share := 0.0
		if b.Total > 0 {
			share = 100 * usd / b.Total
		}
		fmt.Fprintf(&s, "| %s | %.3f | %.0f%% |\n", name, usd, share)
	}
	s.WriteString("| per million deliveries | USD | share |\n|---|---:|---:|\n")
	row("Lambda requests", b.LambdaRequests)
	row("Lambda duration, enqueue", b.LambdaEnqueue)
	row("Lambda duration, deliver", b.LambdaDeliver)
	row("SQS requests", b.SQS)
	row("DynamoDB writes", b.DynamoDBWrites)
	row("DynamoDB reads", b.DynamoDBReads)
	row("KMS requests", b.KMS)
	row("DynamoDB storage and PITR", b.DynamoDBStorage)
	row("CloudWatch Logs ingestion", b.Logs)
	row("Data transfer out", b.DataTransfer)
	fmt.Fprintf(&s, "| **hookline total** | **%.3f** | 100%% |\n", b.Total)
	fmt.Fprintf(&s, "| producer's outbox write (not in total) | %.3f | |\n", b.ProducerOutbox)
	s.WriteString("\n| request kind | units per delivery | USD | share |\n|---|---:|---:|---:|\n")
	for _, op := range b.Ops {
		share := 0.0
		if b.Total > 0 {
			share = 100 * op.USD / b.Total
		}
		fmt.Fprintf(&s, "| %s: %s | %.3f | %.3f | %.0f%% |\n", op.Service, op.Name, op.Units, op.USD, share)
	}
	return s.String()
}
