package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/tablebench/tablebench/tables"
)

// Rates are the budgets the engine enforces, in entity units per second:
// one PartitionKey's and the account's. 0 is no budget.
type Rates struct {
	Partition float64 `json:"partition_rate"`
	Account   float64 `json:"account_rate"`
}

func (r Rates) validate() error {
	if r.Partition < 0 || r.Account < 0 || math.IsNaN(r.Partition) || math.IsNaN(r.Account) || math.IsInf(r.Partition, 0) || math.IsInf(r.Account, 0) {
		return fmt.Errorf("rates must be finite and not negative (0 is no budget): partition %g, account %g", r.Partition, r.Account)
	}
	return nil
}

// Rates returns the budgets in force.
func (e *Engine) Rates() Rates { return *e.rates.Load() }

// SetRates changes the budgets while the engine serves; keys' budgets take
// the new rate at their next request, keeping what they saved up to the new
// burst. Under the profile without a model the budgets are the only limit:
// a request over budget is refused at once with 503 ServerBusy.
func (e *Engine) SetRates(r Rates) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	e.rates.Store(&r)
	return nil
}

// retune sets a bucket to rate, keeping its saved tokens up to the new
// burst. Each request retunes two buckets, nearly always to their rate: that
// check inlines, and the change is a call.
func (b *bucket) retune(rate float64, burst time.Duration) {
	if b.rate != rate {
		b.setRate(rate, burst)
	}
}

func (b *bucket) setRate(rate float64, burst time.Duration) {
	nb := newBucket(rate, burst)
	b.rate, b.burst, b.tokens = nb.rate, nb.burst, math.Min(b.tokens, nb.burst)
}

// budgeted takes cost from the account's and pk's budgets of rp at at, in
// Unix nanoseconds, called with rp locked and the engine's stampMu held;
// it returns the refusal of the budget that refused, if one did.
func (e *Engine) budgeted(c *Call, rp *rangePartition, pk string, at int64, cost float64) *tables.Error {
	r := e.rates.Load()
	p := &e.cfg.Profile
	if r.Account > 0 {
		e.acct.retune(r.Account, p.AccountBurst)
		if !e.acct.take(at, cost) {
			return errAccountBusy
		}
	}
	if r.Partition > 0 {
		var b *bucket
		if k := c.keys(rp, pk); k != nil && k.bucket != nil && k.bgen == rp.bucketGen { // keyBucket's common case, without its call
			b = k.bucket
			b.retune(r.Partition, p.Burst)
		} else {
			b = rp.keyBucket(c, pk, r.Partition, p.Burst)
		}
		if !b.take(at, cost) {
			return errServerBusy
		}
	}
	return nil
}

// charged charges cost to the budgets after the fact (queries pay for what
// they scanned), going into debt if need be; called as budgeted is.
func (e *Engine) charged(rp *rangePartition, pk string, at int64, cost float64) {
	r := e.rates.Load()
	p := &e.cfg.Profile
	if r.Account > 0 {
		e.acct.retune(r.Account, p.AccountBurst)
		e.acct.charge(at, cost)
	}
	if r.Partition > 0 {
		rp.keyBucket(nil, pk, r.Partition, p.Burst).charge(at, cost)
	}
}

// MakeUnavailable makes the range partition that holds pk in table
// unavailable for d from now, as while the balancer moves it: requests to it
// wait up to the profile's hold time, then get 503 ServerBusy or, past their
// deadline, 500 OperationTimedOut.
func (e *Engine) MakeUnavailable(table, pk string, d time.Duration) error {
	t, terr := e.table(table)
	if terr != nil {
		return terr
	}
	if d <= 0 {
		return fmt.Errorf("engine: an unavailable period must be positive, not %v", d)
	}
	rp := t.lock(pk, false)
	rp.unavailableUntil = maxTime(rp.unavailableUntil, e.clock.Now().Add(d))
	rp.mu.Unlock()
	return nil
}

// unavailableNow refuses a request to a partition that is unavailable,
// under the profile without a model (which has no hold time): 503
// ServerBusy at once.
func unavailableNow(rp *rangePartition, now time.Time) *tables.Error {
	if now.Before(rp.unavailableUntil) {
		return errServerBusy
	}
	return nil
}

// ScaleLatency returns the profile with every latency a client sees (front
// end, commit and read stages, stalls) multiplied by f. Lane costs, and so
// what one partition can serve, are kept.
func (p Profile) ScaleLatency(f float64) Profile {
	for _, d := range []*time.Duration{&p.FEWrite, &p.FEWriteUnit, &p.FERead, &p.PostWrite, &p.PostUnit, &p.PostRead, &p.HiccupMin, &p.HiccupMax} {
		*d = scaleDur(*d, f)
	}
	return p
}

// doBudgeted is do under the profile without a model once budgets apply:
// no latency, but the partition's availability and the budgets are checked
// first, and a refusal is at once.
func (e *Engine) doBudgeted(t *table, pk string, k opKind, units float64, fn func(rp *rangePartition, now int64) (int, *tables.Error)) error {
	rp := t.lock(pk, false)
	defer rp.mu.Unlock()
	now := e.clock.Now()
	if err := unavailableNow(rp, now); err != nil {
		return err
	}
	if k != opQuery {
		e.stampMu.Lock()
		err := e.budgeted(nil, rp, pk, now.UnixNano(), units)
		e.stampMu.Unlock()
		if err != nil {
			return err
		}
	}
	scanned, err := fn(rp, now.UnixNano())
	if k == opQuery {
		e.stampMu.Lock()
		e.charged(rp, pk, now.UnixNano(), math.Max(1, float64(scanned)))
		e.stampMu.Unlock()
	}
	if err != nil {
		return err
	}
	return nil
}
