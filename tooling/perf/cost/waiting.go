package cost

// WaitingReceivesPerHour is how often a message that keeps waiting (an
// open circuit breaker's, or its tenant's over its share) comes back
// through a deliver batch in an hour once its waits have grown: the
// deliver function floors each wait at half of a span that doubles per
// deferral, 512 s for the breaker from the 10th deferral and 450 s for a
// tenant from the 8th (deliver.BreakerReceivesPerHour, which a test holds
// this to; the store's tests import this package, so it cannot import
// deliver). Its first hour holds at most twice as many.
const WaitingReceivesPerHour = 8

// WaitingPass is what one return of a waiting message costs, in billed
// units: a share of its batch's ReceiveMessage, DeleteMessageBatch and
// invocation (one in DeliverBatchSize), a share of the SendMessageBatch
// that sends the batch's waiting messages again together, its delivery's
// and its endpoint gate's strongly consistent reads (1 RRU each), and
// the deliver function's own time, shared likewise (no request is sent;
// a tenant-busy wait may add a share of its tenant gate's two writes).
type WaitingPass struct {
	SQSRequests, ReadUnits, Invocations, GBSeconds float64
}

// Waiting is one waiting return's billed units under a.
func (a Assumptions) Waiting() WaitingPass {
	share := 1 / a.DeliverBatchSize
	return WaitingPass{
		// ReceiveMessage, DeleteMessageBatch and SendMessageBatch, each
		// shared by the batch's messages.
		SQSRequests: 3 * share,
		ReadUnits:   2,
		Invocations: share,
		GBSeconds:   share * a.DeliverOwnMS / 1000 * a.DeliverMemoryMB / 1024,
	}
}

// WaitingHourUSD is what one message that keeps waiting costs an hour at
// p, at WaitingReceivesPerHour returns.
func (a Assumptions) WaitingHourUSD(p Prices) float64 {
	w := a.Waiting()
	per := w.SQSRequests*p.SQSRequests.USD/1e6 + w.ReadUnits*p.DynamoDBReads.USD/1e6 +
		w.Invocations*p.LambdaRequests.USD/1e6 + w.GBSeconds*p.LambdaArmGBSecond.USD
	return WaitingReceivesPerHour * per
}
