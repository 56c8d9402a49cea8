package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/odata"
	"github.com/tablebench/tablebench/tables"
)

func fuzzServer(t testing.TB) *Server {
	cfg := engine.DefaultConfig()
	cfg.Profile, cfg.TableDeleteGrace = engine.None(), 0
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.CreateTable(t.Context(), "fuzz")
	e.Client(nil).Insert(t.Context(), "fuzz", tables.Entity{PartitionKey: "p", RowKey: "r"})
	return New(e, Config{Account: DevAccount, Auth: AuthNone})
}

// FuzzRequest: no request, however malformed, makes the server fail: every
// answer is the service's, and never a 500 from a recovered panic.
func FuzzRequest(f *testing.F) {
	f.Add("GET", "/devstoreaccount1/fuzz(PartitionKey='p',RowKey='r')", "", "")
	f.Add("POST", "/devstoreaccount1/fuzz", "application/json", `{"PartitionKey":"a","RowKey":"b","N@odata.type":"Edm.Int64","N":"5"}`)
	f.Add("GET", "/devstoreaccount1/fuzz()?$filter=PartitionKey%20eq%20'p'&$top=1&NextPartitionKey=1!4!cA--", "", "")
	f.Add("MERGE", "/devstoreaccount1/fuzz(PartitionKey='p',RowKey='r')", "application/json", `{"PartitionKey":"p","RowKey":"r","X":1.5}`)
	f.Add("POST", "/devstoreaccount1/Tables", "application/json", `{"TableName":"abc"}`)
	f.Add("DELETE", "/devstoreaccount1/Tables('fuzz')", "", "")
	f.Add("GET", "/devstoreaccount1/fuzz(PartitionKey='p''',RowKey='%2F')", "", "")
	f.Fuzz(func(t *testing.T, method, path, ctype, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n") || method == "" || strings.ContainsAny(method, " \r\n:") {
			return
		}
		s := fuzzServer(t)
		req, err := http.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		if ctype != "" && !strings.ContainsAny(ctype, "\r\n") {
			req.Header.Set("Content-Type", ctype)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s %q: %d %s", method, path, body, w.Code, w.Body.String())
		}
	})
}

// FuzzBatch: any $batch body is served or refused with the service's 4xx,
// never a failure of the server.
func FuzzBatch(f *testing.F) {
	op := "--cs\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"POST http://127.0.0.1/devstoreaccount1/fuzz HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n" +
		`{"PartitionKey":"b","RowKey":"1"}` + "\r\n"
	f.Add("--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n" + op + "--cs--\r\n--b--\r\n")
	f.Add("--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n" + strings.ReplaceAll(op, "POST", "DELETE") + "--cs--\r\n--b--\r\n")
	f.Add("--b\r\n\r\n--b--")
	// As the Go SDK sends it, with each body's length: the one-walk reader's shape.
	withLength := strings.Replace(op, "Prefer: return-no-content\r\n", "Prefer: return-no-content\r\nContent-Length: 33\r\n", 1)
	f.Add("--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n" + withLength + withLength + "--cs--\r\n\r\n--b--\r\n")
	f.Fuzz(func(t *testing.T, body string) {
		s := fuzzServer(t)
		req := httptest.NewRequest("POST", "http://127.0.0.1/devstoreaccount1/$batch", strings.NewReader(body))
		req.Header.Set("Content-Type", "multipart/mixed; boundary=b")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusAccepted && (w.Code < 400 || w.Code >= 500) {
			t.Fatalf("%q: %d %s", body, w.Code, w.Body.String())
		}
	})
}

// FuzzEntityPath: keys in URLs parse or are refused with 400, and keys
// that parse quote back to the URL they came from.
func FuzzEntityPath(f *testing.F) {
	f.Add("t(PartitionKey='a',RowKey='b')")
	f.Add("t(PartitionKey='a''b',RowKey='')")
	f.Add("t(PartitionKey='''',RowKey='x''''y''')")
	f.Add("t(PartitionKey='a)")
	f.Add("t(PartitionKey='a'',RowKey='b')")
	f.Fuzz(func(t *testing.T, res string) {
		table, keys, hasKeys, err := parseEntityPath(res)
		if err != nil {
			if err.Status != http.StatusBadRequest {
				t.Fatalf("%q: %v", res, err)
			}
			return
		}
		if !hasKeys {
			return
		}
		if again := table + "(PartitionKey='" + odata.QuoteKey(keys[0]) + "',RowKey='" + odata.QuoteKey(keys[1]) + "')"; again != res {
			t.Fatalf("%q parsed as table %q keys %q, which quote back as %q", res, table, keys, again)
		}
	})
}
