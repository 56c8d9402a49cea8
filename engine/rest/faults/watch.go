package faults

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"
)

// Load reads and parses a rules file.
func Load(path string) ([]Rule, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("the faults file cannot be read: %v", err)
	}
	rules, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return rules, data, nil
}

// Watch puts the rules of path in force now, and again whenever the file
// changes, checking every interval until ctx is done; a change is loaded
// once it has held for two checks, so a file caught half written is not. A change that does
// not parse is reported through report, one line, and the rules in force
// are kept. The first load's error is returned: a server should not start
// on a rules file it cannot read.
func Watch(ctx context.Context, s *Set, path string, interval time.Duration, report func(string)) error {
	rules, last, err := Load(path)
	if err != nil {
		return err
	}
	s.Replace(rules)
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		var lastErr string
		var pending []byte // a change is acted on once it holds for two checks
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			data, err := os.ReadFile(path)
			if err == nil && bytes.Equal(data, last) {
				pending = nil
				continue
			}
			if err == nil && !bytes.Equal(data, pending) { // perhaps half written: look again
				pending = data
				continue
			}
			var rules []Rule
			if err == nil {
				rules, err = Parse(data)
			}
			if err != nil {
				if msg := fmt.Sprintf("faults: %s: %v; keeping the %d rules in force", path, err, len(s.Rules())); msg != lastErr {
					report(msg)
					lastErr = msg
				}
				continue
			}
			last, lastErr = data, ""
			s.Replace(rules)
			report(fmt.Sprintf("faults: %s: %d rules in force", path, len(rules)))
		}
	}()
	return nil
}
