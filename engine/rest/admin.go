package rest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/tables"
)

// AdminPath is where a served engine takes its runtime controls:
// AdminPath+"faults" (GET the rules in force and how often each kind fired;
// PUT a rules file, YAML or JSON) and AdminPath+"rates" (GET; PUT
// {"partition_rate": N, "account_rate": N}, either field optional). Every
// admin request must be signed with the account key by SharedKey, whatever
// the server's --auth: SignRequest signs one. SharedKeyLite is refused
// there: it signs neither the verb nor the content type, so a captured
// GET would replay as a PUT that changes the rules.
const AdminPath = "/_tablebench/"

// MetricsPath is where Prometheus scrapes a served engine: an unsigned GET
// with no query string.
const MetricsPath = "/metrics"

// SignRequest signs req with SharedKey for account and key, as the Table
// service expects and as the admin endpoint requires: the verb, the
// Content-MD5 and Content-Type headers as req carries them, the date and
// the resource. Set those headers before signing.
func SignRequest(req *http.Request, account string, key []byte) {
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	res := "/" + account + req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		res += "?comp=" + comp
	}
	toSign := req.Method + "\n" + req.Header.Get("Content-MD5") + "\n" + req.Header.Get("Content-Type") + "\n" + date + "\n" + res
	req.Header.Set("Authorization", "SharedKey "+account+":"+hmacBase64(key, toSign))
}

// ConnectionString is the connection string an SDK takes for a served
// engine: key is the account key as text (or a placeholder that names
// where it is).
func ConnectionString(scheme, account, key, endpoint string) string {
	return "DefaultEndpointsProtocol=" + scheme + ";AccountName=" + account + ";AccountKey=" + key + ";TableEndpoint=" + endpoint + ";"
}

// admin serves the runtime controls. It answers true when path was an
// admin path.
func (s *Server) admin(q *request, path string) bool {
	what, ok := strings.CutPrefix(path, AdminPath)
	if !ok {
		return false
	}
	q.op = "admin"
	scheme, cred, _ := strings.Cut(header(q.r, "Authorization"), " ")
	if scheme != "SharedKey" {
		s.fail(q, authFailed("The admin endpoint needs a request signed with the account key by SharedKey, which signs the verb (tablebench admin signs so); no SharedKeyLite, SAS or token is accepted."))
		return true
	}
	if err := s.checkSharedKey(q.r, q.vals, scheme, cred, path); err != nil {
		s.fail(q, err)
		return true
	}
	switch what {
	case "faults":
		s.adminFaults(q)
	case "rates":
		s.adminRates(q)
	default:
		s.fail(q, tables.NewError(http.StatusNotFound, tables.CodeResourceNotFound, "There is no admin resource "+what+": use "+AdminPath+"faults or "+AdminPath+"rates."))
	}
	return true
}

func (s *Server) adminFaults(q *request) {
	if s.cfg.Faults == nil {
		s.fail(q, tables.NewError(http.StatusNotFound, tables.CodeResourceNotFound, "This server has no fault rules: start it with --faults FILE (an empty faults: [] will do) to change them at run time."))
		return
	}
	switch q.r.Method {
	case http.MethodGet:
	case http.MethodPut:
		body, ok := s.readBody(q)
		if !ok {
			return
		}
		rules, err := faults.Parse(body)
		if err != nil {
			s.fail(q, tables.BadRequest(tables.CodeInvalidInput, err.Error()+"; the rules in force are kept."))
			return
		}
		s.cfg.Faults.Replace(rules)
	default:
		s.notAllowed(q)
		return
	}
	rules := s.cfg.Faults.Rules()
	if rules == nil {
		rules = []faults.Rule{}
	}
	s.adminJSON(q, map[string]any{"faults": rules, "fired": s.cfg.Faults.Fired()})
}

func (s *Server) adminRates(q *request) {
	switch q.r.Method {
	case http.MethodGet:
	case http.MethodPut:
		body, ok := s.readBody(q)
		if !ok {
			return
		}
		var in struct {
			Partition *float64 `json:"partition_rate"`
			Account   *float64 `json:"account_rate"`
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "The rates are not valid JSON: send {\"partition_rate\": 200, \"account_rate\": 20000}, either field optional ("+err.Error()+")."))
			return
		}
		s.ratesMu.Lock()
		r := s.e.Rates()
		if in.Partition != nil {
			r.Partition = *in.Partition
		}
		if in.Account != nil {
			r.Account = *in.Account
		}
		err := s.e.SetRates(r)
		s.ratesMu.Unlock()
		if err != nil {
			s.fail(q, tables.BadRequest(tables.CodeInvalidInput, err.Error()))
			return
		}
	default:
		s.notAllowed(q)
		return
	}
	s.adminJSON(q, s.e.Rates())
}

func (s *Server) adminJSON(q *request, v any) {
	b, _ := json.Marshal(v)
	q.w.Header().Set("Content-Type", "application/json")
	q.w.WriteHeader(http.StatusOK)
	q.w.Write(b)
}

// DecodeKey decodes a base64 account key.
func DecodeKey(text string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(key) == 0 {
		return nil, errors.New("the account key is not base64")
	}
	return key, nil
}
