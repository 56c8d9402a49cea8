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
)

// withIndex returns a copy of e for the index-th operation of a batch.
func withIndex(e *tables.Error, index int) *tables.Error {
	c := *e
	c.Index = index
	return &c
}
