package rest_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/tables"
)

// pageKeys reads the keys of a query page's entities and of its
// continuation, "" when it has none.
func pageKeys(t *testing.T, body string, npk, nrk string) (keys []string, next [2]string) {
	t.Helper()
	var page struct {
		Value []struct{ PartitionKey, RowKey string }
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatalf("a query page is not JSON: %v: %s", err, body)
	}
	for _, e := range page.Value {
		keys = append(keys, e.PartitionKey+"/"+e.RowKey)
	}
	for i, tok := range []string{npk, nrk} {
		if tok == "" {
			continue
		}
		k, err := tables.DecodeToken(tok)
		if err != nil {
			t.Fatalf("continuation token %q: %v", tok, err)
		}
		next[i] = k
	}
	return keys, next
}

// batchQuery returns a batch of one query, as SDKs send a query in a batch.
func (r *raw) batchQuery(path string) (ctype, body string) {
	return "multipart/mixed; boundary=batch_1", "--batch_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET " + r.base + path + " HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n\r\n--batch_1--\r\n"
}

// TestSASRangeEndsContinuation pages through queries under a SAS with a key
// range, on every query path, and checks that no page or continuation
// names a key outside the range.
func TestSASRangeEndsContinuation(t *testing.T) {
	r := newRaw(t)
	r.table("leak")
	for _, e := range []string{`"a","secretlow"`, `"b","1"`, `"m","1"`, `"mz","secretkey"`, `"zsecretpk","1"`} {
		r.insert("leak", `{"PartitionKey":`+strings.Replace(e, ",", `,"RowKey":`, 1)+`}`)
	}
	inRange := map[string]bool{"b/1": true, "m/1": true}
	for _, tc := range []struct {
		name   string
		sas    url.Values
		want   []string
		inside func(pk, rk string) bool
	}{
		{"partition keys b to m", url.Values{"tn": {"leak"}, "sp": {"r"}, "spk": {"b"}, "epk": {"m"}}, []string{"b/1", "m/1"},
			func(pk, rk string) bool { return pk >= "b" && pk <= "m" }},
		{"up to row 1 of m", url.Values{"tn": {"leak"}, "sp": {"r"}, "spk": {"b"}, "srk": {"1"}, "epk": {"m"}, "erk": {"1"}}, []string{"b/1", "m/1"},
			func(pk, rk string) bool {
				return (pk > "b" || (pk == "b" && rk >= "1")) && (pk < "m" || (pk == "m" && rk <= "1"))
			}},
	} {
		sas := signSAS(tc.sas)
		geM := "&$filter=" + url.QueryEscape("PartitionKey ge 'm'")
		for _, path := range []struct {
			name, path, from string
			batch            bool
			want             []string
		}{
			{"table query", "/leak()?$top=1" + geM, "", false, []string{"m/1"}},
			{"table query from the start", "/leak()?$top=1", "", false, tc.want},
			{"query without parentheses", "/leak?$top=1", "", false, tc.want},
			{"query from before the range", "/leak()?$top=1", "&NextPartitionKey=" + url.QueryEscape(tables.EncodeToken("a")), false, tc.want},
			{"query in a batch", "/leak()?$top=1" + geM, "", true, []string{"m/1"}},
			{"query in a batch from the start", "/leak()?$top=1", "", true, tc.want},
		} {
			var got []string
			next := path.from
			for page := 0; ; page++ {
				if page > 10 {
					t.Fatalf("%s, %s: the query does not end", tc.name, path.name)
				}
				var body, npk, nrk string
				if path.batch {
					ctype, b := r.batchQuery(path.path + next)
					rep := r.do("POST", "/$batch?"+sas, map[string]string{"Content-Type": ctype}, b, false)
					if rep.status != 202 || innerStatus(rep.body) != "200" {
						t.Fatalf("%s, %s: %d %s", tc.name, path.name, rep.status, rep.body)
					}
					body = rep.body[strings.Index(rep.body, "{") : strings.LastIndex(rep.body, "}")+1]
					npk, nrk = partHeader(rep.body, "x-ms-continuation-NextPartitionKey"), partHeader(rep.body, "x-ms-continuation-NextRowKey")
				} else {
					rep := r.do("GET", path.path+next+"&"+sas, nil, "", false)
					if rep.status != 200 {
						t.Fatalf("%s, %s: %d %s", tc.name, path.name, rep.status, rep.body)
					}
					body, npk, nrk = rep.body, rep.header.Get("x-ms-continuation-NextPartitionKey"), rep.header.Get("x-ms-continuation-NextRowKey")
				}
				if strings.Contains(body, "secret") {
					t.Fatalf("%s, %s: a page shows an entity outside the range: %s", tc.name, path.name, body)
				}
				keys, c := pageKeys(t, body, npk, nrk)
				got = append(got, keys...)
				if npk == "" {
					break
				}
				if !tc.inside(c[0], c[1]) {
					t.Fatalf("%s, %s: the continuation names %q/%q, outside the SAS's key range", tc.name, path.name, c[0], c[1])
				}
				next = "&NextPartitionKey=" + url.QueryEscape(npk)
				if nrk != "" {
					next += "&NextRowKey=" + url.QueryEscape(nrk)
				}
			}
			for _, k := range got {
				if !inRange[k] {
					t.Errorf("%s, %s: returned %s", tc.name, path.name, k)
				}
			}
			if strings.Join(got, ",") != strings.Join(path.want, ",") {
				t.Errorf("%s, %s: got %v, want %v", tc.name, path.name, got, path.want)
			}
		}
	}
}

// partHeader returns a header of the first part of a batch response.
func partHeader(body, name string) string {
	for _, line := range strings.Split(body, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestSASSignedVersion checks that a SAS's signed version is one the server
// takes in x-ms-version, and that the SAS is refused as unauthenticated
// when it is not.
func TestSASSignedVersion(t *testing.T) {
	r := newRaw(t)
	r.table("versions")
	r.insert("versions", `{"PartitionKey":"p","RowKey":"1"}`)
	get := "/versions(PartitionKey='p',RowKey='1')?"
	for _, tc := range []struct {
		name string
		sas  url.Values
		drop bool // sign with sv, then leave it out
		want int
		code string
	}{
		{"a known version", url.Values{"tn": {"versions"}, "sp": {"r"}, "sv": {"2019-02-02"}}, false, 200, ""},
		{"a later known version", url.Values{"tn": {"versions"}, "sp": {"r"}, "sv": {"2020-12-06"}}, false, 200, ""},
		{"a version in the future", url.Values{"tn": {"versions"}, "sp": {"r"}, "sv": {"2099-01-01"}}, false, 403, "AuthenticationFailed"},
		{"not a version", url.Values{"tn": {"versions"}, "sp": {"r"}, "sv": {"banana"}}, false, 403, "AuthenticationFailed"},
		{"before table SAS", url.Values{"tn": {"versions"}, "sp": {"r"}, "sv": {"2011-08-18"}}, false, 403, "AuthenticationFailed"},
		{"no version", url.Values{"tn": {"versions"}, "sp": {"r"}}, true, 403, "AuthenticationFailed"},
		{"account SAS, a known version", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"r"}, "sv": {"2019-02-02"}}, false, 200, ""},
		{"account SAS, a version in the future", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"r"}, "sv": {"2099-01-01"}}, false, 403, "AuthenticationFailed"},
		{"account SAS, not a version", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"r"}, "sv": {"banana"}}, false, 403, "AuthenticationFailed"},
		{"account SAS before account SAS", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"r"}, "sv": {"2013-08-15"}}, false, 403, "AuthenticationFailed"},
	} {
		q := signSAS(tc.sas)
		if tc.drop {
			v, _ := url.ParseQuery(q)
			v.Del("sv")
			q = v.Encode()
		}
		got := r.do("GET", get+q, nil, "", false)
		if got.status != tc.want || got.code != tc.code {
			t.Errorf("%s: %d %s %s, want %d %s", tc.name, got.status, got.code, got.body, tc.want, tc.code)
		}
		if tc.want != 200 && !strings.Contains(got.body, "signed version") {
			t.Errorf("%s: the error does not say what is wrong: %s", tc.name, got.body)
		}
	}
	// The same values in x-ms-version are refused too, as the request's
	// header.
	for _, v := range []string{"2099-01-01", "banana"} {
		if got := r.do("GET", get+signSAS(url.Values{"tn": {"versions"}, "sp": {"r"}}), map[string]string{"x-ms-version": v}, "", false); got.status != 400 {
			t.Errorf("x-ms-version %s: %d, want 400", v, got.status)
		}
	}
}

// TestAdminTakesSharedKeyOnly replays a captured admin GET's signature as a
// PUT of the rates: SharedKeyLite, which does not sign the verb, is refused
// outright, and a SharedKey GET's signature does not sign a PUT.
func TestAdminTakesSharedKeyOnly(t *testing.T) {
	r := newRaw(t)
	root := strings.TrimSuffix(r.base, "/"+rest.DevAccount)
	send := func(method string, auth http.Header, body string) int {
		req, _ := http.NewRequest(method, root+rest.AdminPath+"rates", strings.NewReader(body))
		for k, v := range auth {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	captured := func(sign func(*http.Request)) http.Header {
		req, _ := http.NewRequest(http.MethodGet, root+rest.AdminPath+"rates", nil)
		sign(req)
		return http.Header{"Authorization": req.Header["Authorization"], "X-Ms-Date": req.Header["X-Ms-Date"]}
	}
	lite := captured(func(req *http.Request) { signLite(req, time.Now()) })
	full := captured(func(req *http.Request) { rest.SignRequest(req, rest.DevAccount, accountKey()) })
	if got := send(http.MethodGet, full, ""); got != 200 {
		t.Fatalf("a SharedKey GET: %d", got)
	}
	for name, auth := range map[string]http.Header{"SharedKeyLite": lite, "SharedKey": full} {
		if got := send(http.MethodPut, auth, `{"partition_rate": 1}`); got != 403 {
			t.Errorf("a %s GET's signature replayed as a PUT: %d, want 403", name, got)
		}
	}
	if got := send(http.MethodGet, lite, ""); got != 403 {
		t.Errorf("a SharedKeyLite admin GET: %d, want 403", got)
	}
	req, _ := http.NewRequest(http.MethodPut, root+rest.AdminPath+"rates", strings.NewReader(`{"partition_rate": 7}`))
	req.Header.Set("Content-Type", "application/json")
	rest.SignRequest(req, rest.DevAccount, accountKey())
	if got := send(http.MethodPut, req.Header, `{"partition_rate": 7}`); got != 200 {
		t.Fatalf("a SharedKey PUT: %d", got)
	}
	// Content-Type is signed: the same signature with another type fails.
	req.Header.Set("Content-Type", "text/plain")
	if got := send(http.MethodPut, req.Header, `{"partition_rate": 8}`); got != 403 {
		t.Errorf("a PUT whose content type changed after signing: %d, want 403", got)
	}
}

func accountKey() []byte {
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	return key
}

// TestSASMismatchCodes checks each kind of account SAS mismatch answers the
// service's code for it: 403 AuthorizationServiceMismatch for a service the
// SAS does not name, AuthorizationResourceTypeMismatch for a resource type,
// AuthorizationPermissionMismatch for a permission; a forged SAS is
// AuthenticationFailed whatever it names.
func TestSASMismatchCodes(t *testing.T) {
	r := newRaw(t)
	r.table("codes")
	r.insert("codes", `{"PartitionKey":"p","RowKey":"1"}`)
	json := map[string]string{"Content-Type": "application/json"}
	type call struct {
		method, path string
		body         string
	}
	query := call{"GET", "/codes()", ""}
	insert := call{"POST", "/codes", `{"PartitionKey":"p","RowKey":"2"}`}
	list := call{"GET", "/Tables", ""}
	create := call{"POST", "/Tables", `{"TableName":"made"}`}
	props := call{"GET", "/?restype=service&comp=properties", ""}
	for _, tc := range []struct {
		name   string
		sas    url.Values
		call   call
		want   int
		code   string
		forged bool
	}{
		{"services without tables, query", url.Values{"ss": {"bq"}, "srt": {"sco"}, "sp": {"rwdlacu"}}, query, 403, "AuthorizationServiceMismatch", false},
		{"services without tables, list", url.Values{"ss": {"f"}, "srt": {"sco"}, "sp": {"rwdlacu"}}, list, 403, "AuthorizationServiceMismatch", false},
		{"no services", url.Values{"srt": {"sco"}, "sp": {"rwdlacu"}}, props, 403, "AuthorizationServiceMismatch", false},
		{"forged, services without tables", url.Values{"ss": {"b"}, "srt": {"sco"}, "sp": {"rwdlacu"}}, query, 403, "AuthenticationFailed", true},
		{"objects without o", url.Values{"ss": {"t"}, "srt": {"s"}, "sp": {"rwdlacu"}}, insert, 403, "AuthorizationResourceTypeMismatch", false},
		{"tables without c", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"rwdlacu"}}, create, 403, "AuthorizationResourceTypeMismatch", false},
		{"service without s", url.Values{"ss": {"t"}, "srt": {"co"}, "sp": {"rwdlacu"}}, props, 403, "AuthorizationResourceTypeMismatch", false},
		{"query without r", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"a"}}, query, 403, "AuthorizationPermissionMismatch", false},
		{"insert without a", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"ru"}}, insert, 403, "AuthorizationPermissionMismatch", false},
		{"list without l", url.Values{"ss": {"t"}, "srt": {"sc"}, "sp": {"r"}}, list, 403, "AuthorizationPermissionMismatch", false},
		{"all of it", url.Values{"ss": {"bt"}, "srt": {"o"}, "sp": {"r"}}, query, 200, "", false},
		{"a table SAS with srk but no spk", url.Values{"tn": {"codes"}, "sp": {"r"}, "srk": {"1"}}, query, 403, "AuthenticationFailed", false},
		{"a table SAS with erk but no epk", url.Values{"tn": {"codes"}, "sp": {"r"}, "erk": {"1"}}, query, 403, "AuthenticationFailed", false},
	} {
		q := signSAS(tc.sas)
		if tc.forged {
			v, _ := url.ParseQuery(q)
			v.Set("sig", "AAAA"+v.Get("sig")[4:])
			q = v.Encode()
		}
		sep := "?"
		if strings.Contains(tc.call.path, "?") {
			sep = "&"
		}
		got := r.do(tc.call.method, tc.call.path+sep+q, json, tc.call.body, false)
		if got.status != tc.want || got.code != tc.code {
			t.Errorf("%s: %d %s, want %d %s %s", tc.name, got.status, got.code, tc.want, tc.code, got.body)
		}
	}
}

// TestOversizedRequestsAnswerInServiceForm sends a URL and headers over the
// server's limits, including ones over what net/http reads by default,
// and expects the service's error form: a JSON error body and
// x-ms-error-code, not net/http's plain-text 431.
func TestOversizedRequestsAnswerInServiceForm(t *testing.T) {
	root := "http://" + limitedServer(t, rest.DefaultTimeouts()) + "/" + rest.DevAccount
	for _, tc := range []struct {
		name   string
		url    string
		header string
		status int
		code   string
	}{
		{"a URL over the limit", "/slow()?$filter=" + strings.Repeat("x", rest.MaxURLBytes), "", 414, "RequestUrlTooLong"},
		{"a URL over net/http's limit", "/slow()?$filter=" + strings.Repeat("x", rest.MaxHeaderBytes+8<<10), "", 414, "RequestUrlTooLong"},
		{"headers over the limit", "/slow()", strings.Repeat("y", rest.MaxHeaderBytes), 431, "RequestHeaderTooLarge"},
		{"headers over net/http's limit", "/slow()", strings.Repeat("y", rest.MaxHeaderBytes+8<<10), 431, "RequestHeaderTooLarge"},
		{"a URL within the limit", "/slow()?$top=1&x=" + strings.Repeat("x", rest.MaxURLBytes-1000), "", 200, ""},
	} {
		req, _ := http.NewRequest("GET", root+tc.url, nil)
		if tc.header != "" {
			req.Header.Set("X-Padding", tc.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
			t.Errorf("%s: %d %q %.200s, want %d %s", tc.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body, tc.status, tc.code)
			continue
		}
		if tc.code != "" && !strings.Contains(string(body), `"odata.error"`) {
			t.Errorf("%s: the body is not the service's error form: %.200s", tc.name, body)
		}
	}
}

// TestSASUpserts checks upserts (insert-or-replace, insert-or-merge) need
// both add and update permissions, as the Table service's SAS rules say
// (Azurite takes update alone; the service's documents do not), on every
// path an upsert takes, and that a SAS naming a stored access policy
// follows the policy as it is now: narrowed, removed, or gone with its
// table.
func TestSASUpserts(t *testing.T) {
	r := newRaw(t)
	r.table("ups")
	r.insert("ups", `{"PartitionKey":"p","RowKey":"old","V":1}`)
	json := "Content-Type: application/json\r\n"
	type call struct {
		name, method, path string
		hdr                map[string]string
	}
	ent := "/ups(PartitionKey='p',RowKey='%s')"
	calls := []call{
		{"insert-or-replace", "PUT", ent, map[string]string{"Content-Type": "application/json"}},
		{"insert-or-merge", "MERGE", ent, map[string]string{"Content-Type": "application/json"}},
		{"insert-or-merge by PATCH", "PATCH", ent, map[string]string{"Content-Type": "application/json"}},
		{"tunnelled insert-or-merge", "POST", ent, map[string]string{"Content-Type": "application/json", "X-HTTP-Method": "MERGE"}},
	}
	try := func(sas string, c call, rk string) reply {
		return r.do(c.method, strings.Replace(c.path, "%s", rk, 1)+"?"+sas, c.hdr, `{"V":2}`, false)
	}
	tryBatch := func(sas, method, rk string) reply {
		ctype, body := batch(r.op(method, strings.Replace(ent, "%s", rk, 1), json, `{"V":3}`))
		return r.do("POST", "/$batch?"+sas, map[string]string{"Content-Type": ctype}, body, false)
	}
	for _, tc := range []struct {
		name string
		sas  url.Values
		want int
		code string
	}{
		{"update only", url.Values{"tn": {"ups"}, "sp": {"u"}}, 403, "AuthorizationPermissionMismatch"},
		{"add only", url.Values{"tn": {"ups"}, "sp": {"a"}}, 403, "AuthorizationPermissionMismatch"},
		{"read, update and delete", url.Values{"tn": {"ups"}, "sp": {"rud"}}, 403, "AuthorizationPermissionMismatch"},
		{"account SAS, update only", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"u"}}, 403, "AuthorizationPermissionMismatch"},
		{"add and update", url.Values{"tn": {"ups"}, "sp": {"au"}}, 204, ""},
		{"account SAS, add and update", url.Values{"ss": {"t"}, "srt": {"o"}, "sp": {"au"}}, 204, ""},
	} {
		sas := signSAS(tc.sas)
		for _, c := range calls {
			for _, rk := range []string{"old", "new-" + c.name} {
				if got := try(sas, c, rk); got.status != tc.want || got.code != tc.code {
					t.Errorf("%s, %s of %s: %d %s, want %d %s", tc.name, c.name, rk, got.status, got.code, tc.want, tc.code)
				}
			}
		}
		for _, m := range []string{"PUT", "MERGE"} {
			got := tryBatch(sas, m, "batch-"+m)
			if ok := got.status == 202 && innerStatus(got.body) == "204"; ok != (tc.want == 204) {
				t.Errorf("%s, %s in a batch: %d %s", tc.name, m, got.status, got.body)
			}
		}
	}
	if m, _ := r.get("ups", "p", "new-insert-or-replace"); m == nil {
		t.Fatal("an upsert with add and update did not insert")
	}

	// A SAS naming a stored access policy: the policy's permissions as they
	// are when the request comes.
	policy := func(perm string) string {
		return `<SignedIdentifiers><SignedIdentifier><Id>pol</Id><AccessPolicy><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>` + perm + `</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	}
	r.must("PUT", "/ups?comp=acl", nil, policy("raud"), 204)
	sas := signSAS(url.Values{"tn": {"ups"}, "si": {"pol"}})
	if got := try(sas, calls[0], "by-policy"); got.status != 204 {
		t.Fatalf("an upsert under a policy with add and update: %d %s", got.status, got.body)
	}
	for _, step := range []struct {
		name   string
		change func()
		code   string
	}{
		{"narrowed to update", func() { r.must("PUT", "/ups?comp=acl", nil, policy("ru"), 204) }, "AuthorizationPermissionMismatch"},
		{"removed", func() { r.must("PUT", "/ups?comp=acl", nil, `<SignedIdentifiers/>`, 204) }, "AuthenticationFailed"},
		{"gone with its table", func() {
			r.must("PUT", "/ups?comp=acl", nil, policy("raud"), 204)
			r.must("DELETE", "/Tables('ups')", nil, "", 204)
			r.table("ups")
		}, "AuthenticationFailed"},
	} {
		step.change()
		for _, c := range calls {
			if got := try(sas, c, "by-policy"); got.status != 403 || got.code != step.code {
				t.Errorf("policy %s, %s: %d %s, want 403 %s", step.name, c.name, got.status, got.code, step.code)
			}
		}
		if got := tryBatch(sas, "PUT", "by-policy"); got.status != 403 || got.code != step.code {
			t.Errorf("policy %s, in a batch: %d %s, want 403 %s", step.name, got.status, got.code, step.code)
		}
	}
}
