package aztarget

import (
	"net/http"
	"strconv"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads"
)

// Cosmos DB for Table says, on every response, the request units it
// charged (x-ms-request-charge) and, on a 429, how long to wait before
// retrying (x-ms-retry-after-ms): "Common Azure Cosmos DB REST response
// headers". The Table service sends neither.
const (
	headerRequestCharge = "x-ms-request-charge"
	headerRetryAfterMs  = "x-ms-retry-after-ms"
)

// serviceSaid is what the service said of one request beyond its status.
type serviceSaid struct {
	charge     float64
	retryAfter time.Duration
}

// serviceSaidKey is the context key under which Do hands the policy the
// serviceSaid of its request.
type serviceSaidKey struct{}

// serviceSaysPolicy reads, from each response, the headers serviceSaid
// holds, into the serviceSaid its request's context carries.
type serviceSaysPolicy struct{}

func (serviceSaysPolicy) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if resp != nil {
		if said, ok := req.Raw().Context().Value(serviceSaidKey{}).(*serviceSaid); ok {
			said.read(resp.Header)
		}
	}
	return resp, err
}

// read takes the charge and the retry-after from response headers; one
// that does not parse as a number is not there.
func (s *serviceSaid) read(h http.Header) {
	if v, err := strconv.ParseFloat(h.Get(headerRequestCharge), 64); err == nil && v >= 0 {
		s.charge = v
	}
	if v, err := strconv.ParseFloat(h.Get(headerRetryAfterMs), 64); err == nil && v > 0 {
		s.retryAfter = time.Duration(v * float64(time.Millisecond))
	}
}

// apply gives op the charge, and err (a service error) the retry-after.
func (s *serviceSaid) apply(op *workloads.Op, err error) {
	op.Charge = s.charge
	if e, ok := tables.AsError(err); ok && s.retryAfter > 0 {
		e.RetryAfter = s.retryAfter
	}
}
