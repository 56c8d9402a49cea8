package rest

import (
	"slices"
	"strings"
)

// mpart is one part of a multipart body: its headers and its content, a
// substring of the body.
type mpart struct {
	header fields
	body   string
}

// splitMultipart splits a multipart body held in memory into its parts,
// substrings of it, for the form every SDK sends: CRLF line ends,
// delimiter lines with at most trailing blanks, plain part headers, binary
// content. It reports false for anything else (LF-only lines, quoted-
// printable parts, folded headers, a missing close delimiter), which
// mime/multipart then reads or refuses with its own message. Preamble and
// epilogue are ignored, as mime/multipart ignores them.
func splitMultipart(body, boundary string) ([]mpart, bool) {
	delim := "\r\n--" + boundary // a delimiter inside the body, after a part's content
	dash := delim[2:]
	i := 0
	for { // the first delimiter line
		j := strings.Index(body[i:], dash)
		if j < 0 {
			return nil, false
		}
		if i+j == 0 || body[i+j-1] == '\n' {
			i += j
			break
		}
		i += j + 1
	}
	var parts []mpart
	var arena fields // every part's headers, in one array
	for {
		start, closed, ok := delimiterLine(body, i, boundary)
		if closed { // the close delimiter, ending its line
			return parts, ok
		}
		if !ok {
			return nil, false
		}
		end := indexDelim(body[start:], delim)
		if end < 0 {
			return nil, false
		}
		end += start
		part := body[start:end]
		var head, content string
		switch {
		case strings.HasPrefix(part, "\r\n"): // no headers
			content = part[2:]
		default:
			k := strings.Index(part, "\r\n\r\n")
			if k < 0 {
				return nil, false
			}
			head, content = part[:k+2], part[k+4:]
		}
		from := len(arena)
		if arena, ok = plainHeaders(head, arena); !ok {
			return nil, false
		}
		h := arena[from:len(arena):len(arena)] // capped: a later part's headers append to arena, not to h
		if !binaryPart(h) {
			return nil, false
		}
		if parts == nil {
			// Size both arrays from the first part, as if all were
			// like it: a changeset's hundred operations then fill
			// them without the copies growing them takes.
			n := min(len(body)/(end+2-i), 128) + 1
			parts, arena = make([]mpart, 0, n), slices.Grow(arena, n*len(h))
			h = arena[from:len(arena):len(arena)]
		}
		parts = append(parts, mpart{h, content})
		i = end + 2
	}
}

// indexDelim returns the index of the first delim, a CR, an LF and a
// dash-led boundary, in s, or -1. It hops from CR to CR with a vector
// search: a part's few lines end in one each and its content, most of it,
// holds none. strings.Index gives up hopping after a few CRs and then
// compares the delimiter at every byte, about five times the work for the
// parts of a changeset. Past a part's worth of CRs it does the same, so
// that a body of CRs costs no more than strings.Index makes it.
func indexDelim(s, delim string) int {
	for i, misses := 0, 0; ; i, misses = i+1, misses+1 {
		if misses == 64 {
			if j := strings.Index(s[i:], delim); j >= 0 {
				return i + j
			}
			return -1
		}
		j := strings.IndexByte(s[i:], '\r')
		if j < 0 {
			return -1
		}
		if i += j; strings.HasPrefix(s[i:], delim) {
			return i
		}
	}
}
