package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/atomicfile"
)

// Where the intake is.
//
// The intake's file is beside the store unless Options.IntakePath puts it
// elsewhere: an acknowledgement waits for a sync of the intake's log, and
// on a disk the store writes to as well, that sync waits for the store's
// writes in the disk's cache (docs/BENCHMARKS.md, twelfth and thirty-sixth
// sessions). The place must outlive the process that chose it: a later
// start, given another place or none, must still find the messages the
// intake acknowledged and has not moved. So once a store's intake has
// been anywhere but the default place, the store records where it is in a
// file beside it (<db>-intake.at: the place, and a token naming the
// store), written and synced before the intake takes its first append. A
// start with another place first moves what the recorded intake holds to
// the store and checks that it is empty, then records the new place. It
// does so only while no other process uses the intake: every process that
// does holds a shared lock on <db>-intake.users, and the start that moves
// it must lock that file alone, else it fails naming both places (another
// process would go on appending where nobody moves from). A start takes
// its shared lock before it reads the record for the last time, so a
// move it did not see cannot come between.
//
// An intake elsewhere is stamped with the store's token, so that two
// stores given the same place (two stores named memento.db given one
// directory) cannot share an intake: the second is refused before it
// records the place, as is a place whose file holds another store's rows.

// intakeRecordSuffix names the file beside the store that records where
// its intake is.
const intakeRecordSuffix = "-intake.at"

// defaultIntakePath is where the intake is when nothing says otherwise.
func (db *DB) defaultIntakePath() string { return db.path + "-intake" }

// intakePath resolves the configured place of the intake (empty: the
// default) to an absolute file path. A directory holds the file under the
// store's name with "-intake".
func (db *DB) intakePath(configured string) (string, error) {
	if configured == "" {
		return db.defaultIntakePath(), nil
	}
	p, err := filepath.Abs(configured)
	if err != nil {
		return "", memento.WrapError(memento.EINVALID, err, "intake path %q", configured)
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		p = filepath.Join(p, filepath.Base(db.path)+"-intake")
	} else if dir := filepath.Dir(p); !isDir(dir) {
		return "", memento.Errorf(memento.EINVALID, "intake path %q: its directory %s does not exist", configured, dir)
	}
	for _, own := range []string{db.path, db.path + "-wal", db.path + "-shm", db.path + intakeRecordSuffix, db.path + intakeUsersSuffix, db.path + "-intake.lock"} {
		if p == own {
			return "", memento.Errorf(memento.EINVALID, "intake path %q is one of the store's own files", configured)
		}
	}
	return p, nil
}

// isDir reports whether path is an existing directory.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// intakeRecord is where a store's intake is, as recorded beside it.
type intakeRecord struct {
	path  string
	token string // names the store; empty while nothing is recorded
}

// recordedIntake returns where the store's intake is: the recorded place,
// else the default.
func (db *DB) recordedIntake() (intakeRecord, error) {
	record := db.path + intakeRecordSuffix
	b, err := os.ReadFile(record)
	if errors.Is(err, os.ErrNotExist) {
		return intakeRecord{path: db.defaultIntakePath()}, nil
	}
	if err != nil {
		return intakeRecord{}, fmt.Errorf("read where the intake is: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !filepath.IsAbs(lines[0]) || len(lines[1]) != 32 {
		return intakeRecord{}, fmt.Errorf("read where the intake is: %s should hold the intake's absolute path and the store's token, one a line; it holds %q", record, b)
	}
	return intakeRecord{path: lines[0], token: lines[1]}, nil
}

// newIntakeToken returns a token to name a store by.
func newIntakeToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recordIntake records r durably (atomicfile.Write), so that a crash
// leaves the old record or the new one.
func (db *DB) recordIntake(r intakeRecord) error {
	if err := atomicfile.Write(db.path+intakeRecordSuffix, []byte(r.path+"\n"+r.token+"\n"), 0o600); err != nil {
		return fmt.Errorf("record where the intake is: %w", err)
	}
	return nil
}

// intakeUsersSuffix names the file beside the store that every process
// using the store's intake holds a shared lock on while it does, and that
// a start moving the intake elsewhere must lock alone.
const intakeUsersSuffix = "-intake.users"

// openIntakeAt opens the store's intake at path. If the store recorded its
// intake elsewhere, what that one holds is moved to the store first, and
// path is recorded once it is empty: only while no other process uses the
// intake, which would go on appending to the old place.
func (db *DB) openIntakeAt(ctx context.Context, path string) (*intake, error) {
	users := db.path + intakeUsersSuffix
	was, err := db.recordedIntake()
	if err != nil {
		return nil, err
	}
	if was.path != path {
		alone, err := lockFile(users, true)
		if err != nil {
			return nil, memento.Errorf(memento.ECONFLICT,
				"the store's intake is at %s and another process uses it; give this one the same intake path, or stop the others before moving it to %s", was.path, path)
		}
		err = db.moveIntake(ctx, path)
		alone.unlock()
		if err != nil {
			return nil, err
		}
	}
	// Shared, then read again: a start that moved the intake meanwhile
	// has recorded its place before this lock could be had.
	shared, err := lockFile(users, false)
	if err != nil {
		return nil, fmt.Errorf("lock the intake's users: %w", err)
	}
	now, err := db.recordedIntake()
	if err == nil && now.path != path {
		err = memento.Errorf(memento.ECONFLICT, "the store's intake moved to %s while this process started with it at %s; give it the same intake path", now.path, path)
	}
	var in *intake
	if err == nil {
		db.warnIfIntakeLost(now)
		in, err = openIntake(ctx, db, now)
	}
	if err != nil || in == nil {
		shared.unlock()
		return nil, err
	}
	in.users = shared
	db.logger.Info("intake: appends are acknowledged from it", "path", in.path, "moves", in.owns())
	return in, nil
}

// warnIfIntakeLost warns when the recorded intake's file is not there: it
// was created when its place was recorded, so something removed it (a
// device that does not keep its files across a restart, a cleanup), and
// the messages it acknowledged and had not moved went with it.
func (db *DB) warnIfIntakeLost(r intakeRecord) {
	if r.token == "" {
		return // the default place, which exists only once used
	}
	if _, err := os.Stat(r.path); errors.Is(err, os.ErrNotExist) {
		db.logger.Warn("intake: its file is missing; any messages it acknowledged and had not moved to the store are lost (is it on a device that does not keep its files?)", "path", r.path)
	}
}

// moveIntake moves what the recorded intake holds to the store and records
// path as the intake's place, with the store's token (a new one if none
// is recorded). The caller holds the intake's users' lock alone.
func (db *DB) moveIntake(ctx context.Context, path string) error {
	was, err := db.recordedIntake()
	if err != nil || was.path == path {
		return err
	}
	now := intakeRecord{path: path, token: was.token}
	if now.token == "" {
		now.token = newIntakeToken()
	}
	// Refused before anything moves: another store's intake.
	if err := checkIntakeStamp(ctx, path, now.token); err != nil {
		return err
	}
	_, statErr := os.Stat(was.path)
	owns, err := db.drainIntakeAt(ctx, was)
	if err != nil {
		return err
	}
	if !owns {
		return memento.Errorf(memento.ECONFLICT,
			"the store's intake is at %s, which this process cannot take over (another process moves it, or no lock can be had); give this one the same intake path, or stop the others before moving it to %s", was.path, path)
	}
	if n, err := intakeRows(ctx, was.path); err != nil {
		return err
	} else if n > 0 {
		return fmt.Errorf("the intake at %s still holds %d messages after they were moved to the store; it stays the store's intake", was.path, n)
	}
	if err := db.recordIntake(now); err != nil {
		return err
	}
	if statErr == nil {
		db.logger.Info("intake: moved; the file at its old place is empty", "from", was.path, "to", path)
	}
	return nil
}

// checkIntakeStamp refuses a file at path that is stamped with another
// store's token, that holds rows without a stamp (another store's intake
// from before stamps), or that is not an intake (another file, another
// database).
func checkIntakeStamp(ctx context.Context, path, token string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	f, err := sql.Open(driverName, "file:"+(&url.URL{Path: path}).EscapedPath())
	if err != nil {
		return err
	}
	defer f.Close()
	var tables, intakes int
	if err := f.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = 'intake') FROM sqlite_schema WHERE type = 'table'`).Scan(&tables, &intakes); err != nil {
		return memento.WrapError(memento.EINVALID, err, "intake path %s is not an intake file", path)
	}
	if tables > 0 && intakes == 0 {
		// Another database: the intake's tables are not to go into it.
		return memento.Errorf(memento.EINVALID, "intake path %s is a database that is no intake", path)
	}
	var stamp string
	err = f.QueryRowContext(ctx, `SELECT token FROM intake_store`).Scan(&stamp)
	switch {
	case err == nil && stamp == token:
		return nil
	case err == nil:
		return memento.Errorf(memento.ECONFLICT, "the intake file %s belongs to another store; give this store a place of its own", path)
	}
	var n int
	if intakes > 0 {
		if err := f.QueryRowContext(ctx, `SELECT count(*) FROM intake`).Scan(&n); err != nil {
			return memento.WrapError(memento.EINVALID, err, "intake path %s is not an intake file", path)
		}
	}
	if n > 0 {
		return memento.Errorf(memento.ECONFLICT, "the intake file %s holds %d messages of another store; give this store a place of its own", path, n)
	}
	return nil
}

// intakeRows counts the rows of the intake file at path, 0 if there is no
// such file.
func intakeRows(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	f, err := sql.Open(driverName, "file:"+(&url.URL{Path: path}).EscapedPath())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int
	if err := f.QueryRowContext(ctx, `SELECT count(*) FROM intake`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the rows left in the intake %s: %w", path, err)
	}
	return n, nil
}
