//go:build !unix

package results

import "os"

// tryLock is a no-op where advisory file locks are not available.
func tryLock(f *os.File) error { return nil }
