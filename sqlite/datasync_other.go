//go:build !linux

package sqlite

import "os"

// dataSync flushes f to the disk.
func dataSync(f *os.File) error { return f.Sync() }

// startWriteback does nothing where there is no sync_file_range: the
// next sync writes the pages.
func startWriteback(*os.File) error { return nil }
