package rest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"hash"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/tablebench/tablebench/tables"
)

// MaxClockSkew is how far a SharedKey request's date may be from the
// server's clock, as the service allows: a captured request stops working
// after it.
const MaxClockSkew = 15 * time.Minute

func authFailed(detail string) *tables.Error {
	return tables.NewError(http.StatusForbidden, "AuthenticationFailed",
		"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature. "+detail)
}

func forbidden(code, msg string) *tables.Error {
	return tables.NewError(http.StatusForbidden, code, msg)
}

func errPermission(need string) *tables.Error {
	return forbidden("AuthorizationPermissionMismatch", "This request is not authorized to perform this operation using this permission. It needs the SAS permission '"+need+"'.")
}

// action is what a request, or one operation of a batch, does; a SAS is
// checked against each.
type action uint8

const (
	actReadService action = iota
	actWriteService
	actCreateTable
	actDeleteTable
	actListTables
	actTableACL
	actQuery // a query: its results are limited to the SAS's key range
	actRead
	actInsert
	actUpdate
	actUpsert
	actDelete
)

// grant is what a SAS or a bearer token permits. A request signed with the
// account key or on a server without authentication has no grant: it may
// do everything.
type grant struct {
	// bearer marks a request authorized by a bearer token: it may do
	// everything but read or set a table's stored access policies.
	bearer  bool
	account bool   // an account SAS; else a service (table) SAS
	perms   string // sp, or the stored policy's permissions
	types   string // an account SAS's srt
	table   string // a service SAS's table, lower case
	// keys is a service SAS's key range (spk, srk, epk, erk), nil for none.
	// Queries take it to the engine, which scans only inside it, so that
	// neither a page nor its continuation names a key outside it.
	keys *tables.KeyRange
}

// authorize checks one action on table (and, for entity operations, the
// entity's keys) against g.
func (g *grant) authorize(act action, table, pk, rk string) *tables.Error {
	if g == nil {
		return nil
	}
	if g.bearer {
		// Only the account owner may read or set a table's ACL; the service
		// answers a bearer token 404, as if the ACL did not exist.
		if act == actTableACL {
			return tables.NewError(http.StatusNotFound, tables.CodeResourceNotFound, "The specified resource does not exist.")
		}
		return nil
	}
	need := func(p string) *tables.Error {
		for _, c := range p {
			if !strings.ContainsRune(g.perms, c) {
				return errPermission(string(c))
			}
		}
		return nil
	}
	entityOp := act >= actQuery
	if g.account {
		// The resource type each operation needs. Where the service's
		// documents name two (listing tables is a service-level API and a
		// query of the Tables container; a query of entities reads the table
		// and its objects), either is accepted.
		rt := "c"
		switch {
		case act == actReadService || act == actWriteService:
			rt = "s"
		case act == actListTables:
			rt = "sc"
		case act == actQuery:
			rt = "oc"
		case entityOp:
			rt = "o"
		}
		if !strings.ContainsAny(g.types, rt) {
			return forbidden("AuthorizationResourceTypeMismatch", "This request is not authorized to perform this operation using this resource type. It needs the account SAS resource type '"+rt[:1]+"'.")
		}
		switch act {
		case actReadService:
			return need("r")
		case actWriteService:
			return need("w")
		case actCreateTable:
			if strings.ContainsAny(g.perms, "cw") {
				return nil
			}
			return errPermission("c")
		case actDeleteTable:
			return need("d")
		case actListTables:
			return need("l")
		case actTableACL:
			return forbidden("AuthorizationFailure", "This request is not authorized to perform this operation: only the account key may read or set a table's access policies.")
		}
	} else {
		if !entityOp {
			return forbidden("AuthorizationFailure", "This request is not authorized to perform this operation: a table SAS covers the entities of one table, not tables or the service.")
		}
		if !strings.EqualFold(table, g.table) {
			return forbidden("AuthorizationFailure", "This request is not authorized to perform this operation: the SAS is for table "+g.table+", not "+table+".")
		}
		if act != actQuery && !g.inRange(pk, rk) {
			return forbidden("AuthorizationFailure", "This request is not authorized to perform this operation: the entity's keys are outside the SAS's key range.")
		}
	}
	switch act {
	case actQuery, actRead:
		return need("r")
	case actInsert:
		return need("a")
	case actUpdate:
		return need("u")
	case actUpsert:
		// Insert-or-replace and insert-or-merge may insert or update, and
		// the service's SAS rules require both permissions for them.
		// Azurite takes update alone; tablebench follows the service.
		return need("au")
	case actDelete:
		return need("d")
	}
	return forbidden("AuthorizationFailure", "This request is not authorized to perform this operation.")
}

// inRange reports whether an entity's keys lie in the SAS's key range.
func (g *grant) inRange(pk, rk string) bool { return g == nil || g.keys.Has(pk, rk) }

// ranged reports whether the SAS limits the keys it covers.
func (g *grant) ranged() bool { return g != nil && g.keys != nil }

// within is the key range a query under g is limited to, nil for none.
func (g *grant) within() *tables.KeyRange {
	if g == nil {
		return nil
	}
	return g.keys
}

// bearerGrant is the grant of every request with a valid bearer token.
var bearerGrant = &grant{bearer: true}

// authenticate checks a request's SharedKeyLite or SharedKey signature, its
// SAS, or (over TLS, when enabled) its bearer token, and returns what the
// request may do.
func (s *Server) authenticate(r *http.Request, vals url.Values, base, escapedPath string) (*grant, *tables.Error) {
	if s.cfg.Auth == AuthNone {
		return nil, nil
	}
	if _, hasSig := vals["sig"]; hasSig {
		return s.checkSAS(r, vals)
	}
	auth := header(r, "Authorization")
	scheme, cred, _ := strings.Cut(auth, " ")
	switch scheme {
	case "Bearer":
		if err := s.checkBearer(r, cred, base); err != nil {
			return nil, err
		}
		return bearerGrant, nil
	case "SharedKeyLite", "SharedKey":
		return nil, s.checkSharedKey(r, vals, scheme, cred, escapedPath)
	}
	return nil, authFailed("The request carries no credentials.")
}

// checkSharedKey checks a SharedKeyLite or SharedKey signature: the account,
// the date (within MaxClockSkew) and the HMAC of the account key.
func (s *Server) checkSharedKey(r *http.Request, vals url.Values, scheme, cred, escapedPath string) *tables.Error {
	acct, sig, ok := strings.Cut(cred, ":")
	if !ok || acct != s.cfg.Account {
		return authFailed("The account in the signature is not this server's.")
	}
	date := header(r, "X-Ms-Date")
	if date == "" {
		date = header(r, "Date")
	}
	if date == "" {
		return authFailed("The request has no x-ms-date or Date header; a signed request must carry its date.")
	}
	when, err := s.requestTime(date)
	if err != nil {
		return authFailed("The request's date " + date + " is not an RFC 1123 date.")
	}
	if d := time.Since(when); d > MaxClockSkew || d < -MaxClockSkew {
		return authFailed("Request date header too old or too far in the future: it must be within 15 minutes of the server's time.")
	}
	// A signature is the base64 of a SHA-256 sum, 44 characters; Decode
	// takes no more than its buffer holds, the 33 bytes DecodedLen gives.
	var want [sha256.Size + 1]byte
	if len(sig) != strictBase64.EncodedLen(sha256.Size) {
		return authFailed("The signature does not match.")
	}
	if n, err := strictBase64.Decode(want[:], readOnly(sig)); err != nil || n != sha256.Size {
		return authFailed("The signature does not match.")
	}
	comp := vals.Get("comp")
	m := s.macs.Get().(*mac)
	defer s.macs.Put(m)
	signed := func(path string) bool {
		b := m.buf[:0]
		if scheme != "SharedKeyLite" { // which signs only the date and the resource
			for _, line := range [...]string{r.Method, header(r, "Content-Md5"), header(r, "Content-Type")} {
				b = append(append(b, line...), '\n')
			}
		}
		b = append(append(b, date...), "\n/"...)
		b = append(append(b, acct...), path...)
		if comp != "" {
			b = append(append(b, "?comp="...), comp...)
		}
		m.buf = b
		if sum, ok := s.lastSigned.Get(unsafe.String(unsafe.SliceData(b), len(b))); ok { // a view of b, not kept
			return hmac.Equal(sum[:], want[:sha256.Size])
		}
		sum := m.sum(b)
		if !strings.HasSuffix(path, "')") { // an entity's path rarely repeats
			s.lastSigned.Put(string(b), [sha256.Size]byte(sum))
		}
		return hmac.Equal(sum, want[:sha256.Size])
	}
	if signed(escapedPath) {
		return nil
	}
	for _, path := range secondaryPaths(escapedPath, acct) {
		if signed(path) {
			return nil
		}
	}
	return authFailed("The signature does not match.")
}

// secondaryPaths are the other paths a client may have signed a request
// to escapedPath with: none but for the read-only secondary endpoint
// (/account-secondary/...), which some SDKs sign with the secondary's path,
// others with the primary's, and one sends with the primary's path after
// the secondary's segment.
func secondaryPaths(escapedPath, account string) []string {
	rest, ok := strings.CutPrefix(escapedPath, "/"+account+"-secondary")
	if !ok || (rest != "" && rest[0] != '/') {
		return nil
	}
	return []string{"/" + account + rest, rest}
}

// strictBase64 reads a signature as the service writes it: padding bits
// that are not zero make another string, which does not match.
var strictBase64 = base64.StdEncoding.Strict()

// mac is an HMAC-SHA256 state keyed with the account key, with room for
// what it signs and its sum, so that checking a signature allocates
// nothing.
type mac struct {
	h   hash.Hash
	buf []byte
	out [sha256.Size]byte
}

// sum returns the HMAC of b, valid until m's next use.
func (m *mac) sum(b []byte) []byte {
	m.h.Reset()
	m.h.Write(b)
	return m.h.Sum(m.out[:0])
}

// sign returns the signature of toSign with the server's key.
func (s *Server) sign(toSign string) string {
	m := s.macs.Get().(*mac)
	defer s.macs.Put(m)
	return base64.StdEncoding.EncodeToString(m.sum([]byte(toSign)))
}

// hmacBase64 is the service's signature of a string: HMAC-SHA256 with the
// account key, in base64.
func hmacBase64(key []byte, toSign string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(toSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// sasParams are the query parameters a SAS consists of; each may appear
// once.
var sasParams = []string{"sv", "ss", "srt", "st", "se", "sp", "sip", "spr", "si", "tn", "spk", "srk", "epk", "erk", "ses", "sig"}

// checkSAS verifies a service (table) or account SAS: its signature, its
// time window, its IP range and protocol. What it permits is checked per
// action by grant.authorize.
func (s *Server) checkSAS(r *http.Request, v url.Values) (*grant, *tables.Error) {
	for _, p := range sasParams {
		if len(v[p]) > 1 {
			return nil, authFailed("The SAS parameter " + p + " appears more than once.")
		}
	}
	if err := checkSignedVersion(v.Get("sv"), v.Get("tn") == ""); err != nil {
		return nil, err
	}
	g := &grant{perms: v.Get("sp")}
	st, se := v.Get("st"), v.Get("se")
	var toSign string
	if tn := v.Get("tn"); tn != "" {
		var err *tables.Error
		if toSign, err = s.tableSAS(v, tn, g, &st, &se); err != nil {
			return nil, err
		}
	} else {
		g.account, g.types = true, v.Get("srt")
		fields := []string{s.cfg.Account, v.Get("sp"), v.Get("ss"), v.Get("srt"), st, se, v.Get("sip"), v.Get("spr"), v.Get("sv")}
		if v.Get("sv") >= "2020-12-06" {
			fields = append(fields, v.Get("ses"))
		}
		toSign = strings.Join(append(fields, ""), "\n")
	}
	if !hmac.Equal([]byte(v.Get("sig")), []byte(s.sign(toSign))) {
		return nil, authFailed("The SAS signature does not match.")
	}
	if g.account && !strings.Contains(v.Get("ss"), "t") {
		// Checked once the signature holds: a forged SAS learns nothing
		// past AuthenticationFailed.
		return nil, forbidden("AuthorizationServiceMismatch", "This request is not authorized to perform this operation using this service: the account SAS's signed services (ss) do not include the table service (t).")
	}
	now := time.Now()
	if end, ok := sasTime(se); !ok || now.After(end) {
		return nil, authFailed("Signature not valid in the specified time frame: it has expired, or has no valid expiry (se).")
	}
	if st != "" {
		if start, ok := sasTime(st); !ok || now.Before(start) {
			return nil, authFailed("Signature not valid in the specified time frame: it has not started.")
		}
	}
	if sip := v.Get("sip"); sip != "" && !ipAllowed(sip, r.RemoteAddr) {
		return nil, forbidden("AuthorizationSourceIPMismatch", "This request is not authorized to perform this operation using this source IP "+hostOf(r.RemoteAddr)+".")
	}
	if spr := v.Get("spr"); spr != "" && r.TLS == nil && !strings.Contains(spr, "http,") && !strings.HasSuffix(spr, ",http") && spr != "http" {
		return nil, forbidden("AuthorizationProtocolMismatch", "This request is not authorized to perform this operation using this protocol: the SAS allows HTTPS only.")
	}
	return g, nil
}

// tableSAS is the string a service SAS for table tn signs, and sets in g
// what it grants: the table, its key range, and the permissions, start and
// expiry (st, se), from the stored access policy it names where the SAS
// leaves them out.
func (s *Server) tableSAS(v url.Values, tn string, g *grant, st, se *string) (string, *tables.Error) {
	toSign := strings.Join([]string{v.Get("sp"), *st, *se, "/table/" + s.cfg.Account + "/" + strings.ToLower(tn),
		v.Get("si"), v.Get("sip"), v.Get("spr"), v.Get("sv"), v.Get("spk"), v.Get("srk"), v.Get("epk"), v.Get("erk")}, "\n")
	g.table = strings.ToLower(tn)
	var kr tables.KeyRange
	for _, b := range []struct {
		name string
		to   **string
	}{{"spk", &kr.StartPK}, {"srk", &kr.StartRK}, {"epk", &kr.EndPK}, {"erk", &kr.EndRK}} {
		if vals, ok := v[b.name]; ok {
			val := vals[0]
			*b.to = &val
		}
	}
	// The service's rules: a row key bound only with its partition key
	// bound (startpk must accompany startrk, endpk endrk). Alone, a
	// row key bound would bound nothing here, and grant the whole table.
	if (kr.StartRK != nil && kr.StartPK == nil) || (kr.EndRK != nil && kr.EndPK == nil) {
		return "", authFailed("The SAS gives a row key bound (srk or erk) without its partition key bound (spk or epk).")
	}
	if kr != (tables.KeyRange{}) {
		g.keys = &kr
	}
	if si := v.Get("si"); si != "" {
		pol, ok := s.policy(g.table, si)
		if !ok {
			return "", authFailed("The SAS refers to the stored access policy " + si + ", which table " + tn + " does not have.")
		}
		for _, f := range []struct {
			name      string
			sas, from string
			to        *string
		}{{"sp", g.perms, pol.AccessPolicy.Permission, &g.perms}, {"st", *st, pol.AccessPolicy.Start, st}, {"se", *se, pol.AccessPolicy.Expiry, se}} {
			if f.sas != "" && f.from != "" {
				return "", tables.BadRequest(tables.CodeInvalidInput, "The SAS and its stored access policy "+si+" both set "+f.name+"; set it in one of them.")
			}
			if f.from != "" {
				*f.to = f.from
			}
		}
	}
	return toSign, nil
}

// The first signed versions of each kind of SAS: a table SAS takes sv
// from 2012-02-12, when the service began to require it; an account SAS
// exists from 2015-04-05.
const (
	firstTableSASVersion   = "2012-02-12"
	firstAccountSASVersion = "2015-04-05"
)

// checkSignedVersion checks a SAS's signed version (sv), which the service
// requires and by which it reads the rest of the SAS and serves the
// request. It accepts the versions x-ms-version takes (validVersion). A
// version it does not know is refused as the service refuses it: 403
// AuthenticationFailed with the reason in the detail, not the 400
// InvalidHeaderValue of a bad x-ms-version, because sv is part of the
// signed credential, so a SAS the service cannot read fails to
// authenticate (the service's versioning rules: only sv, never
// x-ms-version, sets the version of a SAS request).
func checkSignedVersion(sv string, account bool) *tables.Error {
	first := firstTableSASVersion
	if account {
		first = firstAccountSASVersion
	}
	switch {
	case sv == "":
		return authFailed("The SAS has no signed version (sv); every SAS since version " + firstTableSASVersion + " names one.")
	case !validVersion(sv):
		return authFailed("The SAS's signed version (sv) " + strconv.Quote(sv) + " is not a service version (use a version such as 2019-02-02).")
	case sv < first:
		return authFailed("The SAS's signed version (sv) " + sv + " is older than the first version of this kind of SAS, " + first + ".")
	}
	return nil
}

func hostOf(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// ipAllowed reports whether the client's address lies in sip: one address
// or an inclusive range a-b.
func ipAllowed(sip, remote string) bool {
	ip, err := netip.ParseAddr(hostOf(remote))
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	lo, hi, isRange := strings.Cut(sip, "-")
	from, err := netip.ParseAddr(lo)
	if err != nil {
		return false
	}
	to := from
	if isRange {
		if to, err = netip.ParseAddr(hi); err != nil {
			return false
		}
	}
	return ip.Compare(from) >= 0 && ip.Compare(to) <= 0
}

func sasTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// storageAppID is the application ID of Azure Storage in Microsoft Entra
// ID, which a token may carry as its audience in place of a URI.
const storageAppID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

// tokenAudience reports whether aud is an audience the service takes for
// the Table service of this account: https://storage.azure.com, the
// storage application's ID, or the account's table endpoint, with or
// without a trailing slash. The account's endpoint is the public cloud's
// (https://<account>.table.core.windows.net) or the one this server is
// reached at (base); other clouds' endpoints are not this account's. base
// comes from the request's Host: as a token's signature is not checked,
// the audience guards against a token meant for another service, not
// against a forger.
func (s *Server) tokenAudience(aud, base string) bool {
	if aud == storageAppID {
		return true
	}
	aud = strings.TrimSuffix(aud, "/")
	return aud == "https://storage.azure.com" ||
		strings.EqualFold(aud, "https://"+s.cfg.Account+".table.core.windows.net") ||
		(base != "" && strings.EqualFold(aud, base))
}

// tokenIssuer reports whether iss is an issuer the service takes: Microsoft
// Entra ID's v1.0 (https://sts.windows.net/<tenant>/) or v2.0
// (https://login.microsoftonline.com/<tenant>/v2.0) issuer of the public
// cloud, naming a tenant ID, which is a GUID and, when the token has a tid
// claim, that tenant.
func tokenIssuer(iss, tid string) bool {
	var tenant string
	if t, ok := strings.CutPrefix(iss, "https://sts.windows.net/"); ok {
		tenant, ok = strings.CutSuffix(t, "/")
		if !ok {
			return false
		}
	} else if t, ok := strings.CutPrefix(iss, "https://login.microsoftonline.com/"); ok {
		if tenant, ok = strings.CutSuffix(t, "/v2.0"); !ok {
			return false
		}
	} else {
		return false
	}
	if _, err := uuid.Parse(tenant); err != nil || len(tenant) != 36 {
		return false
	}
	return tid == "" || strings.EqualFold(tid, tenant)
}

func invalidToken(detail string) *tables.Error {
	return tables.NewError(http.StatusUnauthorized, "InvalidAuthenticationInfo",
		"Server failed to authenticate the request. "+detail)
}

// checkBearer checks a bearer token's form, lifetime, issuer and audience,
// base being the service root the request was sent to. It does
// not verify the token's signature: the server has no identity provider to
// ask, so bearer tokens are accepted only when the operator enables them.
func (s *Server) checkBearer(r *http.Request, tok, base string) *tables.Error {
	if !s.cfg.Bearer {
		return authFailed("This server does not accept bearer tokens: serve with --bearer (and TLS) to allow them.")
	}
	if !s.cfg.TLS || r.TLS == nil {
		return authFailed("Bearer tokens are accepted only over TLS (serve with --tls-cert and --tls-key).")
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return invalidToken("The bearer token is not a JSON Web Token (header.payload.signature).")
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Exp *float64        `json:"exp"`
		Nbf *float64        `json:"nbf"`
		Aud json.RawMessage `json:"aud"`
		Iss string          `json:"iss"`
		Tid string          `json:"tid"`
	}
	for i, into := range []any{&hdr, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[i], "="))
		if err != nil || json.Unmarshal(raw, into) != nil {
			return invalidToken("The bearer token's header or claims are not base64url JSON.")
		}
	}
	if hdr.Alg == "" || strings.EqualFold(hdr.Alg, "none") || parts[2] == "" {
		return invalidToken("The bearer token is unsigned.")
	}
	now := float64(time.Now().Unix())
	skew := MaxClockSkew.Seconds() / 3
	if claims.Exp == nil || now > *claims.Exp+skew {
		return invalidToken("Lifetime validation failed. The token is expired.")
	}
	if claims.Nbf != nil && now < *claims.Nbf-skew {
		return invalidToken("Lifetime validation failed. The token is not yet valid.")
	}
	if !tokenIssuer(claims.Iss, claims.Tid) {
		return invalidToken("Issuer validation failed: the token's issuer is not Microsoft Entra ID's (https://sts.windows.net/<tenant>/ or https://login.microsoftonline.com/<tenant>/v2.0).")
	}
	var auds []string
	var one string
	if json.Unmarshal(claims.Aud, &one) == nil {
		auds = []string{one}
	} else {
		json.Unmarshal(claims.Aud, &auds)
	}
	for _, a := range auds {
		if s.tokenAudience(a, base) {
			return nil
		}
	}
	return invalidToken("Audience validation failed: the token's audience is not https://storage.azure.com, the storage application's ID or this account's table endpoint.")
}
