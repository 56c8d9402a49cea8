package engine

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablebench/tablebench/tables"
)

// The OData $filter of the service's subset: its lexer, its recursive-descent
// parser, its evaluation against stored entities, and the key range a filter
// confines a scan to.

// Filter is a parsed $filter expression.
type Filter struct {
	root node
}

// ParseFilter parses an OData $filter of the service's subset: eq, ne, gt,
// ge, lt and le comparisons of a property with a literal, combined with and,
// or, not and parentheses, at most 15 comparisons. An empty filter matches
// everything.
func ParseFilter(s string) (*Filter, error) {
	if strings.TrimSpace(s) == "" {
		return &Filter{}, nil
	}
	p := &parser{lex: lexer{s: s}}
	p.next()
	n, err := p.expr()
	if err == nil && p.tok.kind != tEOF {
		err = p.errorf("unexpected %q", p.tok.text)
	}
	if err == nil && p.compares > tables.MaxFilterCompares {
		err = fmt.Errorf("%d comparisons, at most %d are allowed", p.compares, tables.MaxFilterCompares)
	}
	if err != nil {
		return nil, tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("The $filter %q is not valid: %v.", s, err))
	}
	return &Filter{root: n}, nil
}

// Match reports whether the entity matches the filter.
func (f *Filter) Match(e *tables.Entity) bool {
	return f.match(e.PartitionKey, &record{rk: e.RowKey, ts: e.Timestamp.UnixNano(), props: e.Properties})
}

// match reports whether the entity of record r, whose PartitionKey is pk,
// matches the filter.
func (f *Filter) match(pk string, r *record) bool { return f.root == nil || f.root.eval(pk, r) }

type node interface {
	eval(pk string, r *record) bool
}

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type notNode struct{ x node }
type constNode bool

func (n constNode) eval(string, *record) bool { return bool(n) }

type cmpNode struct {
	prop string
	op   string
	lit  tables.Property
}

func (n andNode) eval(pk string, r *record) bool { return n.l.eval(pk, r) && n.r.eval(pk, r) }
func (n orNode) eval(pk string, r *record) bool  { return n.l.eval(pk, r) || n.r.eval(pk, r) }
func (n notNode) eval(pk string, r *record) bool { return !n.x.eval(pk, r) }

func (n cmpNode) eval(pk string, r *record) bool {
	var v any
	switch n.prop {
	case "PartitionKey":
		v = pk
	case "RowKey":
		v = r.rk
	case "Timestamp":
		v = time.Unix(0, r.ts).UTC()
	default:
		found := false
		for _, p := range r.props {
			if p.Name == n.prop {
				if p.Type != n.lit.Type && !(numeric(p.Type) && numeric(n.lit.Type)) {
					return false
				}
				v, found = p.Value, true
				break
			}
		}
		if !found {
			return false
		}
	}
	c, ok := compareValues(v, n.lit.Value)
	if !ok {
		return false
	}
	switch n.op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	case "lt":
		return c < 0
	default: // le
		return c <= 0
	}
}

func numeric(t tables.EdmType) bool {
	return t == tables.EdmInt32 || t == tables.EdmInt64 || t == tables.EdmDouble
}

// asFloat returns a numeric value as a float64, and whether it is one.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// compareValues compares two values of the same Edm type. Numbers of
// different types compare by value, as OData promotes them: a Double
// property compared with 5 matches 5.0, an Int64 with an Int32 literal
// matches the same number.
func compareValues(a, b any) (int, bool) {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int32); ok {
			return cmp.Compare(x, int64(y)), true
		}
	}
	if x, ok := a.(int32); ok {
		if y, ok := b.(int64); ok {
			return cmp.Compare(int64(x), y), true
		}
	}
	if _, aF := a.(float64); aF {
		y, ok := asFloat(b)
		x := a.(float64)
		if !ok || math.IsNaN(x) || math.IsNaN(y) {
			return 0, false
		}
		return cmp.Compare(x, y), true
	}
	if y, bF := b.(float64); bF {
		x, ok := asFloat(a)
		if !ok || math.IsNaN(y) {
			return 0, false
		}
		return cmp.Compare(x, y), true
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return compareKeys(x, y), ok
	case int32:
		y, ok := b.(int32)
		return cmp.Compare(x, y), ok
	case int64:
		y, ok := b.(int64)
		return cmp.Compare(x, y), ok
	case float64:
		y, ok := b.(float64)
		if !ok || math.IsNaN(x) || math.IsNaN(y) {
			return 0, false
		}
		return cmp.Compare(x, y), true
	case bool:
		y, ok := b.(bool)
		return cmp.Compare(b2i(x), b2i(y)), ok
	case time.Time:
		y, ok := b.(time.Time)
		return x.Compare(y), ok
	case uuid.UUID:
		y, ok := b.(uuid.UUID)
		return bytes.Compare(x[:], y[:]), ok
	case []byte:
		y, ok := b.([]byte)
		return bytes.Compare(x, y), ok
	}
	return 0, false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyRange is the range of keys a filter can match, derived from its
// top-level conjunction of key comparisons, so a scan visits (and is charged
// for) only those.
type keyRange struct {
	pkLo, pkHi         *string
	pkLoIncl, pkHiIncl bool
	rkLo, rkHi         *string // only when PartitionKey is fixed
	rkLoIncl, rkHiIncl bool
}

func (f *Filter) keyRange() keyRange {
	var kr keyRange
	var conj []cmpNode
	var walk func(n node)
	walk = func(n node) {
		switch x := n.(type) {
		case andNode:
			walk(x.l)
			walk(x.r)
		case cmpNode:
			if s, ok := x.lit.Value.(string); ok && x.lit.Type == tables.EdmString {
				_ = s
				conj = append(conj, x)
			}
		}
	}
	if f.root != nil {
		walk(f.root)
	}
	tighten := func(lo, hi **string, loIncl, hiIncl *bool, op, v string) {
		switch op {
		case "eq":
			tighten1(lo, loIncl, v, true, 1)
			tighten1(hi, hiIncl, v, true, -1)
		case "gt", "ge":
			tighten1(lo, loIncl, v, op == "ge", 1)
		case "lt", "le":
			tighten1(hi, hiIncl, v, op == "le", -1)
		}
	}
	for _, c := range conj {
		if c.prop == "PartitionKey" {
			tighten(&kr.pkLo, &kr.pkHi, &kr.pkLoIncl, &kr.pkHiIncl, c.op, c.lit.Value.(string))
		}
	}
	if kr.pkLo != nil && kr.pkHi != nil && *kr.pkLo == *kr.pkHi && kr.pkLoIncl && kr.pkHiIncl {
		for _, c := range conj {
			if c.prop == "RowKey" {
				tighten(&kr.rkLo, &kr.rkHi, &kr.rkLoIncl, &kr.rkHiIncl, c.op, c.lit.Value.(string))
			}
		}
	}
	return kr
}

// tighten1 narrows one bound; dir 1 keeps the larger (a low bound), -1 the
// smaller (a high bound).
func tighten1(b **string, incl *bool, v string, vIncl bool, dir int) {
	if *b == nil {
		*b, *incl = &v, vIncl
		return
	}
	c := compareKeys(v, **b) * dir
	if c > 0 || (c == 0 && !vIncl) {
		*b, *incl = &v, vIncl
	}
}

// start returns the first keys in the range.
func (kr keyRange) start() (pk, rk string) {
	if kr.pkLo != nil {
		pk = *kr.pkLo
		if !kr.pkLoIncl {
			pk += "\x00"
		}
	}
	if kr.rkLo != nil {
		rk = *kr.rkLo
		if !kr.rkLoIncl {
			rk += "\x00"
		}
	}
	return pk, rk
}

// past reports whether the keys (pk, rk) lie beyond the range's end.
func (kr keyRange) past(pk, rk string) bool {
	if kr.pkHi != nil {
		c := compareKeys(pk, *kr.pkHi)
		if c > 0 || (c == 0 && !kr.pkHiIncl) {
			return true
		}
	}
	if kr.rkHi != nil {
		c := compareKeys(rk, *kr.rkHi)
		if c > 0 || (c == 0 && !kr.rkHiIncl) {
			return true
		}
	}
	return false
}

// The filter's lexer and recursive-descent parser.

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tLit
	tLParen
	tRParen
	tErr
)

type token struct {
	kind tokKind
	text string
	lit  tables.Property
}

type lexer struct {
	s   string
	pos int
}

func (l *lexer) next() token {
	for l.pos < len(l.s) && (l.s[l.pos] == ' ' || l.s[l.pos] == '\t' || l.s[l.pos] == '\n' || l.s[l.pos] == '\r') {
		l.pos++
	}
	if l.pos >= len(l.s) {
		return token{kind: tEOF}
	}
	c := l.s[l.pos]
	switch {
	case c == '(':
		l.pos++
		return token{kind: tLParen, text: "("}
	case c == ')':
		l.pos++
		return token{kind: tRParen, text: ")"}
	case c == '\'':
		s, ok := l.quoted()
		if !ok {
			return token{kind: tErr, text: "unterminated string"}
		}
		return token{kind: tLit, text: s, lit: tables.Property{Type: tables.EdmString, Value: s}}
	case c == '-' || c == '+' || ('0' <= c && c <= '9'):
		return l.number()
	case c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
		start := l.pos
		for l.pos < len(l.s) && (l.s[l.pos] == '_' || isAlnum(l.s[l.pos])) {
			l.pos++
		}
		word := l.s[start:l.pos]
		if l.pos < len(l.s) && l.s[l.pos] == '\'' {
			return l.typed(word)
		}
		// The service reads the boolean literals in any case (True, TRUE),
		// as it reads Edm.Boolean values; a client that formats a .NET or
		// Python bool into a filter writes True.
		if t, f := strings.EqualFold(word, "true"), strings.EqualFold(word, "false"); t || f {
			return token{kind: tLit, text: word, lit: tables.Property{Type: tables.EdmBoolean, Value: t}}
		}
		return token{kind: tIdent, text: word}
	}
	return token{kind: tErr, text: fmt.Sprintf("unexpected character %q", c)}
}

func isAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// quoted reads a '…' literal with ” as an escaped quote.
func (l *lexer) quoted() (string, bool) {
	var b strings.Builder
	l.pos++
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		l.pos++
		if c == '\'' {
			if l.pos < len(l.s) && l.s[l.pos] == '\'' {
				b.WriteByte('\'')
				l.pos++
				continue
			}
			return b.String(), true
		}
		b.WriteByte(c)
	}
	return "", false
}

func (l *lexer) typed(word string) token {
	s, ok := l.quoted()
	if !ok {
		return token{kind: tErr, text: "unterminated " + word + " literal"}
	}
	bad := token{kind: tErr, text: fmt.Sprintf("%s'%s' is not a valid literal", word, s)}
	switch strings.ToLower(word) {
	case "datetime":
		t, ok := tables.ParseDateTime(s)
		if !ok {
			return bad
		}
		return token{kind: tLit, text: s, lit: tables.Property{Type: tables.EdmDateTime, Value: t}}
	case "guid":
		g, err := uuid.Parse(s)
		if err != nil {
			return bad
		}
		return token{kind: tLit, text: s, lit: tables.Property{Type: tables.EdmGuid, Value: g}}
	case "x", "binary":
		b, err := hex.DecodeString(s)
		if err != nil {
			return bad
		}
		return token{kind: tLit, text: s, lit: tables.Property{Type: tables.EdmBinary, Value: b}}
	}
	return token{kind: tErr, text: fmt.Sprintf("unknown literal type %q", word)}
}

func (l *lexer) number() token {
	start := l.pos
	if l.s[l.pos] == '-' || l.s[l.pos] == '+' {
		l.pos++
	}
	isFloat := false
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		if '0' <= c && c <= '9' {
			l.pos++
		} else if c == '.' || c == 'e' || c == 'E' {
			isFloat = true
			l.pos++
			if (c == 'e' || c == 'E') && l.pos < len(l.s) && (l.s[l.pos] == '-' || l.s[l.pos] == '+') {
				l.pos++
			}
		} else {
			break
		}
	}
	text := l.s[start:l.pos]
	bad := token{kind: tErr, text: fmt.Sprintf("%q is not a valid number", text)}
	if l.pos < len(l.s) {
		switch l.s[l.pos] {
		case 'L', 'l':
			l.pos++
			v, err := strconv.ParseInt(text, 10, 64)
			if err != nil || isFloat {
				return bad
			}
			return token{kind: tLit, text: text, lit: tables.Property{Type: tables.EdmInt64, Value: v}}
		case 'd', 'D', 'm', 'M', 'f', 'F':
			l.pos++
			isFloat = true
		}
	}
	if isFloat {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return bad
		}
		return token{kind: tLit, text: text, lit: tables.Property{Type: tables.EdmDouble, Value: v}}
	}
	v, err := strconv.ParseInt(text, 10, 32)
	if err != nil {
		v64, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return bad
		}
		return token{kind: tLit, text: text, lit: tables.Property{Type: tables.EdmInt64, Value: v64}}
	}
	return token{kind: tLit, text: text, lit: tables.Property{Type: tables.EdmInt32, Value: int32(v)}}
}

type parser struct {
	lex      lexer
	tok      token
	compares int
	nodes    int
	depth    int
}

// node counts a node of the tree; a filter of many nodes is refused before
// it costs memory, however it is built (a long chain of not, say).
func (p *parser) node() error {
	if p.nodes++; p.nodes > tables.MaxFilterNodes {
		return fmt.Errorf("more than %d operators and comparisons", tables.MaxFilterNodes)
	}
	return nil
}

func (p *parser) next() { p.tok = p.lex.next() }

func (p *parser) errorf(format string, args ...any) error {
	if p.tok.kind == tErr {
		return fmt.Errorf("%s at offset %d", p.tok.text, p.lex.pos)
	}
	return fmt.Errorf(format+" at offset %d", append(args, p.lex.pos)...)
}

func (p *parser) keyword(w string) bool { return p.tok.kind == tIdent && p.tok.text == w }

func (p *parser) expr() (node, error) {
	if p.depth++; p.depth > 100 {
		return nil, p.errorf("expression nested too deeply")
	}
	defer func() { p.depth-- }()
	return p.chain("or", p.and, func(l, r node) node { return orNode{l, r} })
}

func (p *parser) and() (node, error) {
	return p.chain("and", p.unary, func(l, r node) node { return andNode{l, r} })
}

// chain parses operands joined by the keyword op, grouping from the left.
func (p *parser) chain(op string, operand func() (node, error), join func(l, r node) node) (node, error) {
	l, err := operand()
	for err == nil && p.keyword(op) {
		if err = p.node(); err != nil {
			break
		}
		p.next()
		var r node
		if r, err = operand(); err == nil {
			l = join(l, r)
		}
	}
	return l, err
}

func (p *parser) unary() (node, error) {
	if p.keyword("not") {
		if err := p.node(); err != nil {
			return nil, err
		}
		p.next()
		x, err := p.unary()
		return notNode{x}, err
	}
	if p.tok.kind == tLParen {
		p.next()
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.errorf("missing )")
		}
		p.next()
		return n, nil
	}
	return p.comparison()
}

var compareOps = map[string]bool{"eq": true, "ne": true, "gt": true, "ge": true, "lt": true, "le": true}

func (p *parser) comparison() (node, error) {
	left := p.tok
	if left.kind != tIdent && left.kind != tLit {
		return nil, p.errorf("expected a property or a literal, found %q", left.text)
	}
	if err := p.node(); err != nil {
		return nil, err
	}
	p.next()
	if p.tok.kind != tIdent || !compareOps[p.tok.text] {
		// A boolean on its own: the literals true and false, or a Boolean
		// property, which is true where it holds true.
		if left.kind == tLit && left.lit.Type == tables.EdmBoolean {
			return constNode(left.lit.Value.(bool)), nil
		}
		if left.kind == tIdent && !compareOps[left.text] && left.text != "and" && left.text != "or" && left.text != "not" {
			p.compares++
			return cmpNode{prop: left.text, op: "eq", lit: tables.Property{Type: tables.EdmBoolean, Value: true}}, nil
		}
		return nil, p.errorf("expected eq, ne, gt, ge, lt or le after %q", left.text)
	}
	op := p.tok.text
	p.next()
	right := p.tok
	if right.kind != tIdent && right.kind != tLit {
		return nil, p.errorf("expected a property or a literal after %q", op)
	}
	p.next()
	p.compares++
	switch {
	case left.kind == tIdent && right.kind == tLit:
		return cmpNode{prop: left.text, op: op, lit: right.lit}, nil
	case left.kind == tLit && right.kind == tIdent: // 5 lt X is X gt 5
		return cmpNode{prop: right.text, op: mirror[op], lit: left.lit}, nil
	}
	return nil, p.errorf("a comparison needs one property and one literal")
}

var mirror = map[string]string{"eq": "eq", "ne": "ne", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
