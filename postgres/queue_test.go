package postgres_test

import (
	"testing"

	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/storetest"
)

// TestQueueRecordsACompletionAtOnce: see storetest.CompletionAtOnce.
func TestQueueRecordsACompletionAtOnce(t *testing.T) {
	db, _ := openSchema(t, postgres.Options{Workers: 1})
	storetest.CompletionAtOnce(t, db)
}
