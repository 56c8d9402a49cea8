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
	// The service's throttling answers: shared, as the errors above, since a
	// simulation at scale refuses hundreds of thousands of requests.
	errServerBusy  = tables.NewError(http.StatusServiceUnavailable, tables.CodeServerBusy, tables.MsgServerBusy)
	errAccountBusy = tables.NewError(http.StatusServiceUnavailable, tables.CodeServerBusy, tables.MsgAccountOverLimit)
	errTimedOut    = tables.NewError(http.StatusInternalServerError, tables.CodeOperationTimedOut, tables.MsgTimedOut)
)

// withIndex returns a copy of e for the index-th operation of a batch.
func withIndex(e *tables.Error, index int) *tables.Error {
	c := *e
	c.Index = index
	return &c
}
