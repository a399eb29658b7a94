package sqlite_test

import (
	"testing"

	"github.com/memento-ai/memento/sqlite/sqlitetest"
	"github.com/memento-ai/memento/storetest"
)

// TestConformance runs the store conformance suite against SQLite, each
// part on a fresh store in the test's temporary directory.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) storetest.Store { return sqlitetest.Open(tb) })
}

// TestConformanceWithIntake runs the suite with appends acknowledged from
// the intake (sqlite.Options.Intake): every promise of the store holds
// there too.
func TestConformanceWithIntake(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) storetest.Store {
		opts := sqlitetest.Options()
		opts.Intake = true
		return sqlitetest.OpenWith(tb, opts)
	})
}
