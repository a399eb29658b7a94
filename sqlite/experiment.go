package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/experiment"
)

// Experiments is the store of studies and their participants
// (experiment.Store) over the DB's handle: one service type per
// aggregate, so the DB itself does not grow more methods.
type Experiments struct{ db *DB }

// Experiments returns the study store, an *Experiments. It returns the
// interface so that its signature is that of postgres.DB.Experiments, and
// the engine opens studies on either store alike.
func (db *DB) Experiments() experiment.Store { return &Experiments{db: db} }

var _ experiment.Store = (*Experiments)(nil)

// CreateStudy stores a new study. Errors: EINVALID, ECONFLICT.
func (x *Experiments) CreateStudy(ctx context.Context, s experiment.Study) (*experiment.Study, error) {
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
	err = x.db.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO experiments (name, arms, instrument, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			s.Name, string(arms), string(in), nanos(s.CreatedAt))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memento.Errorf(memento.ECONFLICT, "a study named %q exists already", s.Name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create study %s: %w", s.Name, err)
	}
	return &s, nil
}

func scanStudy(r rowScanner) (*experiment.Study, error) {
	var s experiment.Study
	var arms, in string
	var created int64
	if err := r.Scan(&s.Name, &arms, &in, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(arms), &s.Arms); err != nil {
		return nil, fmt.Errorf("decode arms: %w", err)
	}
	if err := json.Unmarshal([]byte(in), &s.Instrument); err != nil {
		return nil, fmt.Errorf("decode instrument: %w", err)
	}
	s.CreatedAt = fromNanos(created)
	return &s, nil
}

// Study returns a study by name. Errors: ENOTFOUND.
func (x *Experiments) Study(ctx context.Context, name string) (*experiment.Study, error) {
	s, err := scanStudy(x.db.read.QueryRowContext(ctx, `SELECT name, arms, instrument, created_at FROM experiments WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "no study named %q", name)
	}
	if err != nil {
		return nil, fmt.Errorf("read study %s: %w", name, err)
	}
	return s, nil
}

// Studies lists every study, oldest first.
func (x *Experiments) Studies(ctx context.Context) ([]experiment.Study, error) {
	rows, err := x.db.read.QueryContext(ctx, `SELECT name, arms, instrument, created_at FROM experiments ORDER BY created_at, name`)
	if err != nil {
		return nil, fmt.Errorf("list studies: %w", err)
	}
	defer rows.Close()
	var out []experiment.Study
	for rows.Next() {
		s, err := scanStudy(rows)
		if err != nil {
			return nil, fmt.Errorf("list studies: %w", err)
		}
		out = append(out, *s)
	}
	return out, rows.Err()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Enroll adds a participant in the arm assign picks, creating their user
// with the arm's memory mode for every attribute ("*") in the same
// transaction, so a participant never talks to the agent in the wrong
// mode. The write transaction serialises enrolments, so the arm counts
// assign sees are exact. Errors: ENOTFOUND.
func (x *Experiments) Enroll(ctx context.Context, study, tenant string, assign func(experiment.Study, map[string]int) experiment.Arm) (*experiment.Participant, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	var p *experiment.Participant
	err := x.db.writeTx(ctx, func(tx *sql.Tx) error {
		s, err := scanStudy(tx.QueryRowContext(ctx, `SELECT name, arms, instrument, created_at FROM experiments WHERE name = ?`, study))
		if errors.Is(err, sql.ErrNoRows) {
			return memento.Errorf(memento.ENOTFOUND, "no study named %q", study)
		} else if err != nil {
			return err
		}
		counts := map[string]int{}
		rows, err := tx.QueryContext(ctx, `SELECT arm, count(*) FROM experiment_participants WHERE experiment = ? GROUP BY arm`, study)
		if err != nil {
			return err
		}
		for rows.Next() {
			var arm string
			var n int
			if err := rows.Scan(&arm, &n); err != nil {
				rows.Close()
				return err
			}
			counts[arm] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		arm := assign(*s, counts)
		if _, ok := s.Arm(arm.Name); !ok {
			return memento.Errorf(memento.EINTERNAL, "assignment picked arm %q, which study %s does not have", arm.Name, study)
		}
		var seq int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM experiment_participants WHERE experiment = ?`, study).Scan(&seq); err != nil {
			return err
		}
		id := "p" + randomHex(6)
		p = &experiment.Participant{ID: id, Study: study, Arm: arm.Name, Mode: arm.Mode,
			User: "study-" + id, Thread: "t-" + randomHex(6), Stage: experiment.StageDemographics, ConsentedAt: x.db.now()}
		sc := memento.Scope{Tenant: tenant, User: p.User}
		if _, err := x.db.ensureUser(ctx, tx, sc); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO memory_modes (tenant_id, user_id, attribute, mode) VALUES (?, ?, '*', ?)
			ON CONFLICT (tenant_id, user_id, attribute) DO UPDATE SET mode = excluded.mode`, tenant, p.User, arm.Mode); err != nil {
			return fmt.Errorf("set memory mode: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO experiment_participants
			(experiment, id, seq, arm, mode, tenant_id, user_id, thread_id, stage, consented_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			study, p.ID, seq, p.Arm, p.Mode, tenant, p.User, p.Thread, p.Stage, nanos(p.ConsentedAt))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enroll in study %s: %w", study, err)
	}
	return p, nil
}

const participantColumns = `p.id, p.experiment, p.arm, p.mode, p.user_id, p.thread_id, p.stage, p.demographics, p.answers, p.consented_at, p.completed_at,
	(SELECT count(*) FROM messages m WHERE m.tenant_id = p.tenant_id AND m.user_id = p.user_id AND m.thread_id = p.thread_id AND m.role = 'user')`

func scanParticipant(r rowScanner) (*experiment.Participant, error) {
	var p experiment.Participant
	var demo, answers sql.NullString
	var consented int64
	var completed sql.NullInt64
	if err := r.Scan(&p.ID, &p.Study, &p.Arm, &p.Mode, &p.User, &p.Thread, &p.Stage, &demo, &answers, &consented, &completed, &p.Messages); err != nil {
		return nil, err
	}
	if demo.Valid {
		p.Demographics = &experiment.Demographics{}
		if err := json.Unmarshal([]byte(demo.String), p.Demographics); err != nil {
			return nil, fmt.Errorf("decode demographics of %s: %w", p.ID, err)
		}
	}
	if answers.Valid {
		if err := json.Unmarshal([]byte(answers.String), &p.Answers); err != nil {
			return nil, fmt.Errorf("decode answers of %s: %w", p.ID, err)
		}
	}
	p.ConsentedAt = fromNanos(consented)
	if completed.Valid {
		t := fromNanos(completed.Int64)
		p.CompletedAt = &t
	}
	return &p, nil
}

// Participant returns one participant. Errors: ENOTFOUND.
func (x *Experiments) Participant(ctx context.Context, study, id string) (*experiment.Participant, error) {
	// The count of the participant's messages includes those just
	// acknowledged.
	if err := x.db.intake.settleAll(ctx); err != nil {
		return nil, err
	}
	p, err := scanParticipant(x.db.read.QueryRowContext(ctx, `SELECT `+participantColumns+` FROM experiment_participants p WHERE p.experiment = ? AND p.id = ?`, study, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "study %s has no participant %q", study, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read participant %s: %w", id, err)
	}
	return p, nil
}

// advance moves a participant from stage from to stage to with the
// update's columns, or explains why it cannot.
func (x *Experiments) advance(ctx context.Context, study, id, from, set string, args ...any) error {
	return x.db.writeTx(ctx, func(tx *sql.Tx) error {
		var stage string
		err := tx.QueryRowContext(ctx, `SELECT stage FROM experiment_participants WHERE experiment = ? AND id = ?`, study, id).Scan(&stage)
		if errors.Is(err, sql.ErrNoRows) {
			return memento.Errorf(memento.ENOTFOUND, "study %s has no participant %q", study, id)
		} else if err != nil {
			return err
		}
		if stage != from {
			return memento.Errorf(memento.ECONFLICT, "participant %s is at the %s stage, not %s", id, stage, from)
		}
		_, err = tx.ExecContext(ctx, `UPDATE experiment_participants SET `+set+` WHERE experiment = ? AND id = ?`, append(args, study, id)...)
		return err
	})
}

// SaveDemographics records the demographics and moves the participant to
// the conversation. Errors: EINVALID, ENOTFOUND, ECONFLICT.
func (x *Experiments) SaveDemographics(ctx context.Context, study, id string, d experiment.Demographics) (*experiment.Participant, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(d)
	if err := x.advance(ctx, study, id, experiment.StageDemographics, `demographics = ?, stage = ?`, string(b), experiment.StageConversation); err != nil {
		return nil, fmt.Errorf("save demographics of %s: %w", id, err)
	}
	return x.Participant(ctx, study, id)
}

// SaveAnswers records the questionnaire, checked against the study's
// instrument, and ends the participation. Errors: EINVALID, ENOTFOUND,
// ECONFLICT.
func (x *Experiments) SaveAnswers(ctx context.Context, study, id string, answers []int) (*experiment.Participant, error) {
	s, err := x.Study(ctx, study)
	if err != nil {
		return nil, err
	}
	if err := s.Instrument.CheckAnswers(answers); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(answers)
	if err := x.advance(ctx, study, id, experiment.StageConversation, `answers = ?, stage = ?, completed_at = ?`,
		string(b), experiment.StageDone, nanos(x.db.now())); err != nil {
		return nil, fmt.Errorf("save answers of %s: %w", id, err)
	}
	return x.Participant(ctx, study, id)
}

// Participants lists a study's participants in order of enrolment.
// Errors: ENOTFOUND.
func (x *Experiments) Participants(ctx context.Context, study string) ([]experiment.Participant, error) {
	if _, err := x.Study(ctx, study); err != nil {
		return nil, err
	}
	if err := x.db.intake.settleAll(ctx); err != nil {
		return nil, err
	}
	rows, err := x.db.read.QueryContext(ctx, `SELECT `+participantColumns+` FROM experiment_participants p WHERE p.experiment = ? ORDER BY p.seq`, study)
	if err != nil {
		return nil, fmt.Errorf("list participants of %s: %w", study, err)
	}
	defer rows.Close()
	var out []experiment.Participant
	for rows.Next() {
		p, err := scanParticipant(rows)
		if err != nil {
			return nil, fmt.Errorf("list participants of %s: %w", study, err)
		}
		out = append(out, *p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list participants of %s: %w", study, err)
	}
	return out, nil
}
