package sqsfake

import (
	"strconv"
	"time"
)

// ReceiveAt puts body in queueURL as sent and received at at, in one step,
// and answers its receipt handle: for a test that plays the poller (the
// Lambda event source mapping), handing what it received to a handler
// itself. The message is taken as sent (SendMessage's rules are not
// applied to it) and received once, hidden for the queue's visibility
// timeout from at, so that the 12 h rule and MessageNotInflight count from
// at. Past the in-flight limit at at, nothing is received: ok is false,
// and the refusal is kept, as ReceiveMessage keeps it.
func (q *Queue) ReceiveAt(queueURL, body string, at time.Time) (handle string, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := q.inFlightLocked(queueURL, at); n >= q.cfg.InFlightLimit {
		_ = q.refuse("OverLimit: %d messages in flight, the limit is %d: nothing received", n, q.cfg.InFlightLimit)
		return "", false
	}
	q.seq++
	m := &msg{id: "m-" + strconv.Itoa(q.seq), body: body, receives: 1, receivedAt: at, visibleAt: at.Add(q.cfg.VisibilityTimeout)}
	q.seq++
	m.handle = m.id + "#" + strconv.Itoa(q.seq)
	q.queues[queueURL] = append(q.queues[queueURL], m)
	return m.handle, true
}
