package rest

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tablebench/tablebench/tables"
)

// The account's service properties, CORS rules and the tables' stored
// access policies: the XML resources of the Table service. The server keeps
// them in memory, as it keeps the tables.

// retention is a logging or metrics retention policy.
type retention struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

type logging struct {
	Version         string    `xml:"Version"`
	Delete          bool      `xml:"Delete"`
	Read            bool      `xml:"Read"`
	Write           bool      `xml:"Write"`
	RetentionPolicy retention `xml:"RetentionPolicy"`
}

type metrics struct {
	Version         string    `xml:"Version"`
	Enabled         bool      `xml:"Enabled"`
	IncludeAPIs     *bool     `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy retention `xml:"RetentionPolicy"`
}

// corsRule is one CORS rule. Lists are comma-separated, as on the wire.
type corsRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
}

type corsRules struct {
	Rules []corsRule `xml:"CorsRule"`
}

// serviceProperties is StorageServiceProperties. On a set, an element left
// out keeps its value, as the service does.
type serviceProperties struct {
	XMLName       xml.Name   `xml:"StorageServiceProperties"`
	Logging       *logging   `xml:"Logging"`
	HourMetrics   *metrics   `xml:"HourMetrics"`
	MinuteMetrics *metrics   `xml:"MinuteMetrics"`
	Cors          *corsRules `xml:"Cors"`
}

func defaultServiceProperties() serviceProperties {
	no := false
	return serviceProperties{
		Logging:       &logging{Version: "1.0"},
		HourMetrics:   &metrics{Version: "1.0", IncludeAPIs: &no},
		MinuteMetrics: &metrics{Version: "1.0", IncludeAPIs: &no},
		Cors:          &corsRules{},
	}
}

// accessPolicy and signedIdentifier are a table's stored access policy, to
// which a SAS can refer with si.
type accessPolicy struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}

type signedIdentifier struct {
	ID           string       `xml:"Id"`
	AccessPolicy accessPolicy `xml:"AccessPolicy"`
}

type signedIdentifiers struct {
	XMLName xml.Name           `xml:"SignedIdentifiers"`
	Items   []signedIdentifier `xml:"SignedIdentifier"`
}

// MaxStoredPolicies is how many stored access policies a table may have.
const MaxStoredPolicies = 5

var corsMethods = map[string]bool{"DELETE": true, "GET": true, "HEAD": true, "MERGE": true, "POST": true, "OPTIONS": true, "PUT": true, "PATCH": true}

func invalidXML(detail string) *tables.Error {
	return tables.BadRequest("InvalidXmlDocument", "XML specified is not syntactically valid. "+detail)
}

func (s *Server) writeXML(q *request, status int, v any) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	if err := xml.NewEncoder(&b).Encode(v); err != nil {
		s.failErr(q, err)
		return
	}
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.WriteHeader(status)
	q.w.Write(b.Bytes())
}

// serviceProperties serves GET and PUT ?restype=service&comp=properties.
func (s *Server) serviceProperties(q *request, g *grant) {
	switch q.r.Method {
	case http.MethodGet:
		if err := g.authorize(actReadService, "", "", ""); err != nil {
			s.fail(q, err)
			return
		}
		s.mu.Lock()
		props := s.props
		s.mu.Unlock()
		s.writeXML(q, http.StatusOK, props)
	case http.MethodPut:
		if err := g.authorize(actWriteService, "", "", ""); err != nil {
			s.fail(q, err)
			return
		}
		body, ok := s.readBody(q)
		if !ok {
			return
		}
		var in serviceProperties
		if err := xml.Unmarshal(body, &in); err != nil {
			s.fail(q, invalidXML(err.Error()))
			return
		}
		if in.Cors != nil {
			if err := validateCORS(in.Cors.Rules); err != nil {
				s.fail(q, err)
				return
			}
		}
		s.mu.Lock()
		if in.Logging != nil {
			s.props.Logging = in.Logging
		}
		if in.HourMetrics != nil {
			s.props.HourMetrics = in.HourMetrics
		}
		if in.MinuteMetrics != nil {
			s.props.MinuteMetrics = in.MinuteMetrics
		}
		if in.Cors != nil {
			s.props.Cors = in.Cors
		}
		s.mu.Unlock()
		q.w.WriteHeader(http.StatusAccepted)
	default:
		s.notAllowed(q)
	}
}

func validateCORS(rules []corsRule) *tables.Error {
	if len(rules) > 5 {
		return invalidXML("At most 5 CORS rules are allowed.")
	}
	for _, r := range rules {
		if strings.TrimSpace(r.AllowedOrigins) == "" || strings.TrimSpace(r.AllowedMethods) == "" {
			return invalidXML("A CORS rule needs AllowedOrigins and AllowedMethods.")
		}
		for _, m := range splitList(r.AllowedMethods) {
			if !corsMethods[strings.ToUpper(m)] {
				return invalidXML("The CORS method " + m + " is not one of DELETE, GET, HEAD, MERGE, POST, OPTIONS, PUT, PATCH.")
			}
		}
		if r.MaxAgeInSeconds < 0 {
			return invalidXML("MaxAgeInSeconds must not be negative.")
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// serviceStats serves GET ?restype=service&comp=stats. One server has no
// secondary, so replication is always live.
func (s *Server) serviceStats(q *request, g *grant) {
	if q.r.Method != http.MethodGet {
		s.notAllowed(q)
		return
	}
	if err := g.authorize(actReadService, "", "", ""); err != nil {
		s.fail(q, err)
		return
	}
	type geo struct {
		Status       string `xml:"Status"`
		LastSyncTime string `xml:"LastSyncTime"`
	}
	s.writeXML(q, http.StatusOK, struct {
		XMLName xml.Name `xml:"StorageServiceStats"`
		Geo     geo      `xml:"GeoReplication"`
	}{Geo: geo{Status: "live", LastSyncTime: time.Now().UTC().Format(http.TimeFormat)}})
}

// tableACL serves GET and PUT /table?comp=acl: the table's stored access
// policies.
func (s *Server) tableACL(q *request, g *grant, table string) {
	if err := g.authorize(actTableACL, table, "", ""); err != nil {
		s.fail(q, err)
		return
	}
	if !s.e.HasTable(table) {
		s.fail(q, tables.NewError(http.StatusNotFound, tables.CodeResourceNotFound, "The specified resource does not exist."))
		return
	}
	key := strings.ToLower(table)
	switch q.r.Method {
	case http.MethodGet, http.MethodHead:
		s.mu.Lock()
		ids := signedIdentifiers{Items: s.acls[key]}
		s.mu.Unlock()
		s.writeXML(q, http.StatusOK, ids)
	case http.MethodPut:
		body, ok := s.readBody(q)
		if !ok {
			return
		}
		var in signedIdentifiers
		if len(bytes.TrimSpace(body)) > 0 {
			if err := xml.Unmarshal(body, &in); err != nil {
				s.fail(q, invalidXML(err.Error()))
				return
			}
		}
		if len(in.Items) > MaxStoredPolicies {
			s.fail(q, invalidXML("A table has at most 5 stored access policies."))
			return
		}
		seen := map[string]bool{}
		for _, id := range in.Items {
			if id.ID == "" || len(id.ID) > 64 || seen[id.ID] {
				s.fail(q, invalidXML("Each signed identifier needs a unique Id of at most 64 characters."))
				return
			}
			seen[id.ID] = true
			for _, t := range []string{id.AccessPolicy.Start, id.AccessPolicy.Expiry} {
				if _, ok := sasTime(t); t != "" && !ok {
					s.fail(q, invalidXML("The access policy time "+strconv.Quote(t)+" is not an ISO 8601 UTC time."))
					return
				}
			}
			for _, c := range id.AccessPolicy.Permission {
				if !strings.ContainsRune("raud", c) {
					s.fail(q, invalidXML("The access policy permission "+string(c)+" is not one of r, a, u, d."))
					return
				}
			}
		}
		s.mu.Lock()
		s.acls[key] = in.Items
		s.mu.Unlock()
		q.w.WriteHeader(http.StatusNoContent)
	default:
		s.notAllowed(q)
	}
}

// policy returns a table's stored access policy.
func (s *Server) policy(table, id string) (signedIdentifier, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.acls[strings.ToLower(table)] {
		if p.ID == id {
			return p, true
		}
	}
	return signedIdentifier{}, false
}

// corsMatch returns the first stored CORS rule that admits origin, method
// and the request headers, as the service picks the first match.
func (s *Server) corsMatch(origin, method string, headers []string) (corsRule, bool) {
	s.mu.Lock()
	var rules []corsRule
	if s.props.Cors != nil {
		rules = s.props.Cors.Rules
	}
	s.mu.Unlock()
	for _, r := range rules {
		if !listMatches(r.AllowedOrigins, origin, true) {
			continue
		}
		methodOK := false
		for _, m := range splitList(r.AllowedMethods) {
			methodOK = methodOK || strings.EqualFold(m, method)
		}
		if !methodOK {
			continue
		}
		headersOK := true
		for _, h := range headers {
			headersOK = headersOK && listMatches(r.AllowedHeaders, h, false)
		}
		if headersOK {
			return r, true
		}
	}
	return corsRule{}, false
}

// listMatches reports whether v is in a comma-separated CORS list: "*",
// an exact entry or, for headers, a prefix entry ending in "*".
func listMatches(list, v string, origin bool) bool {
	for _, e := range splitList(list) {
		switch {
		case e == "*":
			return true
		case strings.EqualFold(e, v):
			return true
		case !origin && strings.HasSuffix(e, "*") && len(v) >= len(e)-1 && strings.EqualFold(v[:len(e)-1], e[:len(e)-1]):
			return true
		}
	}
	return false
}

// preflight answers a CORS preflight OPTIONS request. It needs no
// credentials.
func (s *Server) preflight(q *request) {
	origin, method := header(q.r, "Origin"), header(q.r, "Access-Control-Request-Method")
	if origin == "" || method == "" {
		s.fail(q, tables.BadRequest(tables.CodeInvalidInput, "A required CORS header is not present. A preflight request names its Origin and the Access-Control-Request-Method it asks about."))
		return
	}
	headers := splitList(header(q.r, "Access-Control-Request-Headers"))
	rule, ok := s.corsMatch(origin, method, headers)
	if !ok {
		s.fail(q, forbidden("CorsPreflightFailure", "CORS not enabled or no matching rule found for this request."))
		return
	}
	h := q.w.Header()
	allowOrigin(h, rule, origin, true)
	h.Set("Access-Control-Allow-Methods", strings.ToUpper(method))
	if len(headers) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(headers, ","))
	}
	h.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAgeInSeconds))
	q.w.WriteHeader(http.StatusOK)
}

// allowOrigin adds the headers that admit origin under rule. An answer
// for one origin varies with the Origin header; one for all does not.
func allowOrigin(h http.Header, rule corsRule, origin string, vary bool) {
	if strings.TrimSpace(rule.AllowedOrigins) == "*" {
		h.Set("Access-Control-Allow-Origin", "*")
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	if vary {
		h.Add("Vary", "Origin")
	}
}

// corsActual adds the CORS response headers to an actual request from a
// browser whose origin a rule admits. As the service documents, a GET or
// HEAD answer says Vary: Origin when CORS is enabled and either a rule
// names the origin itself or no rule admits it, since a cache must not
// give that answer to another origin; a rule for all origins sets none.
func (s *Server) corsActual(q *request) {
	origin := header(q.r, "Origin")
	if origin == "" {
		return
	}
	vary := q.r.Method == http.MethodGet || q.r.Method == http.MethodHead
	rule, ok := s.corsMatch(origin, q.r.Method, nil)
	h := q.w.Header()
	if !ok {
		if vary && s.corsEnabled() {
			h.Add("Vary", "Origin")
		}
		return
	}
	allowOrigin(h, rule, origin, vary)
	if rule.ExposedHeaders != "" {
		h.Set("Access-Control-Expose-Headers", rule.ExposedHeaders)
	}
}

// corsEnabled reports whether the service has CORS rules.
func (s *Server) corsEnabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.props.Cors != nil && len(s.props.Cors.Rules) > 0
}
