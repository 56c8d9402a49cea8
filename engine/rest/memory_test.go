package rest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/engine/rest"
)

// TestServedTablesComeBack: tables made through the served engine cost
// little while empty, pre-split as tablebench serve makes them, and
// deleting them, with their entities and stored access policies, gives
// back what they held once their names' grace period is over.
func TestServedTablesComeBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engine.DefaultConfig() // a 40 s grace for deleted names
		cfg.Profile = engine.None()
		cfg.PreSplit = engine.WA2010().SteadySplit() // serve's default
		e, err := engine.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s := rest.New(e, rest.Config{Account: rest.DevAccount, Auth: rest.AuthNone})
		do := func(method, path, body string, want int) {
			t.Helper()
			r := httptest.NewRequest(method, "http://127.0.0.1:10002/devstoreaccount1"+path, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Prefer", "return-no-content")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code != want {
				t.Fatalf("%s %s: %d %s, want %d", method, path, w.Code, w.Body, want)
			}
		}
		const acl = `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>read</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
		create := func(n int) {
			for i := range n {
				do("POST", "/Tables", fmt.Sprintf(`{"TableName":"served%d"}`, i), http.StatusNoContent)
			}
		}
		use := func(n int) {
			for i := range n {
				do("POST", fmt.Sprintf("/served%d", i), fmt.Sprintf(`{"PartitionKey":"%x","RowKey":"r","V":"x"}`, i*0x9e3779b1%0xffff), http.StatusNoContent)
				do("GET", fmt.Sprintf("/served%d()?$filter=V%%20eq%%20'x'", i), "", http.StatusOK)
				if i%10 == 0 {
					do("PUT", fmt.Sprintf("/served%d?comp=acl", i), acl, http.StatusNoContent)
				}
			}
		}
		drop := func(n int) {
			for i := range n {
				do("DELETE", fmt.Sprintf("/Tables('served%d')", i), "", http.StatusNoContent)
			}
			time.Sleep(cfg.TableDeleteGrace + time.Second)
			do("POST", "/Tables", `{"TableName":"after"}`, http.StatusNoContent) // the engine forgets the names on its next change
			do("DELETE", "/Tables('after')", "", http.StatusNoContent)
			time.Sleep(cfg.TableDeleteGrace + time.Second)
		}
		// Once through first, for what the runtime and the server make once.
		create(10)
		use(10)
		drop(10)
		heap := func() int64 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return int64(m.HeapAlloc)
		}
		start := heap()
		const n = 3000
		create(n)
		made := heap()
		use(n)
		drop(n)
		end := heap()
		per := (made - start) / n
		t.Logf("%d empty tables pre-split into %d: %d B each; made, used and deleted, they left %d B", n, cfg.PreSplit, per, end-start)
		if per > 2<<10 {
			t.Errorf("an empty table pre-split into %d costs %d B, want at most 2 KiB", cfg.PreSplit, per)
		}
		if end-start > 64<<10 {
			t.Errorf("%d tables made, used and deleted left %d B on the heap (%d B a table)", n, end-start, (end-start)/n)
		}
	})
}
