package tables

import (
	"regexp"
	"strings"
)

var tableNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

// ValidTableName reports whether name meets the service's rules for a
// table name: 3 to 63 letters and digits, starting with a letter, and not
// the reserved "tables".
func ValidTableName(name string) bool {
	return tableNameRE.MatchString(name) && !strings.EqualFold(name, "tables")
}
