// Package yamldoc reads the one YAML document a tablebench file holds:
// workload, sweep, advise, profile and faults files alike. yaml.Unmarshal
// reads the first document of a stream and drops the rest without a word,
// so a file that gained a "---" and a second half would run on its first
// half alone; every reader goes through One, which refuses that.
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// ErrSecond is wrapped by the error One returns for a file of more than one
// document.
var ErrSecond = errors.New("a second YAML document")

// MaxSize is the largest file a reader takes: a workload, sweep, advise,
// profile or faults file is a page of settings, and parsing (then
// recording) a file of many megabytes costs many times its size in memory.
const MaxSize = 1 << 20

// Size refuses a file over MaxSize.
func Size(data []byte) error {
	if len(data) > MaxSize {
		return fmt.Errorf("the file is %d bytes: a file of settings is at most %d (1 MiB)", len(data), MaxSize)
	}
	return nil
}

// One decodes data, a single YAML document of at most MaxSize bytes, into
// v as yaml.Unmarshal does.
// A second document is an error that names its line and says how to fix it;
// the decoder's own errors are returned as they are, for callers that
// read their line numbers.
func One(data []byte, v any) error {
	if err := Size(data); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF { // an empty stream: what yaml.Unmarshal gives, a zero node
			return nil
		}
		return err
	}
	if err := End(dec); err != nil {
		return err
	}
	if n, ok := v.(*yaml.Node); ok {
		*n = doc
		return nil
	}
	return doc.Decode(v)
}

// End checks that dec, which has decoded a file's document, holds no other:
// for a reader that decodes with its own settings (KnownFields) rather than
// through One.
func End(dec *yaml.Decoder) error {
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
		return nil
	case err != nil:
		return err
	default:
		return fmt.Errorf("line %d: %w: a file holds one; remove the \"---\" and what follows, or merge it into the first", max(next.Line, 1), ErrSecond)
	}
}
