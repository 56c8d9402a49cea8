package tables

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Query selects entities of a table. Filter is an OData $filter of the
// service's subset; Select limits the returned properties (nil returns all);
// Top caps the page size (0: the service's 1,000). A page that is not the
// last carries a Continuation to pass back in the next Query.
type Query struct {
	Filter       string
	Select       []string
	Top          int
	Continuation *Continuation
	// Within, when not nil, limits the query to the keys its caller may
	// read: the scan neither starts before nor goes past them, and so no
	// continuation names a key outside them.
	Within *KeyRange
}

// KeyRange is the keys a shared access signature with a key range covers:
// from (StartPK, StartRK) to (EndPK, EndRK) in key order, both ends
// inclusive. A nil StartPK leaves no low bound and a nil EndPK no high one;
// a nil StartRK starts at the first row of StartPK and a nil EndRK ends at
// the last row of EndPK.
type KeyRange struct {
	StartPK, StartRK, EndPK, EndRK *string
}

// Has reports whether the keys (pk, rk) lie in r.
func (r *KeyRange) Has(pk, rk string) bool {
	return r == nil || (!r.Before(pk, rk) && !r.Past(pk, rk))
}

// Before reports whether the keys (pk, rk) come before r's low bound.
func (r *KeyRange) Before(pk, rk string) bool {
	if r == nil || r.StartPK == nil {
		return false
	}
	return pk < *r.StartPK || (pk == *r.StartPK && r.StartRK != nil && rk < *r.StartRK)
}

// Past reports whether the keys (pk, rk) come after r's high bound.
func (r *KeyRange) Past(pk, rk string) bool {
	if r == nil || r.EndPK == nil {
		return false
	}
	return pk > *r.EndPK || (pk == *r.EndPK && r.EndRK != nil && rk > *r.EndRK)
}

// Continuation is where a query goes on: the next PartitionKey and RowKey to
// look at. On the wire each travels as a token (EncodeToken).
type Continuation struct {
	PartitionKey string
	RowKey       string
}

// Page is one page of a query's results. Continuation is nil on the last
// page. A page may be empty and still have a continuation, as the service's
// can when a scan ends at a partition boundary.
type Page struct {
	Entities     []Entity
	Continuation *Continuation
	Scanned      int // entities examined; they count toward the targets
}

// EncodeToken encodes a continuation key in the service's form,
// 1!<length>!<base64 with '=' as '-'>.
func EncodeToken(key string) string {
	b := strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(key)), "=", "-")
	return "1!" + strconv.Itoa(len(b)) + "!" + b
}

// DecodeToken decodes a token made by EncodeToken.
func DecodeToken(tok string) (string, error) {
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", BadRequest(CodeInvalidInput, fmt.Sprintf("The continuation token %q is not valid: pass back the token the service returned.", tok))
	}
	n, b, ok := strings.Cut(rest, "!")
	l, err := strconv.Atoi(n)
	if !ok || err != nil || l != len(b) {
		return "", BadRequest(CodeInvalidInput, fmt.Sprintf("The continuation token %q is not valid: pass back the token the service returned.", tok))
	}
	raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(b, "-", "="))
	if err != nil {
		return "", BadRequest(CodeInvalidInput, fmt.Sprintf("The continuation token %q is not valid: pass back the token the service returned.", tok))
	}
	return string(raw), nil
}
