package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestDocListsEveryCommand: main.go's package doc lists every command of
// the table in cli.go, in its order, with its summary, as the usage does;
// a command added, renamed or described anew fails here with the lines to
// paste.
func TestDocListsEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("main.go has no package doc")
	}
	var listed []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if strings.HasPrefix(line, "\ttablebench ") {
			listed = append(listed, line)
		}
	}
	want := commandLines("\ttablebench ")
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Errorf("main.go's package doc lists the commands\n%s\nbut cli.go's table has them as below; paste these lines into main.go in place of its list:\n//%s",
			strings.Join(listed, "\n"), strings.Join(want, "\n//"))
	}
}
