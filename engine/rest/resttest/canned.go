package resttest

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablebench/tablebench/engine/rest"
	"github.com/tablebench/tablebench/engine/rest/internal/memo"
)

// Canned returns a handler that answers every request with a fixed
// success shaped like the service's, headers included (a client parses
// those too), as fast as a server can: what a client alone can do on a
// machine, the ceiling any served engine is measured against. It stores
// nothing and checks nothing.
//
// Its answers are framed as the service frames them, since a client's work
// grows with them: a batch's parts between boundaries that end in a GUID,
// and entity URLs on the host the client addressed. What only the request's
// body names, a batch's table and every entity's keys, it does not read:
// those are one-letter placeholders, so it stays a little lighter for a
// client than any server that answers with them.
func Canned() http.Handler { return new(canned) }

// canned keeps its answers for the last host it was asked by: one, in a
// benchmark.
type canned struct {
	last memo.Last[string, *cannedAnswers]
}

// cannedAnswers are the bodies and header values of one host's answers.
type cannedAnswers struct {
	entity   string
	batch    string
	location []string
}

// The batch response's boundaries, as the service makes them: a GUID each.
const (
	cannedBatchBoundary     = "batchresponse_6f3b9d0e-2a41-4c8e-9b57-1d2e3f4a5b6c"
	cannedChangesetBoundary = "changesetresponse_0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
)

// answers returns the answers for host, made on its first request.
func (c *canned) answers(host string) *cannedAnswers {
	if a, ok := c.last.Get(host); ok {
		return a
	}
	root := "http://" + host + "/" + rest.DevAccount + "/"
	loc := root + "t(PartitionKey='p',RowKey='r')"
	var b strings.Builder
	b.WriteString("--" + cannedBatchBoundary + "\r\nContent-Type: multipart/mixed; boundary=" + cannedChangesetBoundary + "\r\n\r\n")
	for range 100 {
		b.WriteString("--" + cannedChangesetBoundary + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
			"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\n" +
			"DataServiceVersion: 3.0;\r\nLocation: " + loc + "\r\n" +
			"DataServiceId: " + loc + "\r\nETag: " + cannedETag[0] + "\r\n\r\n\r\n")
	}
	b.WriteString("--" + cannedChangesetBoundary + "--\r\n--" + cannedBatchBoundary + "--\r\n")
	a := &cannedAnswers{
		entity: `{"odata.metadata":"` + root + `$metadata#t/@Element","odata.etag":` + strconv.Quote(cannedETag[0]) + `,` +
			`"PartitionKey":"p","RowKey":"r","Timestamp":"2021-08-31T15:40:02.1952595Z","Payload":"` + strings.Repeat("x", 440) + `"}`,
		batch:    b.String(),
		location: []string{loc},
	}
	c.last.Put(host, a)
	return a
}

func (c *canned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	a := c.answers(r.Host)
	h := w.Header()
	h["Cache-Control"] = cannedNoCache
	h["X-Content-Type-Options"] = cannedNosniff
	h["X-Ms-Request-Id"] = cannedRequestID
	h["X-Ms-Version"] = cannedVersion
	switch {
	case strings.HasSuffix(r.URL.Path, "/$batch"):
		h["Content-Type"] = cannedMultipart
		w.WriteHeader(202)
		io.WriteString(w, a.batch)
	case strings.HasSuffix(r.URL.Path, "/Tables"):
		w.WriteHeader(201)
		io.WriteString(w, `{"TableName":"t"}`)
	case r.Method == "GET":
		h["Content-Type"] = cannedJSON
		h["Dataserviceversion"] = cannedDSV
		h["Etag"] = cannedETag
		io.WriteString(w, a.entity)
	default: // an insert without Prefer: 201 with the entity, as the service answers
		h["Content-Type"] = cannedJSON
		h["Dataserviceversion"] = cannedDSV
		h["Etag"] = cannedETag
		h["Location"] = a.location
		h["Dataserviceid"] = a.location
		w.WriteHeader(201)
		io.WriteString(w, a.entity)
	}
}

// The canned header values, made once as a fast server would.
var (
	cannedNoCache   = []string{"no-cache"}
	cannedNosniff   = []string{"nosniff"}
	cannedRequestID = []string{"34b73c29-6f93-4625-8ecd-000000000002"}
	cannedVersion   = []string{"2019-02-02"}
	cannedJSON      = []string{"application/json;odata=minimalmetadata;streaming=true;charset=utf-8"}
	cannedMultipart = []string{"multipart/mixed; boundary=" + cannedBatchBoundary}
	cannedDSV       = []string{"3.0;"}
	cannedETag      = []string{`W/"datetime'2021-08-31T15%3A40%3A02.1952595Z'"`}
)
