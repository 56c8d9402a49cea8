package rest_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablebench/tablebench/engine/rest"
)

// signSAS signs a service SAS (with tn) or an account SAS (with ss) with the
// development key and returns its query string. Without se and si it
// expires in an hour.
func signSAS(v url.Values) string {
	if v.Get("se") == "" && v.Get("si") == "" {
		v.Set("se", time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z"))
	}
	if v.Get("sv") == "" {
		v.Set("sv", "2019-02-02")
	}
	var toSign string
	if tn := v.Get("tn"); tn != "" {
		toSign = strings.Join([]string{v.Get("sp"), v.Get("st"), v.Get("se"), "/table/" + rest.DevAccount + "/" + strings.ToLower(tn),
			v.Get("si"), v.Get("sip"), v.Get("spr"), v.Get("sv"), v.Get("spk"), v.Get("srk"), v.Get("epk"), v.Get("erk")}, "\n")
	} else {
		toSign = strings.Join([]string{rest.DevAccount, v.Get("sp"), v.Get("ss"), v.Get("srt"), v.Get("st"), v.Get("se"), v.Get("sip"), v.Get("spr"), v.Get("sv"), ""}, "\n")
	}
	key, _ := base64.StdEncoding.DecodeString(rest.DevKey)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(toSign))
	v.Set("sig", base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return v.Encode()
}

func TestSASInsideBatches(t *testing.T) {
	r := newRaw(t)
	r.table("tablea")
	r.table("tableb")
	r.insert("tableb", `{"PartitionKey":"p","RowKey":"victim","V":1}`)
	r.insert("tablea", `{"PartitionKey":"p","RowKey":"1"}`)
	addA := signSAS(url.Values{"tn": {"tablea"}, "sp": {"a"}})
	json := "Content-Type: application/json\r\n"
	for _, tc := range []struct {
		name string
		op   string
	}{
		{"insert into another table", r.op("POST", "/tableb", json, `{"PartitionKey":"p","RowKey":"new"}`)},
		{"overwrite in another table", r.op("PUT", "/tableb(PartitionKey='p',RowKey='victim')", json, `{"V":2}`)},
		{"delete in another table", r.op("DELETE", "/tableb(PartitionKey='p',RowKey='victim')", "If-Match: *\r\n", "")},
		{"delete with add only", r.op("DELETE", "/tablea(PartitionKey='p',RowKey='1')", "If-Match: *\r\n", "")},
		{"update with add only", r.op("MERGE", "/tablea(PartitionKey='p',RowKey='1')", json+"If-Match: *\r\n", `{"X":1}`)},
		{"upsert with add only", r.op("PUT", "/tablea(PartitionKey='p',RowKey='1')", json, `{"X":1}`)},
		{"a later operation out of scope", r.op("POST", "/tablea", json, `{"PartitionKey":"q","RowKey":"ok"}`) + "\r\n--changeset_1\r\nContent-Type: application/http\r\n\r\n" + r.op("POST", "/tableb", json, `{"PartitionKey":"q","RowKey":"new"}`)},
	} {
		ctype, body := batch(tc.op)
		got := r.do("POST", "/$batch?"+addA, map[string]string{"Content-Type": ctype}, body, false)
		if got.status != 403 {
			t.Errorf("%s: %d %s, want 403", tc.name, got.status, got.body)
		}
	}
	if m, st := r.get("tableb", "p", "victim"); st != 200 || m["V"] != 1.0 {
		t.Fatalf("table B was changed through table A's SAS: %d %v", st, m)
	}
	if _, st := r.get("tableb", "p", "new"); st != 404 {
		t.Fatal("an entity was inserted into table B through table A's SAS")
	}
	if _, st := r.get("tablea", "p", "1"); st != 200 {
		t.Fatal("an add-only SAS deleted an entity")
	}
	// What the SAS does grant works inside a batch.
	ctype, body := batch(r.op("POST", "/tablea", json, `{"PartitionKey":"p","RowKey":"2"}`))
	if got := r.do("POST", "/$batch?"+addA, map[string]string{"Content-Type": ctype}, body, false); got.status != 202 || innerStatus(got.body) != "201" {
		t.Fatalf("an insert the SAS grants: %d %s", got.status, got.body)
	}
}

func TestSASRules(t *testing.T) {
	r := newRaw(t)
	r.table("rules")
	r.insert("rules", `{"PartitionKey":"b","RowKey":"5"}`)
	json := map[string]string{"Content-Type": "application/json"}
	entity := `{"PartitionKey":"b","RowKey":"6"}`
	type call struct {
		method, path string
		hdr          map[string]string
		body         string
	}
	insert := call{"POST", "/rules", json, entity}
	get := call{"GET", "/rules(PartitionKey='b',RowKey='5')", nil, ""}
	for _, tc := range []struct {
		name string
		sas  url.Values
		call call
		want int
		code string
	}{
		{"tunnelled delete with add only", url.Values{"tn": {"rules"}, "sp": {"a"}}, call{"POST", "/rules(PartitionKey='b',RowKey='5')", map[string]string{"X-HTTP-Method": "DELETE", "If-Match": "*"}, ""}, 403, "AuthorizationPermissionMismatch"},
		{"upsert needs add and update", url.Values{"tn": {"rules"}, "sp": {"u"}}, call{"PUT", "/rules(PartitionKey='b',RowKey='7')", json, `{}`}, 403, "AuthorizationPermissionMismatch"},
		{"upsert with add and update", url.Values{"tn": {"rules"}, "sp": {"au"}}, call{"PUT", "/rules(PartitionKey='b',RowKey='7')", json, `{}`}, 204, ""},
		{"another IP", url.Values{"tn": {"rules"}, "sp": {"r"}, "sip": {"10.1.2.3"}}, get, 403, "AuthorizationSourceIPMismatch"},
		{"this IP in a range", url.Values{"tn": {"rules"}, "sp": {"r"}, "sip": {"127.0.0.0-127.0.0.9"}}, get, 200, ""},
		{"HTTPS only over HTTP", url.Values{"tn": {"rules"}, "sp": {"r"}, "spr": {"https"}}, get, 403, "AuthorizationProtocolMismatch"},
		{"HTTPS or HTTP", url.Values{"tn": {"rules"}, "sp": {"r"}, "spr": {"https,http"}}, get, 200, ""},
		{"below the key range", url.Values{"tn": {"rules"}, "sp": {"ra"}, "spk": {"c"}}, insert, 403, "AuthorizationFailure"},
		{"in the key range", url.Values{"tn": {"rules"}, "sp": {"ra"}, "spk": {"b"}, "srk": {"6"}, "epk": {"b"}, "erk": {"9"}}, insert, 201, ""},
		{"row key below its range", url.Values{"tn": {"rules"}, "sp": {"ra"}, "spk": {"b"}, "srk": {"6"}}, get, 403, "AuthorizationFailure"},
		{"account SAS without objects", url.Values{"ss": {"t"}, "srt": {"sc"}, "sp": {"rwdlacu"}}, call{"POST", "/rules", json, `{"PartitionKey":"b","RowKey":"8"}`}, 403, "AuthorizationResourceTypeMismatch"},
		{"account SAS lists tables", url.Values{"ss": {"t"}, "srt": {"c"}, "sp": {"l"}}, call{"GET", "/Tables", nil, ""}, 200, ""},
		{"account SAS without list", url.Values{"ss": {"t"}, "srt": {"sco"}, "sp": {"r"}}, call{"GET", "/Tables", nil, ""}, 403, "AuthorizationPermissionMismatch"},
		{"account SAS for blobs only", url.Values{"ss": {"b"}, "srt": {"sco"}, "sp": {"rl"}}, call{"GET", "/Tables", nil, ""}, 403, "AuthorizationServiceMismatch"},
		{"a table SAS cannot create tables", url.Values{"tn": {"rules"}, "sp": {"raud"}}, call{"POST", "/Tables", json, `{"TableName":"sneaky"}`}, 403, "AuthorizationFailure"},
		{"not yet valid", url.Values{"tn": {"rules"}, "sp": {"r"}, "st": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}, get, 403, "AuthenticationFailed"},
	} {
		q := signSAS(tc.sas)
		sep := "?"
		if strings.Contains(tc.call.path, "?") {
			sep = "&"
		}
		got := r.do(tc.call.method, tc.call.path+sep+q, tc.call.hdr, tc.call.body, false)
		if got.status != tc.want || got.code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, got.status, got.code, tc.want, tc.code)
		}
	}
	// A SAS with its signature given twice is refused, whichever comes first.
	q := signSAS(url.Values{"tn": {"rules"}, "sp": {"r"}})
	if got := r.do("GET", "/rules(PartitionKey='b',RowKey='5')?"+q+"&sig=forged", nil, "", false); got.status != 403 {
		t.Fatalf("a duplicated sig: %d", got.status)
	}
	// A stored policy and the SAS may not both set a field.
	r.must("PUT", "/rules?comp=acl", nil, `<SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`, 204)
	both := signSAS(url.Values{"tn": {"rules"}, "si": {"p1"}, "sp": {"raud"}})
	if got := r.do("GET", "/rules(PartitionKey='b',RowKey='5')?"+both, nil, "", false); got.status != 400 {
		t.Fatalf("permissions in both the SAS and its policy: %d", got.status)
	}
}

func TestSharedKeyDates(t *testing.T) {
	r := newRaw(t)
	r.table("dated")
	r.insert("dated", `{"PartitionKey":"p","RowKey":"1"}`)
	send := func(when time.Time, dropDate bool) int {
		ctype, body := batch(r.op("DELETE", "/dated(PartitionKey='p',RowKey='1')", "If-Match: *\r\n", ""))
		req, _ := http.NewRequest("POST", r.base+"/$batch", strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		signLite(req, when)
		if dropDate {
			req.Header.Del("x-ms-date")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := send(time.Now().Add(-30*24*time.Hour), false); got != 403 {
		t.Fatalf("a month-old signed batch: %d", got)
	}
	if got := send(time.Now().Add(-20*time.Minute), false); got != 403 {
		t.Fatalf("a request 20 minutes old: %d", got)
	}
	if got := send(time.Now().Add(20*time.Minute), false); got != 403 {
		t.Fatalf("a request 20 minutes ahead: %d", got)
	}
	if got := send(time.Now(), true); got != 403 {
		t.Fatalf("a request without a date: %d", got)
	}
	if _, st := r.get("dated", "p", "1"); st != 200 {
		t.Fatal("a refused request deleted the entity")
	}
	if got := send(time.Now().Add(-10*time.Minute), false); got != 202 {
		t.Fatalf("a request 10 minutes old is within the service's skew: %d", got)
	}
}
