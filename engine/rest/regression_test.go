package rest_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/tables"
)

// Raw requests in the shapes other tools send, each a regression test for a
// way the served engine once differed from the Table service.

type raw struct {
	t    *testing.T
	base string // http://127.0.0.1:P/devstoreaccount1
}

func newRaw(t *testing.T) *raw {
	t.Helper()
	return &raw{t: t, base: servedEngine(t)}
}

// signLite signs a request with SharedKeyLite, as the Go and JavaScript SDKs
// do, dated at when.
func signLite(req *http.Request, when time.Time) {
	date := when.UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	res := "/" + rest.DevAccount + req.URL.EscapedPath()
	if c := req.URL.Query().Get("comp"); c != "" {
		res += "?comp=" + c
	}
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(date + "\n" + res))
	req.Header.Set("Authorization", "SharedKeyLite "+rest.DevAccount+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
}

type reply struct {
	status int
	code   string
	header http.Header
	body   string
}

// do sends a request signed with the account key (sign) or as it is (a SAS
// in its URL, or nothing).
func (r *raw) do(method, path string, hdr map[string]string, body string, sign bool) reply {
	r.t.Helper()
	req, err := http.NewRequest(method, r.base+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if sign {
		signLite(req, time.Now())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header, string(b)}
}

func (r *raw) must(method, path string, hdr map[string]string, body string, want int) reply {
	r.t.Helper()
	got := r.do(method, path, hdr, body, true)
	if got.status != want {
		r.t.Fatalf("%s %s: %d %s %s, want %d", method, path, got.status, got.code, got.body, want)
	}
	return got
}

func (r *raw) table(name string) {
	r.t.Helper()
	r.must("POST", "/Tables", map[string]string{"Content-Type": "application/json"}, `{"TableName":"`+name+`"}`, 201)
}

func (r *raw) insert(table, body string) {
	r.t.Helper()
	r.must("POST", "/"+table, map[string]string{"Content-Type": "application/json"}, body, 201)
}

func (r *raw) get(table, pk, rk string) (map[string]any, int) {
	r.t.Helper()
	got := r.do("GET", "/"+table+"(PartitionKey='"+url.PathEscape(pk)+"',RowKey='"+url.PathEscape(rk)+"')", nil, "", true)
	var m map[string]any
	json.Unmarshal([]byte(got.body), &m)
	return m, got.status
}

// batch builds a $batch body of one changeset from raw operations (request
// line, headers and body of each, as written).
func batch(ops ...string) (string, string) {
	var b strings.Builder
	b.WriteString("--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n")
	for _, op := range ops {
		b.WriteString("--changeset_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(op)
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_1--\r\n--batch_1--\r\n")
	return "multipart/mixed; boundary=batch_1", b.String()
}

func (r *raw) op(method, path, headers, body string) string {
	return method + " " + r.base + path + " HTTP/1.1\r\n" + headers + "\r\n" + body
}

func (r *raw) submit(ctype, body string) reply {
	r.t.Helper()
	return r.do("POST", "/$batch", map[string]string{"Content-Type": ctype}, body, true)
}

// innerStatus returns the status of a batch response's first operation.
func innerStatus(body string) string {
	i := strings.Index(body, "HTTP/1.1 ")
	if i < 0 {
		return ""
	}
	return body[i+9 : i+12]
}

func TestBatchBodiesWithoutContentLength(t *testing.T) {
	r := newRaw(t)
	r.table("nolen")
	ctype, body := batch(
		r.op("POST", "/nolen", "Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n", `{"PartitionKey":"p","RowKey":"1","A":1}`),
		r.op("PUT", "/nolen(PartitionKey='p',RowKey='2')", "Content-Type: application/json\r\n", `{"PartitionKey":"p","RowKey":"2","B":"x"}`),
	)
	if got := r.submit(ctype, body); got.status != 202 || innerStatus(got.body) != "201" {
		t.Fatalf("changeset without Content-Length: %d %s", got.status, got.body)
	}
	if m, st := r.get("nolen", "p", "2"); st != 200 || m["B"] != "x" {
		t.Fatalf("the second operation's body was lost: %d %v", st, m)
	}
}

func TestBatchKeysAreDecodedOnce(t *testing.T) {
	r := newRaw(t)
	r.table("once")
	for _, rk := range []string{"kA", "k%41", "a%25b", "%17"} {
		b, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": rk})
		r.insert("once", string(b))
	}
	esc := func(k string) string { return url.PathEscape(k) }
	ctype, body := batch(
		r.op("DELETE", "/once(PartitionKey='p',RowKey='"+esc("k%41")+"')", "If-Match: *\r\n", ""),
		r.op("MERGE", "/once(PartitionKey='p',RowKey='"+esc("a%25b")+"')", "Content-Type: application/json\r\nIf-Match: *\r\n", `{"V":1}`),
		r.op("PUT", "/once(PartitionKey='p',RowKey='"+esc("%17")+"')", "Content-Type: application/json\r\n", `{"V":2}`),
	)
	if got := r.submit(ctype, body); got.status != 202 || innerStatus(got.body) != "204" {
		t.Fatalf("%d %s", got.status, got.body)
	}
	if _, st := r.get("once", "p", "kA"); st != 200 {
		t.Fatal("deleting k%41 deleted kA")
	}
	if _, st := r.get("once", "p", "k%41"); st != 404 {
		t.Fatal("k%41 was not deleted")
	}
	if m, _ := r.get("once", "p", "a%25b"); m["V"] != 1.0 {
		t.Fatalf("a%%25b: %v", m)
	}
	if m, _ := r.get("once", "p", "%17"); m["V"] != 2.0 {
		t.Fatalf("%%17: %v", m)
	}
}

func TestLenientValues(t *testing.T) {
	r := newRaw(t)
	r.table("lenient")
	r.insert("lenient", `{"PartitionKey":"p","RowKey":"1","D@odata.type":"Edm.DateTime","D":"2023-01-01T23:00:00","B@odata.type":"Edm.Boolean","B":"false","T@odata.type":"Edm.Boolean","T":"true"}`)
	m, _ := r.get("lenient", "p", "1")
	if m["D"] != "2023-01-01T23:00:00.0000000Z" || m["B"] != false || m["T"] != true {
		t.Fatalf("a zoneless DateTime is UTC and a string Boolean is a Boolean: %v", m)
	}
	if got := r.do("POST", "/lenient", map[string]string{"Content-Type": "application/json"}, `{"PartitionKey":"p","RowKey":"3","B@odata.type":"Edm.Boolean","B":"maybe"}`, true); got.status != 400 || got.code != tables.CodeInvalidValueType {
		t.Fatalf("a Boolean that is neither: %d %s", got.status, got.code)
	}
}

func TestUpdatesTakeKeysFromTheURL(t *testing.T) {
	r := newRaw(t)
	r.table("urlkeys")
	r.insert("urlkeys", `{"PartitionKey":"p","RowKey":"1","A":1}`)
	r.must("MERGE", "/urlkeys(PartitionKey='p',RowKey='1')", map[string]string{"Content-Type": "application/json", "If-Match": "*"}, `{"B":2}`, 204)
	r.must("PUT", "/urlkeys(PartitionKey='p',RowKey='2')", map[string]string{"Content-Type": "application/json"}, `{"C":3}`, 204)
	if m, _ := r.get("urlkeys", "p", "1"); m["A"] != 1.0 || m["B"] != 2.0 {
		t.Fatalf("merge without keys in the body: %v", m)
	}
	if m, _ := r.get("urlkeys", "p", "2"); m["C"] != 3.0 {
		t.Fatalf("upsert without keys in the body: %v", m)
	}
	// A bodiless DELETE whose headers run straight into the boundary.
	body := "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n" +
		"--changeset_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"DELETE " + r.base + "/urlkeys(PartitionKey='p',RowKey='2') HTTP/1.1\r\nIf-Match: *\r\n" +
		"--changeset_1--\r\n--batch_1--\r\n"
	if got := r.submit("multipart/mixed; boundary=batch_1", body); got.status != 202 || innerStatus(got.body) != "204" {
		t.Fatalf("bodiless delete: %d %s", got.status, got.body)
	}
	if _, st := r.get("urlkeys", "p", "2"); st != 404 {
		t.Fatal("the delete was not applied")
	}
}

func TestQueryInABatch(t *testing.T) {
	r := newRaw(t)
	r.table("bqt")
	r.insert("bqt", `{"PartitionKey":"p","RowKey":"1","A":1}`)
	r.insert("bqt", `{"PartitionKey":"p","RowKey":"2","A":2}`)
	one := func(path string) string {
		return "--batch_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
			"GET " + r.base + path + " HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n\r\n--batch_1--\r\n"
	}
	got := r.submit("multipart/mixed; boundary=batch_1", one("/bqt(PartitionKey='p',RowKey='1')"))
	if got.status != 202 || innerStatus(got.body) != "200" || !strings.Contains(got.body, `"A":1`) {
		t.Fatalf("point query in a batch: %d %s", got.status, got.body)
	}
	got = r.submit("multipart/mixed; boundary=batch_1", one("/bqt()?$filter="+url.QueryEscape("PartitionKey eq 'p' and A gt 1")))
	if got.status != 202 || !strings.Contains(got.body, `"RowKey":"2"`) || strings.Contains(got.body, `"RowKey":"1"`) {
		t.Fatalf("query in a batch: %d %s", got.status, got.body)
	}
	// A query inside a changeset, or beside another part, is refused.
	ctype, body := batch(r.op("GET", "/bqt(PartitionKey='p',RowKey='1')", "", ""))
	if got := r.submit(ctype, body); got.status == 202 && innerStatus(got.body) < "400" {
		t.Fatalf("a query in a changeset: %d %s", got.status, got.body)
	}
	two := "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n--changeset_1\r\nContent-Type: application/http\r\n\r\n" +
		r.op("POST", "/bqt", "Content-Type: application/json\r\n", `{"PartitionKey":"p","RowKey":"3"}`) + "\r\n--changeset_1--\r\n" +
		"--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_2\r\n\r\n--changeset_2\r\nContent-Type: application/http\r\n\r\n" +
		r.op("POST", "/bqt", "Content-Type: application/json\r\n", `{"PartitionKey":"p","RowKey":"4"}`) + "\r\n--changeset_2--\r\n--batch_1--\r\n"
	if got := r.submit("multipart/mixed; boundary=batch_1", two); got.status != 400 {
		t.Fatalf("a second changeset: %d %s", got.status, got.body)
	}
	if _, st := r.get("bqt", "p", "3"); st != 404 {
		t.Fatal("a batch with two changesets was partly applied")
	}
}

func TestTableResources(t *testing.T) {
	r := newRaw(t)
	for _, n := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		r.table(n)
	}
	names := func(body string) []string {
		var v struct{ Value []struct{ TableName string } }
		json.Unmarshal([]byte(body), &v)
		var out []string
		for _, t := range v.Value {
			out = append(out, t.TableName)
		}
		return out
	}
	got := r.must("GET", "/Tables?$filter="+url.QueryEscape("TableName ge 'b' and TableName lt 'e'"), nil, "", 200)
	if fmt.Sprint(names(got.body)) != "[beta delta]" {
		t.Fatalf("$filter on TableName: %v", names(got.body))
	}
	got = r.must("GET", "/Tables?$top=2", nil, "", 200)
	tok := got.header.Get("x-ms-continuation-NextTableName")
	if fmt.Sprint(names(got.body)) != "[alpha beta]" || tok == "" {
		t.Fatalf("$top: %v %q", names(got.body), tok)
	}
	got = r.must("GET", "/Tables?$top=2&NextTableName="+url.QueryEscape(tok), nil, "", 200)
	if fmt.Sprint(names(got.body)) != "[delta epsilon]" {
		t.Fatalf("the next page: %v", names(got.body))
	}
	if got := r.must("GET", "/Tables('Gamma')", nil, "", 200); !strings.Contains(got.body, `"TableName":"gamma"`) {
		t.Fatalf("GET Tables('x'): %s", got.body)
	}
	if got := r.do("GET", "/Tables('nosuch')", nil, "", true); got.status != 404 || got.code != "ResourceNotFound" {
		t.Fatalf("GET a missing table: %d %s", got.status, got.code)
	}
	if got := r.do("DELETE", "/Tables('nosuch')", nil, "", true); got.status != 404 || got.code != "ResourceNotFound" {
		t.Fatalf("DELETE a missing table: %d %s", got.status, got.code)
	}
}

func TestFiltersAndConditions(t *testing.T) {
	r := newRaw(t)
	r.table("filt")
	r.insert("filt", `{"PartitionKey":"p","RowKey":"1","D":5.0,"D@odata.type":"Edm.Double","L":"7","L@odata.type":"Edm.Int64","F":true}`)
	r.insert("filt", `{"PartitionKey":"p","RowKey":"2","D":2.5,"F":false}`)
	count := func(filter string) int {
		n, next := 0, ""
		for { // pages may be empty and still go on, at range partition boundaries
			got := r.must("GET", "/filt()?$filter="+url.QueryEscape(filter)+next, nil, "", 200)
			var v struct{ Value []any }
			json.Unmarshal([]byte(got.body), &v)
			n += len(v.Value)
			npk := got.header.Get("x-ms-continuation-NextPartitionKey")
			if npk == "" {
				return n
			}
			next = "&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(got.header.Get("x-ms-continuation-NextRowKey"))
		}
	}
	for _, tc := range []struct {
		filter string
		want   int
	}{
		{"true", 2}, {"false", 0}, {"not false", 2}, {"F", 1}, {"D eq 5", 1}, {"D gt 2", 2}, {"L eq 7", 1}, {"L eq 7L", 1}, {"(D lt 3) or false", 1},
	} {
		if got := count(tc.filter); got != tc.want {
			t.Errorf("$filter=%s: %d entities, want %d", tc.filter, got, tc.want)
		}
	}
	if got := r.do("MERGE", "/filt(PartitionKey='p',RowKey='1')", map[string]string{"Content-Type": "application/json", "If-Match": `W/"wrong"`}, `{}`, true); got.status != 412 {
		t.Fatalf(`If-Match: W/"wrong": %d %s`, got.status, got.code)
	}
}

func TestRequestRules(t *testing.T) {
	r := newRaw(t)
	r.table("rules")
	if got := r.do("GET", "/Tables", map[string]string{"x-ms-version": "2099-13-45"}, "", true); got.status != 400 || got.code != "InvalidHeaderValue" {
		t.Fatalf("an invalid x-ms-version: %d %s", got.status, got.code)
	}
	big := `{"PartitionKey":"a","RowKey":"b","P":"` + strings.Repeat("x", 4<<20) + `"}`
	if got := r.do("POST", "/rules", map[string]string{"Content-Type": "application/json"}, big, true); got.status != 413 || got.code != "RequestBodyTooLarge" {
		t.Fatalf("a body over 4 MiB: %d %s", got.status, got.code)
	}
	// Invalid UTF-8 in keys, in the URL and in the body, would collide as
	// U+FFFD; it is refused.
	if got := r.do("GET", "/rules(PartitionKey='%FF',RowKey='a')", nil, "", true); got.status != 400 {
		t.Fatalf("invalid UTF-8 in a URL key: %d", got.status)
	}
	if got := r.do("POST", "/rules", map[string]string{"Content-Type": "application/json"}, "{\"PartitionKey\":\"\xff\",\"RowKey\":\"a\"}", true); got.status != 400 {
		t.Fatalf("invalid UTF-8 in a body key: %d", got.status)
	}
	if got := r.do("POST", "/rules", map[string]string{"Content-Type": "application/json"}, `{"PartitionKey":"\udc00","RowKey":"a"}`, true); got.status != 400 {
		t.Fatalf("a lone surrogate in a body key: %d", got.status)
	}
	r.insert("rules", `{"PartitionKey":"\ud83d\ude00","RowKey":"ok"}`)
	// Atom, which the service no longer speaks, is refused as it refuses it.
	atom := `<?xml version="1.0"?><entry xmlns="http://www.w3.org/2005/Atom"/>`
	if got := r.do("POST", "/rules", map[string]string{"Content-Type": "application/atom+xml"}, atom, true); got.status != 415 || got.code != "AtomFormatNotSupported" {
		t.Fatalf("an Atom insert: %d %s", got.status, got.code)
	}
	if got := r.do("GET", "/Tables", map[string]string{"Accept": "application/atom+xml"}, "", true); got.status != 415 {
		t.Fatalf("an Atom query: %d %s", got.status, got.code)
	}
	// $select=* returns every property.
	r.insert("rules", `{"PartitionKey":"sel","RowKey":"1","A":1,"B":"x"}`)
	if got := r.must("GET", "/rules(PartitionKey='sel',RowKey='1')?$select=*", nil, "", 200); !strings.Contains(got.body, `"A":1`) || !strings.Contains(got.body, `"B":"x"`) {
		t.Fatalf("$select=*: %s", got.body)
	}
}

func TestServicePropertiesAndCORS(t *testing.T) {
	r := newRaw(t)
	props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>https://a.example</AllowedOrigins><AllowedMethods>GET,POST</AllowedMethods><MaxAgeInSeconds>90</MaxAgeInSeconds><ExposedHeaders>x-ms-request-id</ExposedHeaders><AllowedHeaders>x-ms-*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`
	r.must("PUT", "/?restype=service&comp=properties", map[string]string{"Content-Type": "application/xml"}, props, 202)
	got := r.must("GET", "/?restype=service&comp=properties", nil, "", 200)
	if !strings.Contains(got.body, "<AllowedOrigins>https://a.example</AllowedOrigins>") || !strings.Contains(got.body, "<HourMetrics>") {
		t.Fatalf("properties: %s", got.body)
	}
	if got := r.do("PUT", "/?restype=service&comp=properties", nil, "<StorageServiceProperties><Cors>", true); got.status != 400 {
		t.Fatalf("malformed XML: %d", got.status)
	}
	pre := r.do("OPTIONS", "/Tables", map[string]string{"Origin": "https://a.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-ms-date,x-ms-version"}, "", false)
	if pre.status != 200 || pre.header.Get("Access-Control-Allow-Origin") != "https://a.example" || pre.header.Get("Access-Control-Max-Age") != "90" {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}
	for _, h := range []map[string]string{
		{"Origin": "https://b.example", "Access-Control-Request-Method": "GET"},
		{"Origin": "https://a.example", "Access-Control-Request-Method": "DELETE"},
		{"Origin": "https://a.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "content-md5"},
	} {
		if got := r.do("OPTIONS", "/Tables", h, "", false); got.status != 403 {
			t.Errorf("preflight %v: %d, want 403", h, got.status)
		}
	}
	actual := r.do("GET", "/Tables", map[string]string{"Origin": "https://a.example"}, "", true)
	if actual.header.Get("Access-Control-Allow-Origin") != "https://a.example" || actual.header.Get("Access-Control-Expose-Headers") != "x-ms-request-id" {
		t.Fatalf("actual request: %v", actual.header)
	}
	if other := r.do("GET", "/Tables", map[string]string{"Origin": "https://b.example"}, "", true); other.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("an origin no rule admits got CORS headers")
	}
}

func TestTableACL(t *testing.T) {
	r := newRaw(t)
	r.table("acl")
	r.insert("acl", `{"PartitionKey":"p","RowKey":"1"}`)
	got := r.must("GET", "/acl?comp=acl", nil, "", 200)
	if strings.Contains(got.body, "PartitionKey") || !strings.Contains(got.body, "SignedIdentifiers") {
		t.Fatalf("GET ?comp=acl returned entities or no policies: %s", got.body)
	}
	policy := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>readers</Id><AccessPolicy><Start>2020-01-01T00:00:00Z</Start><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	r.must("PUT", "/acl?comp=acl", map[string]string{"Content-Type": "application/xml"}, policy, 204)
	if got := r.must("GET", "/acl?comp=acl", nil, "", 200); !strings.Contains(got.body, "<Id>readers</Id>") {
		t.Fatalf("stored policy: %s", got.body)
	}
	sas := signSAS(url.Values{"tn": {"acl"}, "si": {"readers"}, "sv": {"2019-02-02"}})
	if got := r.do("GET", "/acl(PartitionKey='p',RowKey='1')?"+sas, nil, "", false); got.status != 200 {
		t.Fatalf("a SAS through a stored policy: %d %s", got.status, got.body)
	}
	if got := r.do("POST", "/acl?"+sas, map[string]string{"Content-Type": "application/json"}, `{"PartitionKey":"p","RowKey":"2"}`, false); got.status != 403 {
		t.Fatalf("the policy grants read only: %d", got.status)
	}
	six := "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>x</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>", 6) + "</SignedIdentifiers>"
	if got := r.do("PUT", "/acl?comp=acl", nil, six, true); got.status != 400 {
		t.Fatalf("six policies: %d", got.status)
	}
	if got := r.do("GET", "/acl?comp=acl&"+sas, nil, "", false); got.status != 403 {
		t.Fatalf("a SAS reads policies: %d", got.status)
	}
	r.must("PUT", "/acl?comp=acl", nil, "", 204)
	if got := r.do("GET", "/acl(PartitionKey='p',RowKey='1')?"+sas, nil, "", false); got.status != 403 {
		t.Fatalf("a removed policy still grants: %d", got.status)
	}
}

// TestBatchWithBareLineFeeds: a $batch written with \n line endings, as some
// tools write it, is read like one with \r\n.
func TestBatchWithBareLineFeeds(t *testing.T) {
	r := newRaw(t)
	r.table("lfonly")
	ctype, body := batch(
		r.op("POST", "/lfonly", "Content-Type: application/json\r\nContent-ID: 1\r\n", `{"PartitionKey":"p","RowKey":"1"}`),
		r.op("POST", "/lfonly", "Content-Type: application/json\r\nContent-ID: 2\r\n", `{"PartitionKey":"p","RowKey":"2"}`),
	)
	body = strings.ReplaceAll(body, "\r\n", "\n")
	if got := r.submit(ctype, body); got.status != 202 || innerStatus(got.body) != "201" {
		t.Fatalf("%d %s", got.status, got.body)
	}
	if _, st := r.get("lfonly", "p", "2"); st != 200 {
		t.Fatal("the second operation was not applied")
	}
	// Operations may name their resource by path, or relative to the root.
	for i, target := range []string{"/devstoreaccount1/lfonly", "lfonly"} {
		_, body := batch("POST " + target + " HTTP/1.1\r\nContent-Type: application/json\r\n\r\n" + fmt.Sprintf(`{"PartitionKey":"q","RowKey":"%d"}`, i))
		if got := r.submit(ctype, body); got.status != 202 || innerStatus(got.body) != "201" {
			t.Fatalf("%s: %d %s", target, got.status, got.body)
		}
	}
}

// TestReusedBodiesLeaveStoredValuesAlone writes entities in batches and
// alone, each request's body read into a buffer the next request reuses,
// then reads every entity back: a stored key, name or value that pointed
// into a request's body would now hold a later request's bytes.
func TestReusedBodiesLeaveStoredValuesAlone(t *testing.T) {
	r := newRaw(t)
	r.table("reuse")
	want := map[string]string{}
	for round := range 20 {
		c := string(rune('a' + round))
		var ops []string
		for i := range 10 {
			rk := fmt.Sprintf("%s%d", c, i)
			v := strings.Repeat(c, 300+i)
			want[rk] = v
			ops = append(ops, r.op("POST", "/reuse", "Content-Type: application/json\r\n", `{"PartitionKey":"p","RowKey":"`+rk+`","`+c+`":"`+v+`"}`))
		}
		if got := r.submit(batch(ops...)); got.status != 202 || innerStatus(got.body) != "201" {
			t.Fatalf("batch %d: %d %s", round, got.status, got.body)
		}
		rk := c + "alone"
		want[rk] = strings.Repeat(c, 200)
		r.insert("reuse", `{"PartitionKey":"p","RowKey":"`+rk+`","`+c+`":"`+want[rk]+`"}`)
	}
	for rk, v := range want {
		m, st := r.get("reuse", "p", rk)
		if st != 200 || m["RowKey"] != rk || m[rk[:1]] != v || len(m) != 6 { // odata.metadata, odata.etag, two keys, Timestamp, the value
			t.Fatalf("%s read back as %d %v", rk, st, m)
		}
	}
}

// TestBatchResponseParts checks each part of a batch response as the
// service writes it: the status, Preference-Applied for return-no-content,
// Location and DataServiceId naming the entity with its quote doubled and
// percent-encoded, the ETag every write shares, and the entity for an insert
// that asked for it.
func TestBatchResponseParts(t *testing.T) {
	r := newRaw(t)
	r.table("parts")
	json := `Content-Type: application/json` + "\r\n"
	ctype, body := batch(
		r.op("POST", "/parts", json+"Prefer: return-no-content\r\n", `{"PartitionKey":"p","RowKey":"it's","N":1}`),
		r.op("POST", "/parts", json, `{"PartitionKey":"p","RowKey":"b c","N":2}`),
		r.op("PUT", "/parts(PartitionKey='p',RowKey='u')", json, `{"N":3}`),
	)
	got := r.submit(ctype, body)
	if got.status != 202 {
		t.Fatalf("status %d: %s", got.status, got.body)
	}
	parts := strings.Split(got.body, "HTTP/1.1 ")[1:]
	if len(parts) != 3 {
		t.Fatalf("%d parts in %s", len(parts), got.body)
	}
	etag := ""
	for i, want := range []struct {
		status, key string
		noContent   bool
	}{{"204 No Content", "it''s", true}, {"201 Created", "b c", false}, {"204 No Content", "", false}} {
		p := parts[i]
		if !strings.HasPrefix(p, want.status+"\r\n") {
			t.Fatalf("part %d: %q, want status %s", i, p, want.status)
		}
		if strings.Contains(p, "Preference-Applied: return-no-content\r\n") != want.noContent {
			t.Fatalf("part %d: Preference-Applied is %v, want %v: %q", i, !want.noContent, want.noContent, p)
		}
		if want.key != "" {
			loc := r.base + "/parts(PartitionKey='p',RowKey='" + url.PathEscape(want.key) + "')"
			if !strings.Contains(p, "\r\nLocation: "+loc+"\r\nDataServiceId: "+loc+"\r\n") {
				t.Fatalf("part %d: want Location and DataServiceId %s: %q", i, loc, p)
			}
		} else if strings.Contains(p, "Location:") {
			t.Fatalf("part %d: an update has no Location: %q", i, p)
		}
		_, after, ok := strings.Cut(p, "\r\nETag: ")
		tag, _, _ := strings.Cut(after, "\r\n")
		if !ok || !strings.HasPrefix(tag, `W/"datetime'`) || etag != "" && tag != etag {
			t.Fatalf("part %d: ETag %q, the batch's is %q", i, tag, etag)
		}
		etag = tag
		if hasEntity := strings.Contains(p, `"RowKey":"b c"`); hasEntity != (i == 1) {
			t.Fatalf("part %d: entity in the response is %v: %q", i, hasEntity, p)
		}
	}
}

// TestInsertAnswerHeaders checks the headers of an insert's answer, with
// the entity and without: one request ID, an ETag that the entity and a
// read agree on, and Location and DataServiceId naming the entity with its
// quote doubled and percent-encoded.
func TestInsertAnswerHeaders(t *testing.T) {
	r := newRaw(t)
	r.table("answers")
	for _, c := range []struct {
		rk     string
		prefer string
		status int
	}{{"it's b c", "", 201}, {"r2", "return-no-content", 204}, {"é ü%", "return-content", 201}} {
		hdr := map[string]string{"Content-Type": "application/json"}
		if c.prefer != "" {
			hdr["Prefer"] = c.prefer
		}
		body, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": c.rk})
		got := r.must("POST", "/answers", hdr, string(body), c.status)
		loc := r.base + "/answers(PartitionKey='p',RowKey='" + url.PathEscape(strings.ReplaceAll(c.rk, "'", "''")) + "')"
		h := got.header
		if len(h["Location"]) != 1 || h.Get("Location") != loc || len(h["Dataserviceid"]) != 1 || h.Get("Dataserviceid") != loc {
			t.Errorf("%s: Location %q, DataServiceId %q, want %s", c.rk, h["Location"], h["Dataserviceid"], loc)
		}
		if ids := h["X-Ms-Request-Id"]; len(ids) != 1 || len(ids[0]) != 36 {
			t.Errorf("%s: request IDs %q", c.rk, ids)
		}
		etag := h.Get("Etag")
		if len(h["Etag"]) != 1 || !strings.HasPrefix(etag, `W/"datetime'`) {
			t.Fatalf("%s: ETag %q", c.rk, h["Etag"])
		}
		if c.status == 201 && !strings.Contains(got.body, `"odata.etag":"`+strings.ReplaceAll(etag, `"`, `\"`)+`"`) {
			t.Errorf("%s: ETag %s, entity %s", c.rk, etag, got.body)
		}
		if read := r.do("GET", strings.TrimPrefix(loc, r.base), nil, "", true); read.status != 200 || read.header.Get("Etag") != etag {
			t.Errorf("%s: read back as %d with ETag %q, the insert's %q", c.rk, read.status, read.header.Get("Etag"), etag)
		}
	}
}

// TestBatchResponseLength checks that a batch response larger than
// net/http buffers is sent whole, with its length, rather than in chunks.
func TestBatchResponseLength(t *testing.T) {
	r := newRaw(t)
	r.table("length")
	var ops []string
	for i := range 40 {
		ops = append(ops, r.op("POST", "/length", "Content-Type: application/json\r\n", fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%03d","S":"%s"}`, i, strings.Repeat("x", 100))))
	}
	got := r.submit(batch(ops...))
	if got.status != 202 || len(got.body) < 8<<10 {
		t.Fatalf("status %d, %d bytes", got.status, len(got.body))
	}
	if cl := got.header.Get("Content-Length"); cl != fmt.Sprint(len(got.body)) {
		t.Fatalf("Content-Length %q for a body of %d bytes", cl, len(got.body))
	}
}

// TestClientRequestIDEchoed checks that an answer carries the request's
// x-ms-client-request-id, as every operation's answer does at the service,
// on success and on error, and leaves out one that is longer than 1,024
// characters or not visible ASCII.
func TestClientRequestIDEchoed(t *testing.T) {
	r := newRaw(t)
	r.table("echoes")
	id := "b86e2b01-a7b5-4df2-b190-205a0c24bd36"
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"PUT", "/echoes?comp=acl", "", 204},
		{"GET", "/echoes?comp=acl", "", 200},
		{"GET", "/Tables", "", 200},
		{"GET", "/echoes(PartitionKey='p',RowKey='missing')", "", 404},
	} {
		got := r.must(c.method, c.path, map[string]string{"x-ms-client-request-id": id}, c.body, c.status)
		if ids := got.header["X-Ms-Client-Request-Id"]; len(ids) != 1 || ids[0] != id {
			t.Errorf("%s %s: x-ms-client-request-id %q, want the request's %q", c.method, c.path, ids, id)
		}
	}
	for _, bad := range []string{strings.Repeat("a", 1025), "two words", "caf\u00e9"} {
		got := r.must("GET", "/Tables", map[string]string{"x-ms-client-request-id": bad}, "", 200)
		if ids := got.header["X-Ms-Client-Request-Id"]; ids != nil {
			t.Errorf("x-ms-client-request-id %q echoed as %q, want none", bad, ids)
		}
	}
	if got := r.must("GET", "/Tables", nil, "", 200); got.header["X-Ms-Client-Request-Id"] != nil {
		t.Errorf("no x-ms-client-request-id sent, %q answered", got.header["X-Ms-Client-Request-Id"])
	}
}
