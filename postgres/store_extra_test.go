package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/experiment"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/storetest"
)

// TestSearchMessagesRanksByBM25 searches a user's messages across threads:
// stemmed words, best first, bounded by k, only the user's own.
func TestSearchMessagesRanksByBM25(t *testing.T) {
	db, _ := openSchema(t, postgres.Options{})
	ctx := t.Context()
	ann := memento.Scope{User: "ann"}
	texts := []string{
		"I watched a documentary about whales yesterday",                         // 0: none of the words
		"Spy thrillers are my favourite, especially spy thrillers set in Berlin", // 1: both words, repeated
		"Let's talk about cooking",                                               // 2: none
		"Maybe a spy movie tonight",                                              // 3: one word
	}
	var msgs []memento.Message
	for i, text := range texts {
		msgs = append(msgs, memento.Message{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: text})
	}
	if _, err := db.AppendMessages(ctx, ann, "t1", msgs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendMessages(ctx, ann, "t2", []memento.Message{{ID: "m4", Role: memento.RoleUser, Text: "Thriller night with friends"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendMessages(ctx, memento.Scope{User: "bob"}, "t1", []memento.Message{{ID: "b1", Role: memento.RoleUser, Text: "spy thrillers, spy thrillers"}}, nil); err != nil {
		t.Fatal(err)
	}
	hits, err := db.SearchMessages(ctx, ann, "Spy THRILLERS?", 10)
	if err != nil {
		t.Fatalf("SearchMessages: %v", err)
	}
	var got []string
	for i, h := range hits {
		got = append(got, h.Message.ID)
		if h.Score <= 0 {
			t.Errorf("hit %d has score %v, want > 0", i, h.Score)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hit %d scores %v above hit %d's %v", i, h.Score, i-1, hits[i-1].Score)
		}
	}
	if strings.Join(got, ",") != "m1,m4,m3" && strings.Join(got, ",") != "m1,m3,m4" {
		t.Fatalf("hits = %v, want m1 first, then m3 and m4 (a stemmed match in another thread); never bob's", got)
	}
	if h := hits[0].Message; h.Thread != "t1" || h.Seq != 2 || h.Tenant != memento.DefaultTenant || h.User != "ann" {
		t.Errorf("top hit = %+v, want the stored message", h)
	}
	if top, err := db.SearchMessages(ctx, ann, "spy thrillers", 1); err != nil || len(top) != 1 || top[0].Message.ID != "m1" {
		t.Errorf("SearchMessages with k=1 = %+v, %v", top, err)
	}
	if none, err := db.SearchMessages(ctx, ann, "?!", 0); err != nil || none == nil || len(none) != 0 {
		t.Errorf("a query without words = %#v, %v; want an empty list", none, err)
	}
	if none, err := db.SearchMessages(ctx, ann, "submarine", 0); err != nil || len(none) != 0 {
		t.Errorf("a query matching nothing = %+v, %v", none, err)
	}
	if _, err := db.SearchMessages(ctx, ann, "spy", -1); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("k = -1: %v, want EINVALID", err)
	}
	if _, err := db.SearchMessages(ctx, memento.Scope{}, "spy", 1); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("no user: %v, want EINVALID", err)
	}
}

// TestEnrolBalancedAcrossProcesses enrols participants through two
// stores on one database at once: the study's row lock makes each
// enrolment see every earlier one, whichever process made it.
func TestEnrolBalancedAcrossProcesses(t *testing.T) {
	a, b := openPair(t)
	storetest.EnrolBalanced(t, []experiment.Store{a.Experiments(), b.Experiments()}, 40)
}

// TestDeleteUserFindsJobsByIndex checks that forgetting a user finds their
// jobs through the index on the args' tenant and user (migration 0006)
// instead of reading every job: the planner can use it for DeleteUser's
// statement, and the statement deletes only that user's jobs.
func TestDeleteUserFindsJobsByIndex(t *testing.T) {
	db, _ := openSchema(t, postgres.Options{})
	ctx := t.Context()
	for i := range 40 {
		s := memento.Scope{User: fmt.Sprintf("u%d", i%4)}
		if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "hello"}},
			func(m memento.Message) []memento.JobRequest {
				return []memento.JobRequest{{Kind: "remember", Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User, Message: m.ID}}}
			}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The table is small, so the planner would read it whole whatever the
	// indexes; forbidding that shows whether the index can serve.
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), `RESET enable_seqscan`) //nolint:errcheck
	rows, err := conn.Query(ctx, `EXPLAIN DELETE FROM river_job
		WHERE args ->> 'tenant' = $1 AND args ->> 'user' = $2 AND state <> 'running'`, memento.DefaultTenant, "u1")
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "memento_river_job_by_user") {
		t.Errorf("DeleteUser's job statement does not use the index:\n%s", strings.Join(plan, "\n"))
	}
	if err := db.DeleteUser(ctx, memento.Scope{User: "u1"}); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "remember"})
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]int{}
	for _, j := range jobs {
		var p memento.MessageJob
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			t.Fatal(err)
		}
		users[p.User]++
	}
	if len(jobs) != 30 || users["u1"] != 0 || users["u0"] != 10 {
		t.Errorf("jobs after forgetting u1 = %v; want the other users' 30 only", users)
	}
}
