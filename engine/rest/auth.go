package rest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tablebench/tablebench/engine"
)

func authFailed(detail string) *engine.Error {
	return &engine.Error{Status: http.StatusForbidden, Code: "AuthenticationFailed", Index: -1,
		Message: "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature. " + detail}
}

// authenticate checks a request's SharedKeyLite or SharedKey signature, its
// SAS, or (over TLS) its bearer token.
func (s *Server) authenticate(r *http.Request, account, escapedPath string) *engine.Error {
	if s.cfg.Auth == AuthNone {
		return nil
	}
	if r.URL.Query().Get("sig") != "" {
		return s.checkSAS(r, account, escapedPath)
	}
	auth := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(auth, " ")
	switch scheme {
	case "Bearer":
		if s.cfg.TLS && r.TLS != nil && cred != "" {
			return nil
		}
		return authFailed("Bearer tokens are accepted only over TLS (serve with --tls-cert and --tls-key).")
	case "SharedKeyLite", "SharedKey":
		acct, sig, ok := strings.Cut(cred, ":")
		if !ok || acct != s.cfg.Account {
			return authFailed("The account in the signature is not this server's.")
		}
		date := r.Header.Get("x-ms-date")
		resource := "/" + acct + escapedPath
		if comp := r.URL.Query().Get("comp"); comp != "" {
			resource += "?comp=" + comp
		}
		var toSign string
		if scheme == "SharedKeyLite" {
			if date == "" {
				date = r.Header.Get("Date")
			}
			toSign = date + "\n" + resource
		} else {
			if date == "" {
				date = r.Header.Get("Date")
			}
			toSign = r.Method + "\n" + r.Header.Get("Content-MD5") + "\n" + r.Header.Get("Content-Type") + "\n" + date + "\n" + resource
		}
		if !hmac.Equal([]byte(sig), []byte(s.sign(toSign))) {
			return authFailed("The signature does not match.")
		}
		return nil
	}
	return authFailed("The request carries no credentials.")
}

func (s *Server) sign(toSign string) string {
	m := hmac.New(sha256.New, s.cfg.Key)
	m.Write([]byte(toSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// checkSAS verifies a service (table) or account SAS: its signature, its
// time window and that its permissions cover the request.
func (s *Server) checkSAS(r *http.Request, account, escapedPath string) *engine.Error {
	v := r.URL.Query()
	var toSign string
	if tn := v.Get("tn"); tn != "" {
		toSign = strings.Join([]string{v.Get("sp"), v.Get("st"), v.Get("se"), "/table/" + s.cfg.Account + "/" + strings.ToLower(tn),
			v.Get("si"), v.Get("sip"), v.Get("spr"), v.Get("sv"), v.Get("spk"), v.Get("srk"), v.Get("epk"), v.Get("erk")}, "\n")
		path, _ := url.PathUnescape(escapedPath)
		_, res := s.route(r, path)
		table, _, _ := strings.Cut(res, "(")
		if !strings.EqualFold(table, tn) && res != "$batch" {
			return authFailed("The SAS is for table " + tn + ".")
		}
	} else {
		if !strings.Contains(v.Get("ss"), "t") {
			return authFailed("The account SAS does not cover the table service.")
		}
		toSign = strings.Join([]string{s.cfg.Account, v.Get("sp"), v.Get("ss"), v.Get("srt"), v.Get("st"), v.Get("se"), v.Get("sip"), v.Get("spr"), v.Get("sv"), ""}, "\n")
	}
	if !hmac.Equal([]byte(v.Get("sig")), []byte(s.sign(toSign))) {
		return authFailed("The SAS signature does not match.")
	}
	now := time.Now()
	if se, ok := sasTime(v.Get("se")); !ok || now.After(se) {
		return authFailed("Signature not valid in the specified time frame: it has expired.")
	}
	if st, ok := sasTime(v.Get("st")); ok && now.Before(st) {
		return authFailed("Signature not valid in the specified time frame: it has not started.")
	}
	need := "r"
	switch r.Method {
	case http.MethodPost:
		need = "a"
	case http.MethodPut, http.MethodPatch, "MERGE":
		need = "u"
	case http.MethodDelete:
		need = "d"
	}
	sp := v.Get("sp")
	if strings.Contains(escapedPath, "$batch") {
		if !strings.ContainsAny(sp, "aud") {
			return authFailed("The SAS does not permit writes.")
		}
	} else if !strings.Contains(sp, need) && !(need == "a" && strings.Contains(sp, "c")) {
		return authFailed("The SAS does not permit this operation (it needs '" + need + "').")
	}
	return nil
}

func sasTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
