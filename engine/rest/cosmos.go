package rest

import (
	"net/http"
	"strconv"

	"github.com/tablebench/tablebench/engine"
)

// Cosmos DB for Table's response headers ("Common Azure Cosmos DB REST
// response headers"): the request units a request was charged, on every
// answer, and on a 429 RequestRateTooLarge how many milliseconds to wait
// before retrying. Served under a profile that charges request units.
const (
	HeaderRequestCharge = "x-ms-request-charge"
	HeaderRetryAfterMs  = "x-ms-retry-after-ms"
)

// chargeWriter stamps an answer with the request units its engine call
// charged, as the answer's headers go out: the handler has made its
// engine call by then, or none (an answer refused before it: 0 RU).
type chargeWriter struct {
	http.ResponseWriter
	call    engine.Call
	stamped bool
}

// chargeWriterFor wraps w, and returns the engine call whose charge it
// reports.
func chargeWriterFor(w http.ResponseWriter) (http.ResponseWriter, *engine.Call) {
	cw := &chargeWriter{ResponseWriter: w}
	return cw, &cw.call
}

func (w *chargeWriter) stamp() {
	if !w.stamped {
		w.stamped = true
		w.Header().Set(HeaderRequestCharge, strconv.FormatFloat(w.call.Timing.Charge, 'f', 2, 64))
	}
}

func (w *chargeWriter) WriteHeader(status int) {
	w.stamp()
	w.ResponseWriter.WriteHeader(status)
}

func (w *chargeWriter) Write(p []byte) (int, error) {
	w.stamp()
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *chargeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
