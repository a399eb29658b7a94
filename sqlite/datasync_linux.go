package sqlite

import (
	"os"
	"syscall"
)

// dataSync flushes f's data, and the metadata needed to read it back,
// to the disk: fdatasync, as SQLite syncs its log on Linux.
func dataSync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// startWriteback starts writing f's dirty pages to the disk without
// waiting for them or flushing the disk's cache: sync_file_range with
// SYNC_FILE_RANGE_WRITE over the whole file. It makes nothing durable; a
// later sync has less to write.
func startWriteback(f *os.File) error {
	for {
		err := syscall.SyncFileRange(int(f.Fd()), 0, 0, syncFileRangeWrite)
		if err != syscall.EINTR {
			return err
		}
	}
}

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE (linux/fs.h).
const syncFileRangeWrite = 2
