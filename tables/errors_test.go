package tables

import (
	"errors"
	"fmt"
	"testing"
)

// TestAsError: an engine error is found as it is or wrapped, and looking
// for one costs no allocation when the error is one or none: the
// simulator asks of every request's outcome.
func TestAsError(t *testing.T) {
	err := NewError(503, CodeServerBusy, MsgServerBusy)
	for _, c := range []struct {
		in   error
		want *Error
	}{{err, err}, {fmt.Errorf("wrapped: %w", err), err}, {nil, nil}, {errors.New("other"), nil}} {
		if got, ok := AsError(c.in); got != c.want || ok != (c.want != nil) {
			t.Errorf("AsError(%v) = %v, %v; want %v", c.in, got, ok, c.want)
		}
	}
	var e error = err
	if n := testing.AllocsPerRun(100, func() { AsError(e); AsError(nil) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
