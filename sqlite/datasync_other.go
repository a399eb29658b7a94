//go:build !linux

package sqlite

import "os"

// dataSync flushes f to the disk.
func dataSync(f *os.File) error { return f.Sync() }
