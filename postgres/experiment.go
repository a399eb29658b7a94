package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/experiment"
)

// experiments is the store of studies and their participants
// (experiment.Store) over the DB's pool: one service type per aggregate,
// so the DB itself does not grow more methods.
type experiments struct{ db *DB }

// Experiments returns the study store. Its signature is that of
// sqlite.DB.Experiments, so the engine opens studies on either store.
func (db *DB) Experiments() experiment.Store { return &experiments{db: db} }

var _ experiment.Store = (*experiments)(nil)

const studyColumns = `name, arms, instrument, created_at`

// CreateStudy stores a new study. Errors: EINVALID, ECONFLICT when the
// name is taken.
func (x *experiments) CreateStudy(ctx context.Context, s experiment.Study) (*experiment.Study, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	arms, err := json.Marshal(s.Arms)
	if err != nil {
		return nil, fmt.Errorf("create study %s: %w", s.Name, err)
	}
	in, err := json.Marshal(s.Instrument)
	if err != nil {
		return nil, fmt.Errorf("create study %s: %w", s.Name, err)
	}
	s.CreatedAt = x.db.now()
	tag, err := x.db.pool.Exec(ctx, `INSERT INTO experiments (name, arms, instrument, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		s.Name, string(arms), string(in), nanos(s.CreatedAt))
	if err == nil && tag.RowsAffected() == 0 {
		err = memento.Errorf(memento.ECONFLICT, "a study named %q exists already", s.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("create study %s: %w", s.Name, err)
	}
	return &s, nil
}

// scanStudy decodes a row of studyColumns.
func scanStudy(r pgx.Row) (*experiment.Study, error) {
	var s experiment.Study
	var arms, in []byte
	var created int64
	if err := r.Scan(&s.Name, &arms, &in, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(arms, &s.Arms); err != nil {
		return nil, fmt.Errorf("decode arms: %w", err)
	}
	if err := json.Unmarshal(in, &s.Instrument); err != nil {
		return nil, fmt.Errorf("decode instrument: %w", err)
	}
	s.CreatedAt = fromNanos(created)
	return &s, nil
}

// Study returns a study by name. Errors: ENOTFOUND.
func (x *experiments) Study(ctx context.Context, name string) (*experiment.Study, error) {
	s, err := scanStudy(x.db.pool.QueryRow(ctx, `SELECT `+studyColumns+` FROM experiments WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "no study named %q", name)
	}
	if err != nil {
		return nil, fmt.Errorf("read study %s: %w", name, err)
	}
	return s, nil
}

// Studies lists every study, oldest first.
func (x *experiments) Studies(ctx context.Context) ([]experiment.Study, error) {
	rows, err := x.db.pool.Query(ctx, `SELECT `+studyColumns+` FROM experiments ORDER BY created_at, name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list studies: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (experiment.Study, error) {
		s, err := scanStudy(r)
		if err != nil {
			return experiment.Study{}, err
		}
		return *s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list studies: %w", err)
	}
	return out, nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Enroll adds a participant in the arm assign picks, creating their user
// with the arm's memory mode for every attribute ("*") in the same
// transaction, so a participant never talks to the agent in the wrong
// mode. The transaction locks the study's row before it counts the arms,
// so enrolments in one study, from any number of processes, take turns:
// each one's counts include every enrolment before it (READ COMMITTED
// reads them afresh once the lock is granted), and Balanced keeps the arms
// balanced across processes as it does in one. Errors: EINVALID for a bad
// tenant, ENOTFOUND for an unknown study.
func (x *experiments) Enroll(ctx context.Context, study, tenant string, assign func(experiment.Study, map[string]int) experiment.Arm) (*experiment.Participant, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	id := "p" + randomHex(6)
	sc, err := checkScope(memento.Scope{Tenant: tenant, User: "study-" + id})
	if err != nil {
		return nil, err
	}
	var p *experiment.Participant
	err = x.db.userTx(ctx, sc, func(tx pgx.Tx) error {
		p = nil
		s, err := scanStudy(tx.QueryRow(ctx, `SELECT `+studyColumns+` FROM experiments WHERE name = $1 FOR UPDATE`, study))
		if errors.Is(err, pgx.ErrNoRows) {
			return memento.Errorf(memento.ENOTFOUND, "no study named %q", study)
		} else if err != nil {
			return err
		}
		counts := map[string]int{}
		var seq int64
		rows, err := tx.Query(ctx, `SELECT arm, count(*), max(seq) FROM experiment_participants WHERE experiment = $1 GROUP BY arm`, study)
		if err != nil {
			return err
		}
		for rows.Next() {
			var arm string
			var n, last int64
			if err := rows.Scan(&arm, &n, &last); err != nil {
				rows.Close()
				return err
			}
			counts[arm] = int(n)
			seq = max(seq, last)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		arm := assign(*s, counts)
		if _, ok := s.Arm(arm.Name); !ok {
			return memento.Errorf(memento.EINTERNAL, "assignment picked arm %q, which study %s does not have", arm.Name, study)
		}
		p = &experiment.Participant{ID: id, Study: study, Arm: arm.Name, Mode: arm.Mode,
			User: sc.User, Thread: "t-" + randomHex(6), Stage: experiment.StageDemographics, ConsentedAt: x.db.now()}
		if _, err := x.db.ensureUser(ctx, tx, sc); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO memory_modes (tenant_id, user_id, attribute, mode) VALUES ($1, $2, '*', $3)
			ON CONFLICT (tenant_id, user_id, attribute) DO UPDATE SET mode = excluded.mode`, sc.Tenant, sc.User, arm.Mode); err != nil {
			return fmt.Errorf("set memory mode: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO experiment_participants
			(experiment, id, seq, arm, mode, tenant_id, user_id, thread_id, stage, consented_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			study, p.ID, seq+1, p.Arm, p.Mode, sc.Tenant, p.User, p.Thread, p.Stage, nanos(p.ConsentedAt))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enroll in study %s: %w", study, err)
	}
	return p, nil
}

// participantColumns are a participant's columns and the count of their
// own messages in the conversation.
const participantColumns = `p.id, p.experiment, p.arm, p.mode, p.user_id, p.thread_id, p.stage, p.demographics, p.answers, p.consented_at, p.completed_at,
	(SELECT count(*) FROM messages m WHERE m.tenant_id = p.tenant_id AND m.user_id = p.user_id AND m.thread_id = p.thread_id AND m.role = 'user')`

// scanParticipant decodes a row of participantColumns.
func scanParticipant(r pgx.Row) (*experiment.Participant, error) {
	var p experiment.Participant
	var demo, answers []byte
	var consented int64
	var completed *int64
	if err := r.Scan(&p.ID, &p.Study, &p.Arm, &p.Mode, &p.User, &p.Thread, &p.Stage, &demo, &answers, &consented, &completed, &p.Messages); err != nil {
		return nil, err
	}
	if demo != nil {
		p.Demographics = &experiment.Demographics{}
		if err := json.Unmarshal(demo, p.Demographics); err != nil {
			return nil, fmt.Errorf("decode demographics of %s: %w", p.ID, err)
		}
	}
	if answers != nil {
		if err := json.Unmarshal(answers, &p.Answers); err != nil {
			return nil, fmt.Errorf("decode answers of %s: %w", p.ID, err)
		}
	}
	p.ConsentedAt = fromNanos(consented)
	if completed != nil {
		t := fromNanos(*completed)
		p.CompletedAt = &t
	}
	return &p, nil
}

// Participant returns one participant. Errors: ENOTFOUND.
func (x *experiments) Participant(ctx context.Context, study, id string) (*experiment.Participant, error) {
	p, err := scanParticipant(x.db.pool.QueryRow(ctx, `SELECT `+participantColumns+` FROM experiment_participants p WHERE p.experiment = $1 AND p.id = $2`, study, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "study %s has no participant %q", study, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read participant %s: %w", id, err)
	}
	return p, nil
}

// advance moves a participant from stage from to stage to, setting the
// answer column col to value and completed_at when done is set, or
// explains why it cannot. The participant's row is locked first, so two
// requests for one participant cannot both pass the stage check.
func (x *experiments) advance(ctx context.Context, study, id, from, to, col string, value []byte, done bool) error {
	return pgx.BeginFunc(ctx, x.db.pool, func(tx pgx.Tx) error {
		var stage string
		err := tx.QueryRow(ctx, `SELECT stage FROM experiment_participants WHERE experiment = $1 AND id = $2 FOR UPDATE`, study, id).Scan(&stage)
		if errors.Is(err, pgx.ErrNoRows) {
			return memento.Errorf(memento.ENOTFOUND, "study %s has no participant %q", study, id)
		} else if err != nil {
			return err
		}
		if stage != from {
			return memento.Errorf(memento.ECONFLICT, "participant %s is at the %s stage, not %s", id, stage, from)
		}
		var completed *int64
		if done {
			n := nanos(x.db.now())
			completed = &n
		}
		_, err = tx.Exec(ctx, `UPDATE experiment_participants SET `+col+` = $1, stage = $2, completed_at = coalesce($3, completed_at)
			WHERE experiment = $4 AND id = $5`, string(value), to, completed, study, id)
		return err
	})
}

// SaveDemographics records the demographics and moves the participant to
// the conversation. Errors: EINVALID, ENOTFOUND, ECONFLICT when the
// participant is past that stage.
func (x *experiments) SaveDemographics(ctx context.Context, study, id string, d experiment.Demographics) (*experiment.Participant, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("save demographics of %s: %w", id, err)
	}
	if err := x.advance(ctx, study, id, experiment.StageDemographics, experiment.StageConversation, "demographics", b, false); err != nil {
		return nil, fmt.Errorf("save demographics of %s: %w", id, err)
	}
	return x.Participant(ctx, study, id)
}

// SaveAnswers records the questionnaire, checked against the study's
// instrument, and ends the participation. Errors: EINVALID, ENOTFOUND,
// ECONFLICT when the participant has not reached the conversation or has
// answered already.
func (x *experiments) SaveAnswers(ctx context.Context, study, id string, answers []int) (*experiment.Participant, error) {
	s, err := x.Study(ctx, study)
	if err != nil {
		return nil, err
	}
	if err := s.Instrument.CheckAnswers(answers); err != nil {
		return nil, err
	}
	b, err := json.Marshal(answers)
	if err != nil {
		return nil, fmt.Errorf("save answers of %s: %w", id, err)
	}
	if err := x.advance(ctx, study, id, experiment.StageConversation, experiment.StageDone, "answers", b, true); err != nil {
		return nil, fmt.Errorf("save answers of %s: %w", id, err)
	}
	return x.Participant(ctx, study, id)
}

// Participants lists a study's participants in order of enrolment.
// Errors: ENOTFOUND.
func (x *experiments) Participants(ctx context.Context, study string) ([]experiment.Participant, error) {
	if _, err := x.Study(ctx, study); err != nil {
		return nil, err
	}
	rows, err := x.db.pool.Query(ctx, `SELECT `+participantColumns+` FROM experiment_participants p WHERE p.experiment = $1 ORDER BY p.seq`, study)
	if err != nil {
		return nil, fmt.Errorf("list participants of %s: %w", study, err)
	}
	out, err := collect(rows, func(r pgx.Rows) (experiment.Participant, error) {
		p, err := scanParticipant(r)
		if err != nil {
			return experiment.Participant{}, err
		}
		return *p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list participants of %s: %w", study, err)
	}
	return out, nil
}
