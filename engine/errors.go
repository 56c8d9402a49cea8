package engine

import (
	"github.com/tablebench/tablebench/engine/tables"
	"net/http"
)

func newError(status int, code, msg string) *tables.Error {
	return &tables.Error{Status: status, Code: code, Message: msg, Index: -1}
}

func badRequest(code, msg string) *tables.Error { return newError(http.StatusBadRequest, code, msg) }

var (
	errTableNotFound  = newError(http.StatusNotFound, tables.CodeTableNotFound, "The table specified does not exist.")
	errEntityNotFound = newError(http.StatusNotFound, tables.CodeResourceNotFound, "The specified resource does not exist.")
	errEntityExists   = newError(http.StatusConflict, tables.CodeEntityAlreadyExists, "The specified entity already exists.")
	errCondition      = newError(http.StatusPreconditionFailed, tables.CodeUpdateConditionNotSatisfied, "The update condition specified in the request was not satisfied.")
)

// withIndex returns a copy of e for the index-th operation of a batch.
func withIndex(e *tables.Error, index int) *tables.Error {
	c := *e
	c.Index = index
	return &c
}
