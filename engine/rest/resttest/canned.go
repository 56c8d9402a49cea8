package resttest

import (
	"io"
	"net/http"
	"strings"
)

// cannedEntity and cannedBatch are responses shaped like the service's,
// so the client parses as much as it would from a real server.
var (
	cannedEntity = `{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#t/@Element","odata.etag":"W/\"datetime'2021-08-31T15%3A40%3A02.1952595Z'\"",` +
		`"PartitionKey":"p","RowKey":"r","Timestamp":"2021-08-31T15:40:02.1952595Z","Payload":"` + strings.Repeat("x", 440) + `"}`
	cannedBatch = func() string {
		var b strings.Builder
		b.WriteString("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n")
		for range 100 {
			b.WriteString("--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\n" +
				"DataServiceVersion: 3.0;\r\nLocation: http://127.0.0.1/devstoreaccount1/t(PartitionKey='p',RowKey='r')\r\n" +
				"DataServiceId: http://127.0.0.1/devstoreaccount1/t(PartitionKey='p',RowKey='r')\r\nETag: W/\"datetime'2021-08-31T15%3A40%3A02.1952595Z'\"\r\n\r\n\r\n")
		}
		b.WriteString("--changesetresponse_2--\r\n--batchresponse_1--\r\n")
		return b.String()
	}()
)

// Canned returns a handler that answers every request with a fixed
// success shaped like the service's, headers included (a client parses
// those too), as fast as a server can: what a client alone can do on a
// machine, the ceiling any served engine is measured against. It stores
// nothing and checks nothing.
func Canned() http.Handler { return http.HandlerFunc(canned) }

func canned(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	h := w.Header()
	h["Cache-Control"] = cannedNoCache
	h["X-Content-Type-Options"] = cannedNosniff
	h["X-Ms-Request-Id"] = cannedRequestID
	h["X-Ms-Version"] = cannedVersion
	switch {
	case strings.HasSuffix(r.URL.Path, "/$batch"):
		h.Set("Content-Type", "multipart/mixed; boundary=batchresponse_1")
		w.WriteHeader(202)
		io.WriteString(w, cannedBatch)
	case strings.HasSuffix(r.URL.Path, "/Tables"):
		w.WriteHeader(201)
		io.WriteString(w, `{"TableName":"t"}`)
	case r.Method == "GET":
		h["Content-Type"] = cannedJSON
		h["Dataserviceversion"] = cannedDSV
		h["Etag"] = cannedETag
		io.WriteString(w, cannedEntity)
	default: // an insert without Prefer: 201 with the entity, as the service answers
		h["Content-Type"] = cannedJSON
		h["Dataserviceversion"] = cannedDSV
		h["Etag"] = cannedETag
		h["Location"] = cannedLocation
		h["Dataserviceid"] = cannedLocation
		w.WriteHeader(201)
		io.WriteString(w, cannedEntity)
	}
}

// The canned header values, made once as a fast server would.
var (
	cannedNoCache   = []string{"no-cache"}
	cannedNosniff   = []string{"nosniff"}
	cannedRequestID = []string{"34b73c29-6f93-4625-8ecd-000000000002"}
	cannedVersion   = []string{"2019-02-02"}
	cannedJSON      = []string{"application/json;odata=minimalmetadata;streaming=true;charset=utf-8"}
	cannedDSV       = []string{"3.0;"}
	cannedETag      = []string{`W/"datetime'2021-08-31T15%3A40%3A02.1952595Z'"`}
	cannedLocation  = []string{"http://127.0.0.1/devstoreaccount1/t(PartitionKey='p',RowKey='r')"}
)
