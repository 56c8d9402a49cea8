package engine

import (
	"context"
	"time"
)

// Clock is the engine's one source of time. Model time is what the engine and
// its callers reason in (latencies, rates, the load balancer's delays); a
// Clock maps it onto wall time.
type Clock interface {
	// Now returns the current model time.
	Now() time.Time
	// SleepUntil blocks until model time t or until ctx is done, in which
	// case it returns ctx's error.
	SleepUntil(ctx context.Context, t time.Time) error
}

// ScaledClock runs model time Scale times faster than wall time, from the
// wall time at which it was made. A Scale of 1 is wall time itself. Inside a
// testing/synctest bubble it runs on the bubble's virtual time.
type ScaledClock struct {
	start time.Time
	scale float64
}

// NewScaledClock returns a clock whose model time runs scale times faster than
// wall time. A scale of zero or less is taken as 1.
func NewScaledClock(scale float64) *ScaledClock {
	if scale <= 0 {
		scale = 1
	}
	return &ScaledClock{start: time.Now(), scale: scale}
}

// Scale returns how many model seconds pass in one wall second.
func (c *ScaledClock) Scale() float64 { return c.scale }

// Now returns the current model time.
func (c *ScaledClock) Now() time.Time {
	if c.scale == 1 {
		return time.Now()
	}
	return c.start.Add(time.Duration(float64(time.Since(c.start)) * c.scale))
}

// SleepUntil blocks until model time t or until ctx is done.
func (c *ScaledClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := t.Sub(c.Now())
	if d <= 0 {
		return ctx.Err()
	}
	if c.scale != 1 {
		d = time.Duration(float64(d) / c.scale)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
