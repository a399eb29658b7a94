// Package riverup applies River's schema migrations quietly.
package riverup

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/rivermigrate"
)

// Up applies the River migrations that the database lacks. It asks first:
// River's Migrate logs "No migrations to apply" whenever there is nothing
// to do, which every command that opens a store would print, while
// Validate says nothing about a schema that is up to date. Migrate, when
// it runs, logs each migration it applies.
func Up[TTx any](ctx context.Context, m *rivermigrate.Migrator[TTx]) error {
	v, err := m.Validate(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate job queue: %w", err)
	}
	if v.OK {
		return nil
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate job queue: %w", err)
	}
	return nil
}
