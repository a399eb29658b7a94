package prefs

import (
	"cmp"
	"math"
	"time"

	"github.com/memento-ai/memento"
)

// Default decay settings. Tastes fade in months and facts about a user (where
// they live, what they own) in years; a memory that keeps being reinforced
// never fades, because its age counts from its last reinforcement.
const (
	DefaultTasteHalfLife = 90 * 24 * time.Hour
	DefaultFactHalfLife  = 3 * 365 * 24 * time.Hour
	// DefaultFadeFloor is the effective weight below which (in absolute
	// value) a memory has faded: 0.1 is a tenth of the strongest single
	// statement ("I love ..." has strength 1).
	DefaultFadeFloor = 0.1
	// DefaultFadeFraction is the share of its stored weight below which a
	// memory has faded, whatever its size: a memory reinforced to a large
	// weight fades once it has lost nine tenths of it (about 3.3
	// half-lives).
	DefaultFadeFraction = 0.1
)

// DecayConfig says how fast preference weights fade. The effective weight
// of a preference is its stored weight × 0.5^(age / half-life), where age is
// the time since it was last reinforced and the half-life depends on its
// kind. A zero field takes its default, so the zero DecayConfig is the
// default configuration.
type DecayConfig struct {
	// TasteHalfLife is the half-life of memento.KindTaste preferences, and
	// of preferences of an unknown kind (fading fast is the safe side for a
	// memory whose nature is unclear).
	TasteHalfLife time.Duration
	// FactHalfLife is the half-life of memento.KindFact preferences.
	FactHalfLife time.Duration
	// FadeFloor and FadeFraction define Faded.
	FadeFloor    float64
	FadeFraction float64
	// Off turns decay off: effective weights equal stored weights, for
	// experiments that compare memory with and without decay.
	Off bool
}

// Validate reports a negative half-life or fade threshold, or a fade
// fraction of 1 or more (which would make every memory faded). Errors:
// EINVALID.
func (c DecayConfig) Validate() error {
	switch {
	case c.TasteHalfLife < 0:
		return memento.Errorf(memento.EINVALID, "the taste half-life must not be negative, got %s", c.TasteHalfLife)
	case c.FactHalfLife < 0:
		return memento.Errorf(memento.EINVALID, "the fact half-life must not be negative, got %s", c.FactHalfLife)
	case c.FadeFloor < 0 || math.IsNaN(c.FadeFloor):
		return memento.Errorf(memento.EINVALID, "the fade floor must not be negative, got %v", c.FadeFloor)
	case c.FadeFraction < 0 || c.FadeFraction >= 1 || math.IsNaN(c.FadeFraction):
		return memento.Errorf(memento.EINVALID, "the fade fraction must be in [0, 1), got %v", c.FadeFraction)
	}
	return nil
}

// HalfLife returns the half-life of preferences of the given kind.
func (c DecayConfig) HalfLife(kind string) time.Duration {
	if kind == memento.KindFact {
		return cmp.Or(c.FactHalfLife, DefaultFactHalfLife)
	}
	return cmp.Or(c.TasteHalfLife, DefaultTasteHalfLife)
}

// Effective returns the weight of a preference at now, given its stored
// (signed) weight, its kind and when it was last reinforced. A
// reinforcement time after now (clock skew between processes) counts as no
// age at all, so weights never grow by decay.
func (c DecayConfig) Effective(stored float64, kind string, lastReinforced, now time.Time) float64 {
	if c.Off {
		return stored
	}
	return Decay(stored, now.Sub(lastReinforced), c.HalfLife(kind))
}

// Faded reports whether a preference whose effective weight has sunk to
// effective, from stored, should no longer be used: when |effective| is
// below FadeFloor (a whisper of a preference, whatever it once was), or
// below FadeFraction of |stored| (it has lost nine tenths of its weight by
// default). Faded preferences are left out of prompts and ranking; their
// records stay, so a new statement can reinforce them. With decay Off the
// effective weight is the stored one, so only the floor can apply.
func (c DecayConfig) Faded(effective, stored float64) bool {
	floor := cmp.Or(c.FadeFloor, DefaultFadeFloor)
	return math.Abs(effective) < floor ||
		math.Abs(effective) < cmp.Or(c.FadeFraction, DefaultFadeFraction)*math.Abs(stored)
}

// Decay returns weight × 0.5^(age / halfLife). A negative age counts as
// zero; a half-life of zero or less means no decay.
func Decay(weight float64, age, halfLife time.Duration) float64 {
	if age <= 0 || halfLife <= 0 {
		return weight
	}
	return weight * math.Exp2(-float64(age)/float64(halfLife))
}
