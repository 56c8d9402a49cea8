package engine

import (
	"github.com/tablebench/tablebench/tables"
	"net/http"
)

var (
	errTableNotFound  = tables.NewError(http.StatusNotFound, tables.CodeTableNotFound, "The table specified does not exist.")
	errEntityNotFound = tables.NewError(http.StatusNotFound, tables.CodeResourceNotFound, "The specified resource does not exist.")
	errEntityExists   = tables.NewError(http.StatusConflict, tables.CodeEntityAlreadyExists, "The specified entity already exists.")
	errCondition      = tables.NewError(http.StatusPreconditionFailed, tables.CodeUpdateConditionNotSatisfied, "The update condition specified in the request was not satisfied.")
	errServerBusy     = tables.NewError(http.StatusServiceUnavailable, tables.CodeServerBusy, tables.MsgServerBusy)
	errAccountBusy    = tables.NewError(http.StatusServiceUnavailable, tables.CodeServerBusy, tables.MsgAccountOverLimit)
)

// serverBusy returns the 503 ServerBusy answer with msg: one shared value
// for each of the service's two messages, as for the errors above, since a
// simulation at scale refuses hundreds of thousands of requests.
func serverBusy(msg string) *tables.Error {
	switch msg {
	case tables.MsgServerBusy:
		return errServerBusy
	case tables.MsgAccountOverLimit:
		return errAccountBusy
	}
	return tables.NewError(http.StatusServiceUnavailable, tables.CodeServerBusy, msg)
}

// withIndex returns a copy of e for the index-th operation of a batch.
func withIndex(e *tables.Error, index int) *tables.Error {
	c := *e
	c.Index = index
	return &c
}
