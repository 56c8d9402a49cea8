package rest

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// keyedRequest returns a server keyed with the development key, the key,
// the current date as a request carries it, and a request to target dated
// with it, to sign.
func keyedRequest(method, target string) (s *Server, key []byte, date string, req *http.Request) {
	key, _ = base64.StdEncoding.DecodeString(DevKey)
	date = time.Now().UTC().Format(http.TimeFormat)
	req, _ = http.NewRequest(method, target, nil)
	req.Header.Set("x-ms-date", date)
	return New(nil, Config{Account: DevAccount, Key: key}), key, date, req
}

// TestSharedKeyCheck checks both schemes' signatures against the
// service's string to sign, signatures that differ in any way (also only
// in padding bits, which base64 readers commonly ignore), and that a
// signature is checked without allocating (not counted under the race
// detector).
func TestSharedKeyCheck(t *testing.T) {
	s, key, date, req := keyedRequest(http.MethodPost, "http://h/devstoreaccount1/people?comp=x")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-MD5", "bWQ1")
	vals := url.Values{"comp": {"x"}}
	resource := "/devstoreaccount1/devstoreaccount1/people?comp=x"
	full := hmacBase64(key, "POST\nbWQ1\napplication/json\n"+date+"\n"+resource)
	lite := hmacBase64(key, date+"\n"+resource)
	check := func(scheme, signature string) bool {
		return s.checkSharedKey(req, vals, scheme, DevAccount+":"+signature, "/devstoreaccount1/people") == nil
	}
	if !check("SharedKey", full) || !check("SharedKeyLite", lite) {
		t.Fatal("a correct signature was refused")
	}
	// The last character before the padding carries two bits that are not
	// part of the 32 bytes: another character there decodes to the same
	// bytes, yet is not the signature.
	last := full[len(full)-2]
	other := full[:len(full)-2] + string(last^1) + "="
	for _, bad := range []string{lite, full[:len(full)-1], full + "A", full + full, strings.Repeat("A", 6000), strings.Repeat("A", 48), "", "!!!!", other} {
		if check("SharedKey", bad) {
			t.Errorf("signature %q accepted", bad)
		}
	}
	if check("SharedKeyLite", full) {
		t.Error("a SharedKey signature accepted as SharedKeyLite")
	}
	// Counted without the race detector (make test runs this test again
	// without it), whose sync.Pool drops the pooled HMAC state at random.
	cred := DevAccount + ":" + full
	if n := testing.AllocsPerRun(100, func() { s.checkSharedKey(req, vals, "SharedKey", cred, "/devstoreaccount1/people") }); n != 0 && !raceEnabled {
		t.Errorf("a signature check allocates %v times", n)
	}
}

// FuzzSharedKey: no Authorization credential, however malformed, makes
// the check fail other than with the service's 403, and only the
// signature of the request's string to sign is accepted.
func FuzzSharedKey(f *testing.F) {
	s, key, date, req := keyedRequest(http.MethodGet, "http://h/devstoreaccount1/Tables")
	good := DevAccount + ":" + hmacBase64(key, date+"\n/devstoreaccount1/devstoreaccount1/Tables")
	for _, seed := range []string{good, good + "A", good[:len(good)-1], DevAccount + ":", "x", DevAccount + ":" + strings.Repeat("A", 6000)} {
		f.Add("SharedKeyLite", seed)
	}
	f.Fuzz(func(t *testing.T, scheme, cred string) {
		err := s.checkSharedKey(req, nil, scheme, cred, "/devstoreaccount1/Tables")
		if err == nil && (cred != good || scheme != "SharedKeyLite") {
			t.Fatalf("%s %q accepted", scheme, cred)
		}
		if err != nil && err.Status != http.StatusForbidden {
			t.Fatalf("%s %q: %v", scheme, cred, err)
		}
	})
}

// TestSecondarySignatures: a request to the secondary endpoint is accepted
// signed with the secondary's path, the primary's, or the path after the
// secondary's segment, as SDKs sign it; any other request only with its
// own path.
func TestSecondarySignatures(t *testing.T) {
	s, key, date, req := keyedRequest(http.MethodGet, "http://h/")
	accepts := func(path, signedPath string) bool {
		cred := DevAccount + ":" + hmacBase64(key, date+"\n/"+DevAccount+signedPath)
		return s.checkSharedKey(req, nil, "SharedKeyLite", cred, path) == nil
	}
	const secondary = "/devstoreaccount1-secondary/Tables"
	for _, signed := range []string{secondary, "/devstoreaccount1/Tables", "/Tables"} {
		if !accepts(secondary, signed) {
			t.Errorf("a secondary request signed with %s was refused", signed)
		}
	}
	for _, c := range []struct{ path, signed string }{
		{secondary, "/devstoreaccount1/Other"},
		{"/devstoreaccount1/Tables", "/Tables"},
		{"/devstoreaccount1-secondaryX/Tables", "/Tables"},
	} {
		if accepts(c.path, c.signed) {
			t.Errorf("a request to %s signed with %s was accepted", c.path, c.signed)
		}
	}
}

// TestRepeatedStringToSign: a string to sign that repeats (a client's
// inserts to one table within a second) takes its HMAC from the last one
// computed, yet every signature is still compared with it, a string that
// differs in any part is signed anew, and a request to one entity does not
// displace a table's.
func TestRepeatedStringToSign(t *testing.T) {
	s, key, date, req := keyedRequest(http.MethodPost, "http://h/")
	sig := func(path string) string {
		return hmacBase64(key, "POST\n\n\n"+date+"\n/"+DevAccount+path)
	}
	accepts := func(path, signature string) bool {
		return s.checkSharedKey(req, nil, "SharedKey", DevAccount+":"+signature, path) == nil
	}
	const people, others, entity = "/devstoreaccount1/people", "/devstoreaccount1/others", "/devstoreaccount1/people(PartitionKey='p',RowKey='r')"
	for range 2 { // the second time through, every check but the first finds its string remembered
		for _, c := range []struct {
			path, signedPath string
			ok               bool
		}{
			{people, people, true}, {people, people, true}, {people, others, false}, {people, people, true},
			{others, people, false}, {others, others, true}, {people, others, false}, {people, people, true},
			{people, entity, false}, {entity, entity, true},
		} {
			if got := accepts(c.path, sig(c.signedPath)); got != c.ok {
				t.Errorf("a request to %s signed for %s: accepted %v, want %v", c.path, c.signedPath, got, c.ok)
			}
		}
		if last, ok := s.lastSigned.Key(); !ok || !strings.HasSuffix(last, "/people") {
			t.Errorf("after a request to one entity, the string remembered is %+v, want the table's", last)
		}
	}
	// A remembered string is not a pass: a wrong signature for it fails.
	right := sig(people)
	other := func(c byte) string { // another base64 digit
		if c == 'A' {
			return "B"
		}
		return "A"
	}
	if !accepts(people, right) || accepts(people, right[:10]+other(right[10])+right[11:]) || accepts(people, other(right[0])+right[1:]) {
		t.Error("a wrong signature for the remembered string was accepted, or the right one refused")
	}
}
