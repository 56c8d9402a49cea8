package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/engine"
)

// Metadata levels of JSON responses.
const (
	noMetadata      = "nometadata"
	minimalMetadata = "minimalmetadata"
	fullMetadata    = "fullmetadata"
)

func badInput(code, msg string) *engine.Error {
	return &engine.Error{Status: http.StatusBadRequest, Code: code, Message: msg, Index: -1}
}

// decodeEntity reads an entity from a JSON body: properties with their
// @odata.type annotations; PartitionKey and RowKey are required;
// Timestamp and odata.* are ignored, as the service ignores them.
func decodeEntity(body []byte) (engine.Entity, *engine.Error) {
	var e engine.Entity
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return e, badInput(engine.CodeInvalidInput, "The request body is not a valid JSON object: "+err.Error())
	}
	if dec.More() {
		return e, badInput(engine.CodeInvalidInput, "The request body holds more than one JSON value.")
	}
	types := map[string]string{}
	for k, v := range raw {
		if name, ok := strings.CutSuffix(k, "@odata.type"); ok {
			s, isStr := v.(string)
			if !isStr {
				return e, badInput(engine.CodeInvalidInput, "The type annotation of "+name+" is not a string.")
			}
			types[name] = s
		}
	}
	pk, hasPK := raw["PartitionKey"].(string)
	rk, hasRK := raw["RowKey"].(string)
	if !hasPK || !hasRK {
		return e, badInput(engine.CodePropertiesNeedValue, "The values are not specified for all properties in the entity: PartitionKey and RowKey are required strings.")
	}
	e.PartitionKey, e.RowKey = pk, rk
	for k, v := range raw {
		if k == "PartitionKey" || k == "RowKey" || k == "Timestamp" || strings.HasPrefix(k, "odata.") || strings.Contains(k, "@odata.") || v == nil {
			continue
		}
		p, err := decodeValue(k, v, types[k])
		if err != nil {
			return e, err
		}
		e.Properties = append(e.Properties, p)
	}
	return e, nil
}

func decodeValue(name string, v any, edm string) (engine.Property, *engine.Error) {
	bad := func() (engine.Property, *engine.Error) {
		return engine.Property{}, badInput(engine.CodeInvalidValueType, fmt.Sprintf("The value of property %q is not valid for its type %s.", name, orStr(edm, "in JSON")))
	}
	switch edm {
	case "":
		switch x := v.(type) {
		case string:
			return engine.String(name, x), nil
		case bool:
			return engine.Bool(name, x), nil
		case json.Number:
			s := x.String()
			if !strings.ContainsAny(s, ".eE") {
				if n, err := strconv.ParseInt(s, 10, 32); err == nil {
					return engine.Int32(name, int32(n)), nil
				}
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					return engine.Int64(name, n), nil
				}
			}
			f, err := x.Float64()
			if err != nil {
				return bad()
			}
			return engine.Double(name, f), nil
		}
		return engine.Property{}, badInput(engine.CodeInvalidInput, fmt.Sprintf("Property %q holds a JSON object or array, which a table entity cannot store.", name))
	case "Edm.String":
		if s, ok := v.(string); ok {
			return engine.String(name, s), nil
		}
	case "Edm.Int32", "Edm.Int64":
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		default:
			return bad()
		}
		if edm == "Edm.Int32" {
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return bad()
			}
			return engine.Int32(name, int32(n)), nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad()
		}
		return engine.Int64(name, n), nil
	case "Edm.Double":
		switch x := v.(type) {
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return bad()
			}
			return engine.Double(name, f), nil
		case string:
			switch x {
			case "NaN":
				return engine.Double(name, math.NaN()), nil
			case "Infinity", "INF":
				return engine.Double(name, math.Inf(1)), nil
			case "-Infinity", "-INF":
				return engine.Double(name, math.Inf(-1)), nil
			}
			f, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return bad()
			}
			return engine.Double(name, f), nil
		}
	case "Edm.Boolean":
		if b, ok := v.(bool); ok {
			return engine.Bool(name, b), nil
		}
	case "Edm.DateTime":
		if s, ok := v.(string); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return bad()
			}
			return engine.DateTime(name, t), nil
		}
	case "Edm.Guid":
		if s, ok := v.(string); ok {
			g, err := uuid.Parse(s)
			if err != nil {
				return bad()
			}
			return engine.GUID(name, g), nil
		}
	case "Edm.Binary":
		if s, ok := v.(string); ok {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return bad()
			}
			return engine.Binary(name, b), nil
		}
	default:
		return engine.Property{}, badInput(engine.CodeInvalidInput, fmt.Sprintf("The type %q of property %q is not an Edm type the service knows.", edm, name))
	}
	return bad()
}

func orStr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// entityJSON writes an entity in the given metadata form. base is the
// service root URL; sel limits the properties when the query had $select.
func entityJSON(b *bytes.Buffer, e *engine.Entity, meta, base, account, table string, element bool, sel []string) {
	b.WriteByte('{')
	first := true
	field := func(name string, write func()) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeString(b, name)
		b.WriteByte(':')
		write()
	}
	str := func(s string) func() { return func() { writeString(b, s) } }
	if meta != noMetadata {
		if element {
			field("odata.metadata", str(base+"/$metadata#"+table+"/@Element"))
		}
		if meta == fullMetadata {
			id := fmt.Sprintf("%s(PartitionKey='%s',RowKey='%s')", table, quoteKey(e.PartitionKey), quoteKey(e.RowKey))
			field("odata.type", str(account+"."+table))
			field("odata.id", str(base+"/"+id))
			field("odata.etag", str(e.ETag()))
			field("odata.editLink", str(id))
		} else {
			field("odata.etag", str(e.ETag()))
		}
	}
	selected := func(name string) bool {
		if sel == nil {
			return true
		}
		for _, s := range sel {
			if s == name {
				return true
			}
		}
		return false
	}
	if selected("PartitionKey") {
		field("PartitionKey", str(e.PartitionKey))
	}
	if selected("RowKey") {
		field("RowKey", str(e.RowKey))
	}
	if selected("Timestamp") {
		if meta == fullMetadata {
			field("Timestamp@odata.type", str("Edm.DateTime"))
		}
		field("Timestamp", str(engine.FormatTimestamp(e.Timestamp)))
	}
	for _, p := range e.Properties {
		typ := ""
		var write func()
		switch v := p.Value.(type) {
		case string:
			write = str(v)
		case int32:
			write = func() { b.WriteString(strconv.FormatInt(int64(v), 10)) }
			if meta == fullMetadata {
				typ = "Edm.Int32"
			}
		case int64:
			write, typ = str(strconv.FormatInt(v, 10)), "Edm.Int64"
		case float64:
			switch {
			case math.IsNaN(v):
				write, typ = str("NaN"), "Edm.Double"
			case math.IsInf(v, 1):
				write, typ = str("Infinity"), "Edm.Double"
			case math.IsInf(v, -1):
				write, typ = str("-Infinity"), "Edm.Double"
			default:
				write = func() { b.WriteString(strconv.FormatFloat(v, 'g', -1, 64)) }
				if meta == fullMetadata || v == math.Trunc(v) {
					typ = "Edm.Double"
				}
			}
		case bool:
			write = func() { b.WriteString(strconv.FormatBool(v)) }
			if meta == fullMetadata {
				typ = "Edm.Boolean"
			}
		case time.Time:
			write, typ = str(engine.FormatTimestamp(v)), "Edm.DateTime"
		case uuid.UUID:
			write, typ = str(v.String()), "Edm.Guid"
		case []byte:
			write, typ = str(base64.StdEncoding.EncodeToString(v)), "Edm.Binary"
		default:
			continue
		}
		if typ != "" && meta != noMetadata {
			field(p.Name+"@odata.type", str(typ))
		}
		field(p.Name, write)
	}
	b.WriteByte('}')
}

func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			b.Write(q)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// quoteKey doubles single quotes, as keys are written in URLs.
func quoteKey(k string) string { return strings.ReplaceAll(k, "'", "''") }
