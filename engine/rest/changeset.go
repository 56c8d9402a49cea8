package rest

import (
	"mime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// changesetBuf holds the arrays readChangeset reads a batch's operations
// into, reused from batch to batch: a hundred operations' headers are some
// twenty kilobytes.
type changesetBuf struct {
	subs  []subRequest
	arena fields
	last  lastOp
}

// lastOp remembers what the operation before was read from and read as:
// every operation an SDK writes repeats most of the one before it, byte for
// byte, so a block or line equal to the one before is taken as read after
// one comparison. Its strings are views of the body being read.
type lastOp struct {
	part    string // its part's header lines and blank line, read as a binary part
	line    string // its request line with its CRLF
	request subRequest
	block   string // its header lines and blank line
	header  fields // as read
	length  int    // its Content-Length, -1 if none
	lines   lineMemo
}

// lineMemo remembers the header lines of the last block read, each with
// its CRLF, and what they read as: a block that differs from the one
// before in one line (a Content-Length) is read anew in that line only.
type lineMemo struct {
	raw []string
	f   fields
}

var changesetBufs = sync.Pool{New: func() any { return new(changesetBuf) }}

// release returns buf to the pool. Its strings are views of a body, which
// the pool's next user overwrites and the pool drops at a collection or
// two; clearing them cost more than the rest of its reuse saved.
func (buf *changesetBuf) release() { changesetBufs.Put(buf) }

// readChangeset reads a batch that is one changeset as SDKs send it, in one
// walk over its lines: the batch's delimiter at the start, the changeset's
// headers, then each operation's delimiter, part headers, request line and
// headers, and a body of its Content-Length followed at once by the next
// delimiter; the close delimiters at the end. Each line is read once, and
// a body is searched only for a CR, where a delimiter would have to start.
// Splitting the batch, then the changeset, then each operation (what
// splitChangeset and parseSubRequest do) read every header line three
// times and searched every body for both delimiters. A body without a
// Content-Length, or with CRs, is searched for its delimiter, and for the
// batch's.
//
// It reports false for anything else: a preamble before the batch's
// delimiter, LF-only lines, a Content-Length that is not the body's, a
// header line that starts like a delimiter, more than one part in the
// batch.
// Those take splitChangeset, which reads what this reads to the same
// operations (FuzzReadChangeset). The operations' strings are substrings of
// body; they and their headers are in buf's arrays, which the caller reuses
// once it is done with them.
func readChangeset(body, boundary string, buf *changesetBuf) ([]subRequest, bool) {
	i, closed, ok := delimiterLine(body, 0, boundary)
	if !ok || closed {
		return nil, false
	}
	var scratch fields // a part's own headers, read anew for each
	if scratch, i, ok = readHeaders(body, i, scratch[:0], nil); !ok || !binaryPart(scratch) {
		return nil, false
	}
	cmt, cparams, err := mime.ParseMediaType(scratch.Get("Content-Type"))
	inner := cparams["boundary"]
	// An inner boundary that starts with the batch's makes every operation's
	// delimiter look like the batch's, which the general reader sorts out.
	if err != nil || cmt != "multipart/mixed" || inner == "" || strings.HasPrefix(inner, boundary) {
		return nil, false
	}
	subs, arena := buf.subs[:0], buf.arena[:0] // every operation's headers, in one array
	// The memo holds views of the body it was read from: a pooled buffer's
	// last batch is not this one.
	last := &buf.last
	*last = lastOp{lines: lineMemo{raw: last.lines.raw[:0], f: last.lines.f[:0]}}
	defer func() { buf.subs, buf.arena = subs, arena }()
	for strings.HasPrefix(body[i:], "\r\n") { // blank lines before the first operation, as the JavaScript SDK writes
		i += 2
	}
	innerDelim, outerDelim := "\r\n--"+inner, "\r\n--"+boundary
	for {
		start := i
		if i, closed, ok = delimiterLine(body, i, inner); !ok {
			return nil, false
		}
		if closed {
			break
		}
		if last.part != "" && strings.HasPrefix(body[i:], last.part) {
			i += len(last.part)
		} else {
			from := i
			if scratch, i, ok = readHeaders(body, i, scratch[:0], nil); !ok || !binaryPart(scratch) {
				return nil, false
			}
			last.part = body[from:i]
		}
		var sub subRequest
		if i, ok = last.readRequestLine(body, i, &sub); !ok {
			return nil, false
		}
		if arena, i, ok = last.readOpHeaders(body, i, arena, &sub); !ok {
			return nil, false
		}
		var n int
		if n, ok = last.readOpBody(body, i, innerDelim, outerDelim, &sub); !ok {
			return nil, false
		}
		sub.tunnel()
		if len(subs) == 0 {
			// Size the operations' array from the first, as if all were like
			// it, as splitMultipart does. Their headers need no such guess:
			// most share the block before theirs.
			subs = slices.Grow(subs, min(len(body)/(i+n+2-start), 128)+1)
		}
		subs = append(subs, sub)
		i += n + 2 // the CRLF before the next delimiter is part of it
	}
	// The batch's close delimiter, after blank lines at most.
	if !strings.HasPrefix(body[i:], "\r\n") || len(subs) == 0 {
		return nil, false
	}
	for !strings.HasPrefix(body[i:], outerDelim) {
		if i += 2; !strings.HasPrefix(body[i:], "\r\n") {
			return nil, false
		}
	}
	if _, closed, ok = delimiterLine(body, i+2, boundary); !ok || !closed {
		return nil, false
	}
	return subs, true
}

// readRequestLine reads an operation's request line at body[i:] into sub,
// or takes the operation before's when the line is the same, and returns
// where the line ends.
func (last *lastOp) readRequestLine(body string, i int, sub *subRequest) (int, bool) {
	if last.line != "" && strings.HasPrefix(body[i:], last.line) {
		sub.method, sub.path, sub.rawQuery = last.request.method, last.request.path, last.request.rawQuery
		i += len(last.line)
	} else {
		nl := strings.IndexByte(body[i:], '\n')
		if nl < 1 || body[i+nl-1] != '\r' || strings.HasPrefix(body[i:], "--") {
			return 0, false
		}
		method, target, ok := plainRequestLine(body[i : i+nl-1])
		if !ok {
			return 0, false
		}
		if sub.path, sub.rawQuery, ok = plainTarget(target); !ok {
			return 0, false
		}
		sub.method = method
		last.line, last.request = body[i:i+nl+1], *sub
		i += nl + 1
	}
	return i, true
}

// readOpHeaders reads an operation's headers at body[i:] into arena, or
// takes the operation before's when the block is the same, and returns
// arena and where the headers end.
func (last *lastOp) readOpHeaders(body string, i int, arena fields, sub *subRequest) (fields, int, bool) {
	var ok bool
	if last.block != "" && strings.HasPrefix(body[i:], last.block) {
		sub.header = last.header // shared: nothing changes an operation's headers
		i += len(last.block)
	} else {
		at, from := i, len(arena)
		if arena, i, ok = readHeaders(body, i, arena, &last.lines); !ok {
			return arena, 0, false
		}
		sub.header = arena[from:len(arena):len(arena)] // capped: the next operation's headers append to arena
		last.length = -1
		if cl := sub.header.Get("Content-Length"); cl != "" {
			var err error
			if last.length, err = strconv.Atoi(cl); err != nil || last.length < 0 {
				return arena, 0, false
			}
		}
		last.block, last.header = body[at:i], sub.header
	}
	return arena, i, true
}

// readOpBody reads an operation's body at body[i:] into sub, by its
// Content-Length where it has one and it holds no CR, else up to the next
// delimiter, and returns its length.
func (last *lastOp) readOpBody(body string, i int, innerDelim, outerDelim string, sub *subRequest) (int, bool) {
	// A body that starts with dashes may start with a delimiter, whose
	// CRLF is then the blank line's: the operation had no body, and
	// its headers ran into the delimiter.
	if strings.HasPrefix(body[i:], "--") {
		return 0, false
	}
	n := last.length
	if n > len(body)-i {
		return 0, false
	}
	if sub.body = body[i : i+max(n, 0)]; n >= 0 && strings.IndexByte(sub.body, '\r') < 0 {
		// No CR in the body: no delimiter starts inside it.
		if !strings.HasPrefix(body[i+n:], innerDelim) {
			return 0, false
		}
	} else {
		// No length, or CRs (a blank line before the JSON, as the
		// JavaScript SDK writes): the body runs to the first
		// delimiter, and holds none of the batch's.
		end := indexDelim(body[i:], innerDelim)
		if end < 0 || n >= 0 && n != end || strings.Contains(body[i:i+end], outerDelim) {
			return 0, false
		}
		n, sub.body = end, body[i:i+end]
	}
	return n, true
}

// delimiterLine reads the delimiter line of boundary at body[i:]:
// "--boundary", blanks and CRLF, after which it returns the index. A close
// delimiter, "--boundary--" and blanks, reports closed and the index after
// the blanks, which must be the end or a CRLF.
func delimiterLine(body string, i int, boundary string) (next int, closed, ok bool) {
	if !strings.HasPrefix(body[i:], "--") || !strings.HasPrefix(body[i+2:], boundary) {
		return 0, false, false
	}
	i += 2 + len(boundary)
	if strings.HasPrefix(body[i:], "--") {
		i = skipBlanks(body, i+2)
		return i, true, i == len(body) || strings.HasPrefix(body[i:], "\r\n")
	}
	i = skipBlanks(body, i)
	if !strings.HasPrefix(body[i:], "\r\n") {
		return 0, false, false
	}
	return i + 2, false, true
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// readHeaders appends to h the header lines at body[i:], as plainHeaders
// reads them, up to the blank line after them, and returns the index after
// it. A line that starts with two dashes may be a delimiter: it reports
// false, as it does for anything plainHeaders refuses. With a memo, a line
// equal to the memo's line at its place is taken as read there, and the
// memo then holds this block's lines.
func readHeaders(body string, i int, h fields, m *lineMemo) (fields, int, bool) {
	for k := 0; ; k++ {
		if m != nil && k < len(m.raw) && strings.HasPrefix(body[i:], m.raw[k]) {
			h = append(h, m.f[k])
			i += len(m.raw[k])
			continue
		}
		nl := strings.IndexByte(body[i:], '\n')
		if nl < 1 || body[i+nl-1] != '\r' {
			return nil, 0, false
		}
		line := body[i : i+nl-1]
		start := i
		i += nl + 1
		if line == "" {
			if m != nil {
				m.raw, m.f = m.raw[:k], m.f[:k]
			}
			return h, i, true
		}
		f, ok := headerField(line)
		if !ok || strings.HasPrefix(line, "--") {
			return nil, 0, false
		}
		h = append(h, f)
		if m != nil {
			if k < len(m.raw) {
				m.raw[k], m.f[k] = body[start:i], f
			} else {
				m.raw, m.f = append(m.raw[:k], body[start:i]), append(m.f[:k], f)
			}
		}
	}
}

// binaryPart reports whether a part's headers let its content be read as
// it is.
func binaryPart(h fields) bool {
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "", "binary", "8bit", "7bit":
		return true
	}
	return false
}
