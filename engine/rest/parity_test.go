package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Requests in shapes recorded clients replay, each a regression test for a
// way the served engine once answered them otherwise than the service.

// TestTrailingSlashAndRecordedHosts: a client that joins paths sends
// /Tables/ and /$batch/, and a recorded batch names the host it was
// recorded against, not this one. The service routes both by their path.
func TestTrailingSlashAndRecordedHosts(t *testing.T) {
	r := newRaw(t)
	asJSON := map[string]string{"Content-Type": "application/json"}
	r.must("POST", "/Tables/", asJSON, `{"TableName":"flows"}`, 201)
	r.must("GET", "/Tables/", nil, "", 200)
	const elsewhere = "http://127.0.0.1:10002/devstoreaccount1"
	op := func(path, rk string) string {
		return "POST " + elsewhere + path + " HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n" + `{"PartitionKey":"p","RowKey":"` + rk + `"}`
	}
	sdk := func(path, a, b string) (string, string) { return batch(op(path, a), op(path, b)) }
	for _, c := range []struct {
		name, path, a, b string
		bareLF           bool // the general reader; CRLF takes the one-walk reader
	}{
		{"as SDKs write it", "/flows", "1", "2", false},
		{"with bare LFs", "/flows", "3", "4", true},
		{"with a slash after the table", "/flows/", "5", "6", false},
	} {
		ctype, b := sdk(c.path, c.a, c.b)
		if c.bareLF {
			b = strings.ReplaceAll(b, "\r\n", "\n")
		}
		got := r.do("POST", "/$batch/", map[string]string{"Content-Type": ctype}, b, true)
		if got.status != 202 || innerStatus(got.body) != "204" {
			t.Fatalf("%s: %d %s %s", c.name, got.status, got.code, got.body)
		}
	}
	for _, rk := range []string{"1", "2", "3", "4", "5", "6"} {
		if _, st := r.get("flows", "p", rk); st != 200 {
			t.Errorf("entity %s: %d, want 200", rk, st)
		}
	}
	r.must("GET", "/flows(PartitionKey='p',RowKey='1')/", nil, "", 200)
}

// TestCreateAndQueryTablesInEachShape: Create Table with and without Prefer,
// and Query Tables, at each metadata level, answer in the shape the service
// documents: 204 with Preference-Applied: return-no-content, or 201 whose
// Preference-Applied says return-content when it was asked for; the odata
// annotations of the level; x-ms-version the version the request named.
func TestCreateAndQueryTablesInEachShape(t *testing.T) {
	r := newRaw(t)
	const full, minimal, none = "application/json;odata=fullmetadata", "application/json;odata=minimalmetadata", "application/json;odata=nometadata"
	annotations := map[string][]string{
		full:    {"odata.metadata", "odata.type", "odata.id", "odata.editLink"},
		minimal: {"odata.metadata"},
		none:    nil,
	}
	for i, c := range []struct {
		prefer, accept string
		status         int
		applied        string
	}{
		{"return-no-content", minimal, 204, "return-no-content"},
		{"return-no-content", full, 204, "return-no-content"},
		{"return-content", full, 201, "return-content"},
		{"return-content", minimal, 201, "return-content"},
		{"return-content", none, 201, "return-content"},
		{"", minimal, 201, ""},
	} {
		name := fmt.Sprintf("shape%d", i)
		hdr := map[string]string{"Content-Type": "application/json", "Accept": c.accept, "x-ms-version": "2018-03-28"}
		if c.prefer != "" {
			hdr["Prefer"] = c.prefer
		}
		got := r.must("POST", "/Tables", hdr, `{"TableName":"`+name+`"}`, c.status)
		if a := got.header.Get("Preference-Applied"); a != c.applied {
			t.Errorf("Prefer %q: Preference-Applied %q, want %q", c.prefer, a, c.applied)
		}
		if v := got.header.Get("x-ms-version"); v != "2018-03-28" {
			t.Errorf("x-ms-version %q, want the request's", v)
		}
		if c.status == 204 {
			if got.body != "" {
				t.Errorf("Prefer %q: a body %q", c.prefer, got.body)
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(got.body), &m); err != nil || m["TableName"] != name {
			t.Fatalf("%s: %s", c.accept, got.body)
		}
		if len(m) != 1+len(annotations[c.accept]) {
			t.Errorf("%s: %s, want TableName and %v", c.accept, got.body, annotations[c.accept])
		}
		for _, k := range annotations[c.accept] {
			if m[k] == nil {
				t.Errorf("%s: no %s in %s", c.accept, k, got.body)
			}
		}
		if c.accept == full && (m["odata.id"] != r.base+"/Tables('"+name+"')" || m["odata.editLink"] != "Tables('"+name+"')" || m["odata.type"] != "devstoreaccount1.Tables" || m["odata.metadata"] != r.base+"/$metadata#Tables/@Element") {
			t.Errorf("full metadata: %s", got.body)
		}
	}
	for accept, want := range annotations {
		got := r.must("GET", "/Tables", map[string]string{"Accept": accept}, "", 200)
		var v struct {
			Metadata string           `json:"odata.metadata"`
			Value    []map[string]any `json:"value"`
		}
		if err := json.Unmarshal([]byte(got.body), &v); err != nil || len(v.Value) == 0 {
			t.Fatalf("%s: %s", accept, got.body)
		}
		if (v.Metadata == r.base+"/$metadata#Tables") != (accept != none) {
			t.Errorf("%s: odata.metadata %q", accept, v.Metadata)
		}
		for _, k := range want {
			if k != "odata.metadata" && v.Value[0][k] == nil {
				t.Errorf("%s: no %s in %v", accept, k, v.Value[0])
			}
		}
		if len(v.Value[0]) != 1+max(len(want)-1, 0) {
			t.Errorf("%s: %v", accept, v.Value[0])
		}
	}
}

// TestInsertSaysWhichPreferenceItApplied: Insert Entity, like Create
// Table, answers Prefer: return-content with Preference-Applied.
func TestInsertSaysWhichPreferenceItApplied(t *testing.T) {
	r := newRaw(t)
	r.table("prefer")
	for rk, c := range []struct{ prefer, applied string }{{"return-content", "return-content"}, {"return-no-content", "return-no-content"}, {"", ""}} {
		hdr := map[string]string{"Content-Type": "application/json"}
		if c.prefer != "" {
			hdr["Prefer"] = c.prefer
		}
		got := r.do("POST", "/prefer", hdr, fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%d"}`, rk), true)
		if a := got.header.Get("Preference-Applied"); got.status/100 != 2 || a != c.applied {
			t.Errorf("Prefer %q: %d, Preference-Applied %q, want %q", c.prefer, got.status, a, c.applied)
		}
	}
}

// TestValuesTheServiceRefuses: a DateTime that is no date and a Double or
// an integer beyond its type's range are refused with 400, alone and in a
// batch; the largest double and the Int64 bounds are kept. The service
// answers an overflow with InvalidInput, as its JSON reader fails on the
// number, and its message "An error occurred while processing this
// request."
func TestValuesTheServiceRefuses(t *testing.T) {
	r := newRaw(t)
	r.table("values")
	asJSON := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct{ props, code string }{
		// A DateTime the reader cannot read, an empty one too, is out of
		// range for the service (400 OutOfRangeInput for an empty one).
		{`"D@odata.type":"Edm.DateTime","D":"2023-13-45T99:00:00Z"`, "OutOfRangeInput"},
		{`"D@odata.type":"Edm.DateTime","D":"yesterday"`, "OutOfRangeInput"},
		{`"D@odata.type":"Edm.DateTime","D":""`, "OutOfRangeInput"},
		{`"X@odata.type":"Edm.Double","X":"1.797693134862316e308"`, "InvalidInput"},
		{`"X@odata.type":"Edm.Double","X":-1.797693134862316e308`, "InvalidInput"},
		{`"X":1e400`, "InvalidInput"},
		{`"N@odata.type":"Edm.Int64","N":"9223372036854775808"`, "InvalidInput"},
		{`"N@odata.type":"Edm.Int64","N":"18446744073709551615"`, "InvalidInput"},
		{`"N@odata.type":"Edm.Int32","N":"-2147483649"`, "InvalidInput"},
		{`"N@odata.type":"Edm.Int64","N":"12z"`, "InvalidValueType"},
	} {
		body := `{"PartitionKey":"p","RowKey":"r",` + c.props + `}`
		got := r.do("POST", "/values", asJSON, body, true)
		if got.status != 400 || got.code != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.props, got.status, got.code, c.code)
		}
		// The service's message for a value its reader refuses, which
		// clients match on: the sentence, with its full stop, first.
		if c.code != "InvalidValueType" && !strings.Contains(got.body, `"value":"An error occurred while processing this request. `) {
			t.Errorf("%s: message %s, want the service's sentence first", c.props, got.body)
		}
		ctype, b := batch(r.op("POST", "/values", "Content-Type: application/json\r\n", body))
		if got := r.submit(ctype, b); got.status != 202 || innerStatus(got.body) != "400" || !strings.Contains(got.body, `"code":"`+c.code+`"`) {
			t.Errorf("%s in a batch: %d %s", c.props, got.status, got.body)
		}
	}
	r.insert("values", `{"PartitionKey":"p","RowKey":"max","X@odata.type":"Edm.Double","X":"1.797693134862315e308"}`)
	r.insert("values", `{"PartitionKey":"p","RowKey":"int64","N@odata.type":"Edm.Int64","N":"-9223372036854775808","M@odata.type":"Edm.Int64","M":"9223372036854775807"}`)
}

// TestCORSVaryAndPreflight: Vary: Origin on a GET or HEAD answer when CORS
// is enabled and a rule names the origin or none admits it, never for a
// rule that admits all origins, nor without rules; a preflight without a
// matching rule is 403 CorsPreflightFailure, one without its headers 400.
func TestCORSVaryAndPreflight(t *testing.T) {
	r := newRaw(t)
	r.table("cors")
	setRules := func(rules string) {
		r.must("PUT", "/?restype=service&comp=properties", map[string]string{"Content-Type": "application/xml"},
			`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors>`+rules+`</Cors></StorageServiceProperties>`, 202)
	}
	rule := func(origins, methods string) string {
		return `<CorsRule><AllowedOrigins>` + origins + `</AllowedOrigins><AllowedMethods>` + methods + `</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>*</ExposedHeaders><AllowedHeaders>header</AllowedHeaders></CorsRule>`
	}
	type want struct{ vary, allow string }
	check := func(name, method, path, origin string, w want) {
		t.Helper()
		hdr := map[string]string{}
		if origin != "" {
			hdr["Origin"] = origin
		}
		body := ""
		if method == "POST" {
			hdr["Content-Type"], body = "application/json", `{"PartitionKey":"p","RowKey":"`+name+`"}`
		}
		got := r.do(method, path, hdr, body, true)
		if v, a := got.header.Get("Vary"), got.header.Get("Access-Control-Allow-Origin"); v != w.vary || a != w.allow {
			t.Errorf("%s: Vary %q, Access-Control-Allow-Origin %q; want %q, %q", name, v, a, w.vary, w.allow)
		}
	}
	check("no rules", "GET", "/?restype=service&comp=properties", "anyOrigin", want{})
	setRules(rule("exactOrigin", "GET,POST"))
	check("a rule for the origin", "GET", "/?restype=service&comp=properties", "exactOrigin", want{"Origin", "exactOrigin"})
	check("no rule for the origin", "GET", "/?restype=service&comp=properties", "anyOrigin", want{"Origin", ""})
	check("no origin", "GET", "/?restype=service&comp=properties", "", want{})
	check("an error answer", "GET", "/nosuch()", "exactOrigin", want{"Origin", "exactOrigin"})
	check("a POST", "POST", "/cors", "anyOrigin", want{})
	setRules(rule("*", "GET"))
	check("a rule for all origins", "GET", "/?restype=service&comp=properties", "anyOrigin", want{"", "*"})

	setRules(rule("test", "GET"))
	for _, c := range []struct {
		origin, method string
		status         int
		text           string
	}{
		{"Origin", "GET", 403, "CORS not enabled or no matching rule found for this request."},
		{"test", "PUT", 403, "CORS not enabled or no matching rule found for this request."},
		{"test", "", 400, "A required CORS header is not present."},
		{"test", "GET", 200, ""},
	} {
		hdr := map[string]string{"Origin": c.origin}
		if c.method != "" {
			hdr["Access-Control-Request-Method"] = c.method
		}
		got := r.do("OPTIONS", "/?restype=service&comp=properties", hdr, "", false)
		if got.status != c.status || !strings.Contains(got.body, c.text) || c.status == 403 && got.code != "CorsPreflightFailure" {
			t.Errorf("preflight from %q for %q: %d %s %s", c.origin, c.method, got.status, got.code, got.body)
		}
	}
	setRules("")
	if got := r.do("OPTIONS", "/Tables", map[string]string{"Origin": "test", "Access-Control-Request-Method": "GET"}, "", false); got.status != 403 || got.code != "CorsPreflightFailure" {
		t.Errorf("preflight without rules: %d %s", got.status, got.code)
	}
}

// TestStatsOnTheSecondaryOnly: Get Table Service Stats is served by the
// secondary endpoint, account-secondary, as the service documents; on the
// primary, comp=stats is refused as a query parameter value it does not
// take.
func TestStatsOnTheSecondaryOnly(t *testing.T) {
	r := newRaw(t)
	if got := r.do("GET", "/?restype=service&comp=stats", nil, "", true); got.status != 400 || got.code != "InvalidQueryParameterValue" {
		t.Errorf("stats on the primary: %d %s, want 400 InvalidQueryParameterValue", got.status, got.code)
	}
	sec := &raw{t: t, base: r.base + "-secondary"}
	if got := sec.must("GET", "/?restype=service&comp=stats", nil, "", 200); !strings.Contains(got.body, "<Status>live</Status>") {
		t.Errorf("stats on the secondary: %s", got.body)
	}
	// Host style: the secondary's host names it.
	req, _ := http.NewRequest("GET", r.base+"/?restype=service&comp=stats", nil)
	req.Host = "devstoreaccount1-secondary.table.localhost"
	req.Header.Set("x-ms-version", "2019-02-02")
	signLite(req, time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("stats on a secondary host: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

// TestTableNamesIgnoreCase: table names are case-insensitive and keep the
// case they were created with; names that hold one another are distinct
// tables.
func TestTableNamesIgnoreCase(t *testing.T) {
	r := newRaw(t)
	asJSON := map[string]string{"Content-Type": "application/json"}
	r.table("myTable")
	if got := r.do("POST", "/Tables", asJSON, `{"TableName":"MYTABLE"}`, true); got.status != 409 || got.code != "TableAlreadyExists" {
		t.Fatalf("a name differing in case: %d %s, want 409 TableAlreadyExists", got.status, got.code)
	}
	for _, n := range []string{"myTab", "Table", "myTablemyTable"} {
		r.table(n)
	}
	r.insert("MYTABLE", `{"PartitionKey":"p","RowKey":"1"}`)
	if _, st := r.get("mytable", "p", "1"); st != 200 {
		t.Fatalf("an entity through another case: %d", st)
	}
	r.must("DELETE", "/Tables('MYTAB')", nil, "", 204)
	got := r.must("GET", "/Tables", nil, "", 200)
	var v struct{ Value []struct{ TableName string } }
	if err := json.Unmarshal([]byte(got.body), &v); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range v.Value {
		names = append(names, x.TableName)
	}
	if fmt.Sprint(names) != "[Table myTable myTablemyTable]" {
		t.Fatalf("listed %v", names)
	}
}

// TestXMLResourcesTakeAnAtomAccept: the service properties, stats and a
// table's ACL are XML, and a batch is multipart; a client that sends them
// Accept: application/atom+xml,application/xml (the older Node.js SDK)
// gets them. An OData resource asked for in Atom is still 415.
func TestXMLResourcesTakeAnAtomAccept(t *testing.T) {
	r := newRaw(t)
	r.table("xmlacl")
	atom := map[string]string{"Accept": "application/atom+xml,application/xml"}
	if got := r.must("GET", "/?restype=service&comp=properties", atom, "", 200); !strings.Contains(got.body, "<StorageServiceProperties>") {
		t.Errorf("properties: %s", got.body)
	}
	put := map[string]string{"Accept": atom["Accept"], "Content-Type": "application/xml"}
	r.must("PUT", "/?restype=service&comp=properties", put, `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging></StorageServiceProperties>`, 202)
	r.must("PUT", "/xmlacl?comp=acl", put, `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>id1</Id><AccessPolicy><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>raud</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`, 204)
	if got := r.must("GET", "/xmlacl?comp=acl", atom, "", 200); !strings.Contains(got.body, "<Id>id1</Id>") {
		t.Errorf("ACL: %s", got.body)
	}
	sec := &raw{t: t, base: r.base + "-secondary"}
	sec.must("GET", "/?restype=service&comp=stats", atom, "", 200)
	ctype, body := batch(r.op("POST", "/xmlacl", "Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n", `{"PartitionKey":"p","RowKey":"1"}`))
	if got := r.do("POST", "/$batch", map[string]string{"Accept": atom["Accept"], "Content-Type": ctype}, body, true); got.status != 202 || innerStatus(got.body) != "201" {
		t.Errorf("a batch with an Atom Accept: %d %s", got.status, got.body)
	}
	if got := r.do("GET", "/Tables", map[string]string{"Accept": "application/atom+xml"}, "", true); got.status != 415 || got.code != "AtomFormatNotSupported" {
		t.Errorf("tables in Atom: %d %s, want 415 AtomFormatNotSupported", got.status, got.code)
	}
}

// TestETagsAreWeak: the service issues weak ETags only, and reads an
// If-Match by that: a weak tag it never issued (W/ or w/) matches nothing
// and is answered 412, as the service answers W/"wrong"; a strong tag is
// malformed (400); the entity's own tag matches with W/ written either way.
func TestETagsAreWeak(t *testing.T) {
	r := newRaw(t)
	r.table("etags")
	got := r.do("POST", "/etags", map[string]string{"Content-Type": "application/json", "Prefer": "return-content"}, `{"PartitionKey":"p","RowKey":"r"}`, true)
	etag := got.header.Get("ETag")
	if got.status != 201 || !strings.HasPrefix(etag, `W/"`) {
		t.Fatalf("insert: %d, ETag %q", got.status, etag)
	}
	for _, c := range []struct {
		ifMatch string // "W/" or "w/" alone: the entity's own tag, its W/ so written
		status  int
	}{
		{`W/"wrong"`, 412},
		{`w/"wrong"`, 412},
		{`w/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, 412},
		{`"wrong"`, 400},
		{`"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, 400},
		{`W/wrong`, 400},
		{`w/`, 204},
		{`W/`, 204},
	} {
		for _, verb := range []string{"PUT", "MERGE", "DELETE"} {
			ifMatch := c.ifMatch
			if ifMatch == "w/" || ifMatch == "W/" {
				ifMatch += etag[2:]
			}
			body := `{"PartitionKey":"p","RowKey":"r","N":1}`
			if verb == "DELETE" {
				body = ""
			}
			h := map[string]string{"Content-Type": "application/json", "If-Match": ifMatch}
			got := r.do(verb, "/etags(PartitionKey='p',RowKey='r')", h, body, true)
			if got.status != c.status {
				t.Errorf("%s with If-Match %s: %d %s, want %d", verb, ifMatch, got.status, got.code, c.status)
			}
			if got.status == 204 { // the tag changed or the entity went: make it again
				r.do("DELETE", "/etags(PartitionKey='p',RowKey='r')", map[string]string{"If-Match": "*"}, "", true)
				got = r.do("POST", "/etags", map[string]string{"Content-Type": "application/json", "Prefer": "return-content"}, `{"PartitionKey":"p","RowKey":"r"}`, true)
				etag = got.header.Get("ETag")
			}
		}
	}
}
