package aztarget

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/engine"
)

// appendEntity appends the JSON body of an entity, with the odata.type
// annotations the service needs for types JSON cannot carry.
func appendEntity(b []byte, e *engine.Entity) []byte {
	b = append(b, `{"PartitionKey":`...)
	b = appendString(b, e.PartitionKey)
	b = append(b, `,"RowKey":`...)
	b = appendString(b, e.RowKey)
	for _, p := range e.Properties {
		typed := ""
		b = append(b, ',')
		b = appendString(b, p.Name)
		b = append(b, ':')
		switch v := p.Value.(type) {
		case string:
			b = appendString(b, v)
		case int32:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = appendString(b, strconv.FormatInt(v, 10))
			typed = "Edm.Int64"
		case float64:
			switch {
			case math.IsNaN(v):
				b, typed = append(b, `"NaN"`...), "Edm.Double"
			case math.IsInf(v, 1):
				b, typed = append(b, `"Infinity"`...), "Edm.Double"
			case math.IsInf(v, -1):
				b, typed = append(b, `"-Infinity"`...), "Edm.Double"
			default:
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
				if v == math.Trunc(v) && math.Abs(v) < 1e15 {
					typed = "Edm.Double" // 1.0 would otherwise be read as an Int32
				}
			}
		case bool:
			b = strconv.AppendBool(b, v)
		case time.Time:
			b = appendString(b, engine.FormatTimestamp(v))
			typed = "Edm.DateTime"
		case uuid.UUID:
			b = appendString(b, v.String())
			typed = "Edm.Guid"
		case []byte:
			b = appendString(b, base64.StdEncoding.EncodeToString(v))
			typed = "Edm.Binary"
		default:
			b = append(b, "null"...)
		}
		if typed != "" {
			b = append(b, ',')
			b = appendString(b, p.Name+"@odata.type")
			b = append(b, ':')
			b = appendString(b, typed)
		}
	}
	return append(b, '}')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ { // the common case: nothing to escape
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
