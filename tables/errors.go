package tables

import (
	"errors"
	"fmt"
	"time"
)

// Error codes the engine answers with. They are the Table service's own codes,
// so the REST front end and the workloads report them exactly as the service
// would.
const (
	CodeEntityAlreadyExists             = "EntityAlreadyExists"
	CodeResourceNotFound                = "ResourceNotFound"
	CodeTableNotFound                   = "TableNotFound"
	CodeTableAlreadyExists              = "TableAlreadyExists"
	CodeTableBeingDeleted               = "TableBeingDeleted"
	CodeUpdateConditionNotSatisfied     = "UpdateConditionNotSatisfied"
	CodePropertiesNeedValue             = "PropertiesNeedValue"
	CodeInvalidInput                    = "InvalidInput"
	CodeInvalidDuplicateRow             = "InvalidDuplicateRow"
	CodeCommandsInBatchActOnDifferentPK = "CommandsInBatchActOnDifferentPartitions"
	CodeOutOfRangeInput                 = "OutOfRangeInput"
	CodePropertyValueTooLarge           = "PropertyValueTooLarge"
	CodeEntityTooLarge                  = "EntityTooLarge"
	CodeRequestBodyTooLarge             = "RequestBodyTooLarge"
	CodeTooManyProperties               = "TooManyProperties"
	CodePropertyNameInvalid             = "PropertyNameInvalid"
	CodePropertyNameTooLong             = "PropertyNameTooLong"
	CodeDuplicatePropertiesSpecified    = "DuplicatePropertiesSpecified"
	CodeInvalidValueType                = "InvalidValueType"
	CodeInvalidResourceName             = "InvalidResourceName"
	CodeInvalidQueryParameterValue      = "InvalidQueryParameterValue"
	CodeNotImplemented                  = "NotImplemented"
	CodeServerBusy                      = "ServerBusy"
	CodeOperationTimedOut               = "OperationTimedOut"
	CodeInternalError                   = "InternalError"
	// CodeRequestRateTooLarge is Cosmos DB's answer, with status 429, to a
	// request over its physical partition's provisioned throughput for the
	// current second; the x-ms-retry-after-ms header says when to retry.
	CodeRequestRateTooLarge = "RequestRateTooLarge"
	// CodePartitionKeyQuotaExceeded is Cosmos DB's answer, with status 403,
	// to a write that would grow one PartitionKey past its 20 GB.
	CodePartitionKeyQuotaExceeded = "PartitionKeyQuotaExceeded"
)

// The service's messages for throttling answers. Which ServerBusy message is
// sent tells the user which limit was hit.
const (
	MsgServerBusy       = "The server is currently unable to receive requests. Please retry your request."
	MsgAccountOverLimit = "Operations per second is over the account limit."
	MsgTimedOut         = "The operation could not be completed within the permitted time."
	MsgRequestRateLarge = "Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later."
)

// Error is an answer of the engine that is not a success. It carries what the
// service would put on the wire: the HTTP status, the error code and the
// message. For a failed entity group transaction Index is the 0-based index
// of the failing operation; it is -1 otherwise.
type Error struct {
	Status  int
	Code    string
	Message string
	Index   int
	// RetryAfter is how long the service asks the client to wait before
	// retrying (x-ms-retry-after-ms on a 429 RequestRateTooLarge); zero
	// when it does not say.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("%d %s: %d:%s", e.Status, e.Code, e.Index, e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Throttled reports whether the error is one of the service's throttling
// answers: 503 ServerBusy, 500 OperationTimedOut or Cosmos DB's 429
// RequestRateTooLarge.
func (e *Error) Throttled() bool {
	return e.Code == CodeServerBusy || e.Code == CodeOperationTimedOut || e.Code == CodeRequestRateTooLarge
}

// AsError returns err as an *Error if it is one (or wraps one).
func AsError(err error) (*Error, bool) {
	// A request's answer is mostly nil or an *Error itself: neither needs
	// errors.As, whose target escapes to the heap on every call.
	if e, ok := err.(*Error); ok {
		return e, true
	}
	if err == nil {
		return nil, false
	}
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsCode reports whether err is an engine error with the given code.
func IsCode(err error, code string) bool {
	e, ok := AsError(err)
	return ok && e.Code == code
}

// NewError returns an answer of the service that is not a success, for no
// operation of a batch in particular.
func NewError(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg, Index: -1}
}

// BadRequest returns a 400 answer with the given code.
func BadRequest(code, msg string) *Error { return NewError(400, code, msg) }
