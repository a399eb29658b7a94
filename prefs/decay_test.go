package prefs

import (
	"math"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

const day = 24 * time.Hour

func TestEffective(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var cfg DecayConfig // the defaults
	tests := []struct {
		name   string
		cfg    DecayConfig
		stored float64
		kind   string
		age    time.Duration
		want   float64
	}{
		{"fresh taste", cfg, 0.8, memento.KindTaste, 0, 0.8},
		{"taste after one half-life", cfg, 0.8, memento.KindTaste, 90 * day, 0.4},
		{"taste after two half-lives", cfg, 0.8, memento.KindTaste, 180 * day, 0.2},
		{"dislike decays towards zero too", cfg, -0.6, memento.KindTaste, 270 * day, -0.075},
		{"taste after half a half-life", cfg, 1, memento.KindTaste, 45 * day, math.Sqrt2 / 2},
		{"fact after 90 days barely fades", cfg, 1, memento.KindFact, 90 * day, math.Exp2(-90.0 / (3 * 365))},
		{"fact after three years", cfg, 0.5, memento.KindFact, 3 * 365 * day, 0.25},
		{"unknown kind fades like a taste", cfg, 1, "mood", 90 * day, 0.5},
		{"reinforced in the future", cfg, 0.7, memento.KindTaste, -10 * day, 0.7},
		{"custom taste half-life", DecayConfig{TasteHalfLife: 10 * day}, 1, memento.KindTaste, 30 * day, 0.125},
		{"custom fact half-life", DecayConfig{FactHalfLife: 365 * day}, 1, memento.KindFact, 365 * day, 0.5},
		{"decay off", DecayConfig{Off: true}, 0.9, memento.KindTaste, 1000 * day, 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.cfg.Effective(tt.stored, tt.kind, now.Add(-tt.age), now)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Effective = %.15g, want %.15g", got, tt.want)
			}
		})
	}
}

func TestEffectiveExactHalving(t *testing.T) {
	// Whole half-lives are exact powers of two, with no rounding at all.
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	got := DecayConfig{}.Effective(0.8, memento.KindTaste, now.Add(-90*day), now)
	if got != 0.4 {
		t.Errorf("Effective = %.17g, want exactly 0.4", got)
	}
}

func TestHalfLife(t *testing.T) {
	tests := []struct {
		cfg  DecayConfig
		kind string
		want time.Duration
	}{
		{DecayConfig{}, memento.KindTaste, 90 * day},
		{DecayConfig{}, memento.KindFact, 3 * 365 * day},
		{DecayConfig{}, "", 90 * day},
		{DecayConfig{TasteHalfLife: time.Hour, FactHalfLife: 2 * time.Hour}, memento.KindFact, 2 * time.Hour},
	}
	for _, tt := range tests {
		if got := tt.cfg.HalfLife(tt.kind); got != tt.want {
			t.Errorf("%+v HalfLife(%q) = %v, want %v", tt.cfg, tt.kind, got, tt.want)
		}
	}
}

func TestFaded(t *testing.T) {
	tests := []struct {
		name              string
		cfg               DecayConfig
		effective, stored float64
		want              bool
	}{
		{"strong", DecayConfig{}, 0.5, 0.8, false},
		{"below the floor", DecayConfig{}, 0.09, 0.2, true},
		{"negative below the floor", DecayConfig{}, -0.09, -0.2, true},
		{"at the floor", DecayConfig{}, 0.1, 0.2, false},
		{"below a tenth of a large weight", DecayConfig{}, 0.29, 3, true},
		{"above a tenth of a large weight", DecayConfig{}, 0.31, 3, false},
		{"zero", DecayConfig{}, 0, 0, true},
		{"custom floor", DecayConfig{FadeFloor: 0.3}, 0.25, 0.8, true},
		{"custom fraction", DecayConfig{FadeFraction: 0.5}, 0.35, 0.8, true},
		{"decay off keeps the floor", DecayConfig{Off: true}, 0.05, 0.05, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.Faded(tt.effective, tt.stored); got != tt.want {
				t.Errorf("Faded(%v, %v) = %v, want %v", tt.effective, tt.stored, got, tt.want)
			}
		})
	}
}

func TestFadedAfterDecay(t *testing.T) {
	// A full-strength taste fades after log2(10) ≈ 3.32 half-lives: still
	// there after 298 days, gone after 300.
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	cfg := DecayConfig{}
	for _, tt := range []struct {
		age  time.Duration
		want bool
	}{{298 * day, false}, {300 * day, true}} {
		eff := cfg.Effective(1, memento.KindTaste, now.Add(-tt.age), now)
		if got := cfg.Faded(eff, 1); got != tt.want {
			t.Errorf("after %v: effective %v, Faded = %v, want %v", tt.age/day, eff, got, tt.want)
		}
	}
}

func TestDecayConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  DecayConfig
		ok   bool
	}{
		{"zero value", DecayConfig{}, true},
		{"custom", DecayConfig{TasteHalfLife: day, FactHalfLife: 100 * day, FadeFloor: 0.2, FadeFraction: 0.5}, true},
		{"negative taste half-life", DecayConfig{TasteHalfLife: -day}, false},
		{"negative fact half-life", DecayConfig{FactHalfLife: -day}, false},
		{"negative floor", DecayConfig{FadeFloor: -0.1}, false},
		{"fraction of one", DecayConfig{FadeFraction: 1}, false},
		{"NaN fraction", DecayConfig{FadeFraction: math.NaN()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.ok && err != nil {
				t.Errorf("Validate = %v, want nil", err)
			}
			if !tt.ok && memento.ErrorCode(err) != memento.EINVALID {
				t.Errorf("Validate = %v, want EINVALID", err)
			}
		})
	}
}

func TestDecay(t *testing.T) {
	if got := Decay(2, 30*day, 0); got != 2 {
		t.Errorf("Decay with no half-life = %v, want 2", got)
	}
	if got := Decay(2, 10*day, 10*day); got != 1 {
		t.Errorf("Decay over one half-life = %v, want 1", got)
	}
}
