package yamldoc

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestOneRefusesASecondDocument: a file with a second document is refused
// with its line, rather than read for its first half alone.
func TestOneRefusesASecondDocument(t *testing.T) {
	var n yaml.Node
	err := One([]byte("mix: {get: 1}\n---\nmix: {insert: 1}\n"), &n)
	if !errors.Is(err, ErrSecond) || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Fatalf("error %v, want line 2 (the ---) and a second document", err)
	}
	var m map[string]any
	if err := One([]byte("a: 1\n---\nb: 2\n"), &m); !errors.Is(err, ErrSecond) {
		t.Fatalf("into a map: error %v", err)
	}
}

// TestOneReadsOneDocument: one document, with or without a leading "---",
// decodes as yaml.Unmarshal decodes it, and an empty file is a zero node.
func TestOneReadsOneDocument(t *testing.T) {
	for _, in := range []string{"a: 1\nb: [x, y]\n", "---\na: 1\nb: [x, y]\n", "a: 1\nb: [x, y]\n...\n"} {
		var got, want map[string]any
		if err := One([]byte(in), &got); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if err := yaml.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["a"] != want["a"] {
			t.Fatalf("%q: got %v, want %v", in, got, want)
		}
	}
	var n yaml.Node
	if err := One([]byte(""), &n); err != nil || len(n.Content) != 0 {
		t.Fatalf("empty: %v, %v", n.Content, err)
	}
	var m map[string]any
	if err := One([]byte("a: [1\n"), &m); err == nil {
		t.Fatal("a syntax error was taken")
	}
}

// TestOneRefusesAHugeFile: a file over MaxSize is refused before it is
// parsed, whatever it holds.
func TestOneRefusesAHugeFile(t *testing.T) {
	data := []byte("name: " + strings.Repeat("a", MaxSize) + "\n")
	var n yaml.Node
	if err := One(data, &n); err == nil || !strings.Contains(err.Error(), "at most 1048576 (1 MiB)") {
		t.Fatalf("error %v", err)
	}
	if err := One([]byte("name: "+strings.Repeat("a", 1000)+"\n"), &n); err != nil {
		t.Fatal(err)
	}
}
