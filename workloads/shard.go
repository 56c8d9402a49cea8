package workloads

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/tables"
)

// DefaultRendezvous is how long a shard waits for the others by default.
const DefaultRendezvous = 5 * time.Minute

// SkewMeter is implemented by targets that can tell how far the service's
// clock is from this machine's: service time minus local time.
type SkewMeter interface {
	Skew(ctx context.Context) (time.Duration, error)
}

// shardTable is the table of a sharded run: named after its job alone, so
// every shard finds it.
func shardTable(job string) string { return "tbshard" + alnum(job) }

// rendezvous is how the shards of a run meet through its table: each
// writes a ready row and waits until all are there; shard 0 then writes
// the start time (now, in the service's time, plus a margin) unless the
// spec fixes one; every shard waits until then, corrected by its clock's
// skew against the service, and starts its warm-up.
type rendezvous struct {
	r      *Coordinator
	table  string
	pk     string
	sess   Session
	skew   time.Duration
	wait   time.Duration
	poll   time.Duration
	margin time.Duration
}

func (r *Coordinator) newRendezvous(table string) *rendezvous {
	s := &r.spec
	wait := s.Rendezvous
	if wait <= 0 {
		wait = DefaultRendezvous
	}
	return &rendezvous{r: r, table: table, pk: "tablebench-shards-" + s.JobID, sess: r.target.NewSession(s.Seed), wait: wait,
		poll: 250 * time.Millisecond, margin: 3 * time.Second}
}

func (z *rendezvous) row(kind string, i int) string { return fmt.Sprintf("%s-%04d", kind, i) }

func (z *rendezvous) now() time.Time { return z.r.target.Clock().Now() }

func (z *rendezvous) sleep(ctx context.Context, d time.Duration) error {
	c := z.r.target.Clock()
	return c.SleepUntil(ctx, c.Now().Add(d))
}

// put writes one row, waiting while the table does not exist yet (shard 0
// makes it) and taking a row already there as written (a retried write).
func (z *rendezvous) put(ctx context.Context, rk string, props ...tables.Property) error {
	deadline := z.now().Add(z.wait)
	for {
		rctx, cancel := z.r.requestContext(ctx)
		op := &Op{Kind: OpInsert, Table: z.table, Entity: tables.Entity{PartitionKey: z.pk, RowKey: rk, Properties: props}}
		_, err := z.sess.Do(rctx, op)
		cancel()
		code := Outcome(err)
		switch {
		case err == nil, code == tables.CodeEntityAlreadyExists:
			return nil
		case code == tables.CodeTableNotFound || code == tables.CodeResourceNotFound:
			if z.now().After(deadline) {
				return fmt.Errorf("table %s was not created within %v: did shard 0 start? (its job ID must be the same as this one's)", z.table, z.wait)
			}
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			return fmt.Errorf("writing %s: %w", rk, timeoutHint(err, z.r.spec.RequestTimeout))
		}
		if err := z.sleep(ctx, z.poll); err != nil {
			return err
		}
	}
}

// get reads a row; ok is false while it is not there.
func (z *rendezvous) get(ctx context.Context, rk string, into *tables.Entity) (bool, error) {
	rctx, cancel := z.r.requestContext(ctx)
	defer cancel()
	_, err := z.sess.Do(rctx, &Op{Kind: OpGet, Table: z.table, PartitionKey: z.pk, RowKey: rk, Read: into})
	switch code := Outcome(err); {
	case err == nil:
		return true, nil
	case code == tables.CodeTableNotFound:
		return false, errTableGone
	case code == tables.CodeResourceNotFound:
		return false, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	default:
		return false, fmt.Errorf("reading %s: %w", rk, timeoutHint(err, z.r.spec.RequestTimeout))
	}
}

var errTableGone = errors.New("the run's table is gone: shard 0 stopped waiting and deleted it (see its error)")

// all waits until every shard has written its kind of row, naming the
// shards still missing when the wait ends.
func (z *rendezvous) all(ctx context.Context, kind string, wait time.Duration) error {
	n := z.r.spec.Shards
	deadline := z.now().Add(wait)
	for {
		var missing []string
		for i := range n {
			ok, err := z.get(ctx, z.row(kind, i), nil)
			if err != nil {
				return err
			}
			if !ok {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if z.now().After(deadline) {
			return fmt.Errorf("shard(s) %s of %d did not report %s within %v (are they running, with job ID %s and the same target?)",
				strings.Join(missing, ", "), n, kind, wait, z.r.spec.JobID)
		}
		if err := z.sleep(ctx, z.poll); err != nil {
			return err
		}
	}
}

// meet measures the skew, waits for every shard and then for the agreed
// start, and returns this shard's record of it.
func (z *rendezvous) meet(ctx context.Context) (*results.Shard, error) {
	s := &z.r.spec
	info := &results.Shard{Index: s.Shard, Count: s.Shards}
	if m, ok := z.r.target.(SkewMeter); ok {
		skew, err := m.Skew(ctx)
		if err != nil {
			return nil, fmt.Errorf("measuring the clock's skew against the service: %w", err)
		}
		z.skew = skew
		ms := float64(skew) / float64(time.Millisecond)
		info.SkewMs = &ms
	}
	if err := z.put(ctx, z.row("ready", s.Shard)); err != nil {
		return nil, err
	}
	if err := z.all(ctx, "ready", z.wait); err != nil {
		return nil, err
	}
	start := s.StartAt
	if start.IsZero() {
		if s.Shard == 0 {
			start = z.now().Add(z.skew).Add(z.margin)
			if err := z.put(ctx, "start", tables.Int64("At", start.UnixNano())); err != nil {
				return nil, err
			}
		}
		var row tables.Entity
		deadline := z.now().Add(z.wait)
		for {
			ok, err := z.get(ctx, "start", &row)
			if err != nil {
				return nil, err
			}
			if ok {
				break
			}
			if z.now().After(deadline) {
				return nil, fmt.Errorf("shard 0 wrote no start time within %v", z.wait)
			}
			if err := z.sleep(ctx, z.poll); err != nil {
				return nil, err
			}
		}
		p, _ := row.Property("At")
		at, ok := p.Value.(int64)
		if !ok {
			return nil, errors.New("the start row holds no start time")
		}
		start = time.Unix(0, at).UTC()
	}
	info.Start = start
	local := start.Add(-z.skew)
	if late := z.now().Sub(local); late > time.Second {
		return nil, fmt.Errorf("the start %s has passed by %v: give a --start-at far enough ahead for every shard to be up", start.Format(time.RFC3339), late.Round(time.Second))
	}
	if err := z.r.target.Clock().SleepUntil(ctx, local); err != nil {
		return nil, err
	}
	return info, nil
}

// finish reports this shard done; shard 0, which deletes the table, first
// waits for every other shard to finish.
func (z *rendezvous) finish(ctx context.Context) error {
	if err := z.put(ctx, z.row("done", z.r.spec.Shard)); err != nil {
		return err
	}
	if z.r.spec.Shard != 0 {
		return nil
	}
	return z.all(ctx, "done", z.wait)
}
