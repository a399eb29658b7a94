package experiment

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
)

// Study is a between-subjects experiment.
type Study struct {
	Name       string     `json:"name"`
	Arms       []Arm      `json:"arms"`
	Instrument Instrument `json:"instrument"`
	CreatedAt  time.Time  `json:"createdAt"`
}

// Arm returns the arm of that name.
func (s Study) Arm(name string) (Arm, bool) {
	for _, a := range s.Arms {
		if a.Name == name {
			return a, true
		}
	}
	return Arm{}, false
}

// Validate checks a study before it is stored.
func (s Study) Validate() error {
	if !nameRE.MatchString(s.Name) {
		return memento.Errorf(memento.EINVALID, "study name %q must be 1 to 64 letters, digits, '.', '_' or '-'", s.Name)
	}
	if err := checkArms(s.Arms); err != nil {
		return err
	}
	for _, a := range s.Arms {
		if err := a.studyOnly(); err != nil {
			return err
		}
	}
	return s.Instrument.Validate()
}

// NewStudy is a study with the default instrument unless one is given.
func NewStudy(name string, arms []Arm, in *Instrument) (Study, error) {
	s := Study{Name: name, Arms: arms}
	if in != nil {
		s.Instrument = *in
	} else {
		d, err := defaultInstrument()
		if err != nil {
			return Study{}, err
		}
		s.Instrument = d
	}
	return s, s.Validate()
}

// Stages of a participant, in order.
const (
	StageDemographics = "demographics" // consented, demographics not yet given
	StageConversation = "conversation" // talking to the agent; the questionnaire follows
	StageDone         = "done"         // questionnaire answered
)

// Demographics are what a participant says about themselves.
type Demographics struct {
	// Gender is one of Genders.
	Gender string `json:"gender"`
	Age    int    `json:"age"`
	// Familiarity with language models, 1 (not at all) to 7 (very).
	Familiarity int `json:"familiarity"`
}

// Genders are the answers the demographics form offers.
var Genders = []string{"female", "male", "non-binary", "prefer not to say"}

// Age bounds of participants.
const (
	MinAge = 18
	MaxAge = 120
)

// Validate checks the answers.
func (d Demographics) Validate() error {
	if !slices.Contains(Genders, d.Gender) {
		return memento.Errorf(memento.EINVALID, "gender must be one of %s, got %q", strings.Join(Genders, ", "), d.Gender)
	}
	if d.Age < MinAge || d.Age > MaxAge {
		return memento.Errorf(memento.EINVALID, "age must be %d to %d, got %d", MinAge, MaxAge, d.Age)
	}
	if d.Familiarity < 1 || d.Familiarity > 7 {
		return memento.Errorf(memento.EINVALID, "familiarity with language models must be 1 to 7, got %d", d.Familiarity)
	}
	return nil
}

// Participant is one person in a study. User is the Memento user their
// conversation runs as; it says nothing about the arm.
type Participant struct {
	ID           string        `json:"id"`
	Study        string        `json:"study"`
	Arm          string        `json:"arm"`
	Mode         string        `json:"mode"`
	User         string        `json:"user"`
	Thread       string        `json:"thread"`
	Stage        string        `json:"stage"`
	Demographics *Demographics `json:"demographics,omitempty"`
	// Answers are the raw questionnaire values in item order, nil until
	// the questionnaire is done.
	Answers     []int      `json:"answers,omitempty"`
	ConsentedAt time.Time  `json:"consentedAt"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	// Messages counts the participant's own messages in the conversation;
	// export fills it from the message log.
	Messages int `json:"messages"`
}

// Store keeps studies and their participants.
type Store interface {
	// CreateStudy stores a new study. Errors: EINVALID, ECONFLICT when the
	// name is taken.
	CreateStudy(ctx context.Context, s Study) (*Study, error)
	// Study returns a study by name. Errors: ENOTFOUND.
	Study(ctx context.Context, name string) (*Study, error)
	// Studies lists every study, oldest first.
	Studies(ctx context.Context) ([]Study, error)
	// Enroll adds a consenting participant to a study, in the arm that
	// assign picks from the current arm counts, and creates their user
	// (in tenant) with the arm's memory mode for every attribute, in one
	// transaction. Errors: ENOTFOUND for an unknown study.
	Enroll(ctx context.Context, study, tenant string, assign func(s Study, counts map[string]int) Arm) (*Participant, error)
	// Participant returns one participant. Errors: ENOTFOUND.
	Participant(ctx context.Context, study, id string) (*Participant, error)
	// SaveDemographics records the demographics and moves the participant
	// to the conversation. Errors: EINVALID, ENOTFOUND, ECONFLICT when the
	// participant is past that stage.
	SaveDemographics(ctx context.Context, study, id string, d Demographics) (*Participant, error)
	// SaveAnswers records the questionnaire and ends the participation.
	// Errors: EINVALID, ENOTFOUND, ECONFLICT when the participant has not
	// reached the conversation or has answered already.
	SaveAnswers(ctx context.Context, study, id string, answers []int) (*Participant, error)
	// Participants lists a study's participants in order of enrolment.
	// Errors: ENOTFOUND.
	Participants(ctx context.Context, study string) ([]Participant, error)
}

// Balanced returns an assignment function for Store.Enroll that keeps the
// arms balanced: it picks uniformly at random among the arms with the
// fewest participants so far, so no arm is ever more than one ahead, and
// with a number of participants divisible by the arms every arm gets the
// same count. Within each round of len(arms) enrolments the order is a
// random permutation (permuted blocks of the arms' size). rnd may be nil
// for a random source seeded by the system.
func Balanced(rnd *rand.Rand) func(s Study, counts map[string]int) Arm {
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	var mu sync.Mutex
	return func(s Study, counts map[string]int) Arm {
		mu.Lock()
		defer mu.Unlock()
		least := -1
		var pool []Arm
		for _, a := range s.Arms {
			switch c := counts[a.Name]; {
			case least < 0 || c < least:
				least, pool = c, []Arm{a}
			case c == least:
				pool = append(pool, a)
			}
		}
		return pool[rnd.IntN(len(pool))]
	}
}
