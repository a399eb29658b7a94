// Package storetest is the conformance suite of Memento's stores: one set
// of tests, written once, that every backend (sqlite, postgres) runs
// against a fresh store of its own, as gocloud.dev's drivertest packages
// do. A backend's test calls Run with a function that opens an empty
// store and closes it when the test ends:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t testing.TB) storetest.Store { return openEmpty(t) })
//	}
//
// The suite checks the behaviour the root package's interfaces document:
// messages and their idempotency, threads and turns (CheckSeq), memories
// with history and validity, events, jobs enqueued in the same transaction
// as their data and run by the queue, tenant and user isolation,
// concurrent turns on one thread, and, for a store that provides them,
// recall candidates (BM25 scores checked against a reference computation)
// and the recall change log with its pruning, profiles and the models
// learned over a tenant's events (with their incremental reads under
// concurrent writers), preferences and their clusters, export/import
// (with the titles a thread showed and its stored answers), the
// pipeline's catch-up reads, API keys, studies and their balanced
// enrolment under concurrency, the queue's lag and job counts, and the cache of shared texts' vectors. A part
// the store does not implement is skipped with a message naming the
// interface, so a backend's test output says exactly which parts it
// passes.
package storetest

import (
	"context"
	"testing"

	"github.com/memento-ai/memento"
)

// Store is what every backend provides and the suite always tests.
type Store interface {
	memento.UserService
	memento.MessageLog
	memento.ThreadService
	memento.EventService
	memento.MemoryService
	memento.MemoryWriter
	memento.Queue
}

// Exporter is a store that exports and imports a user's data as one
// document (memento.UserExport).
type Exporter interface {
	// ExportUser reads everything kept about the user. Errors: ENOTFOUND.
	ExportUser(ctx context.Context, s memento.Scope) (*memento.UserExport, error)
	// ImportUser stores a document under the scope's user; rows already
	// stored (by id) are skipped. Errors: EINVALID.
	ImportUser(ctx context.Context, s memento.Scope, doc *memento.UserExport) (*memento.ImportResult, error)
}

// Opener opens a fresh, empty store for one test and arranges (with
// tb.Cleanup) for it to be closed when the test ends. Its queue should
// poll often and retry quickly, since the suite waits for jobs to run.
type Opener func(tb testing.TB) Store

// Run runs the whole suite, each part a subtest. Parts run one after
// another, each on a store of its own.
func Run(t *testing.T, open Opener) {
	for _, p := range parts {
		t.Run(p.name, func(t *testing.T) { p.fn(t, open) })
	}
}

// parts are the suite's tests, in the order Run runs them.
var parts = []struct {
	name string
	fn   func(t *testing.T, open Opener)
}{
	{"Users", testUsers},
	{"Messages", testMessages},
	{"MessageConflicts", testMessageConflicts},
	{"Threads", testThreads},
	{"TurnCheckSeq", testTurnCheckSeq},
	{"ConcurrentTurns", testConcurrentTurns},
	{"ConcurrentCheckedTurns", testConcurrentCheckedTurns},
	{"Events", testEvents},
	{"Memories", testMemories},
	{"MemoryEdits", testMemoryEdits},
	{"MemoryModesAndRuns", testMemoryModesAndRuns},
	{"JobsInTransaction", testJobsInTransaction},
	{"QueueRunsJobs", testQueueRunsJobs},
	{"Backlog", testBacklog},
	{"BacklogWithoutHandler", testBacklogWithoutHandler},
	{"PreferenceBatch", testPreferenceBatch},
	{"ConcurrentPreferenceBatches", testConcurrentPreferenceBatches},
	{"MemoryBatch", testMemoryBatch},
	{"MemoryBatchAsOneByOne", testMemoryBatchAsOneByOne},
	{"Isolation", testIsolation},
	{"DeleteUser", testDeleteUser},
	{"ExportImport", testExportImport},
	{"RecallCandidates", testRecallCandidates},
	{"RecallChanges", testRecallChanges},
	{"RecallPeriods", testRecallPeriods},
	{"Profile", testProfile},
	{"Preferences", testPreferences},
	{"ProfileModels", testProfileModels},
	{"PreferenceEdits", testPreferenceEdits},
	{"RecallPruning", testRecallPruning},
	{"PipelineLog", testPipelineLog},
	{"Checkpoints", testCheckpoints},
	{"Titles", testTitles},
	{"VectorCache", testVectorCache},
	{"SnapshotSource", testSnapshotSource},
	{"MessageEmotion", testMessageEmotion},
	{"ExportShownAnswers", testExportShownAnswers},
	{"EventsSince", testEventsSince},
	{"UserEventsSince", testUserEventsSince},
	{"PreferencesSince", testPreferencesSince},
	{"Keys", testKeys},
	{"Experiments", testExperiments},
	{"ConcurrentEnrolment", testConcurrentEnrolment},
	{"QueueLag", testQueueLag},
	{"Copy", testCopy},
}
