package experiment

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// Arm is one condition of a study or a simulation: a name participants
// never see, the memory mode their user gets for every attribute, and the
// further memory settings the arm changes. The zero value of every setting
// is the engine's own, so an arm that names only a mode compares memory
// modes and nothing else.
type Arm struct {
	Name string `json:"name"`
	Mode string `json:"mode"`
	// Decay is how fast the arm's preference weights fade: "" for the
	// engine's setting (a taste half-life of 90 days), DecayOff, or a
	// taste half-life as a Go duration ("720h0m0s"). The engine decays
	// preferences only (package prefs): attribute memories, semantic or
	// episodic, never fade.
	Decay string `json:"decay,omitempty"`
	// Frozen arms are a simulation baseline: the agent hears the first
	// session's statements and none of the later changes of taste, so
	// its memory is never told what changed.
	Frozen bool `json:"frozen,omitempty"`
}

// ModeNone is the simulation baseline without long-term memory: each
// session the agent meets the user as a stranger, so what a memory adds
// can be measured against it.
const ModeNone = "none"

// DecayOff is the Arm.Decay value that turns preference decay off.
const DecayOff = "off"

// Bounds of an arm's taste half-life: shorter would forget within a
// conversation, longer is no decay in any simulation.
const (
	minHalfLife = time.Hour
	maxHalfLife = 100 * 365 * 24 * time.Hour
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ParseArms reads an arm list such as "semantic,episodic". Each entry is
// [name=]mode{+option}: the mode is semantic, episodic or none (the
// simulation's no-memory baseline), and the options are decay=off,
// decay=DURATION (a taste half-life such as 30d or 720h) and frozen (the
// simulation's never-told baseline). Without a name an arm is named after
// its spelling with '+' and '=' read as '-' ("episodic+decay=30d" is
// "episodic-decay-30d"), so several arms of one mode need no names.
// Errors: EINVALID, naming the arm and what is wrong with it.
func ParseArms(spec string) ([]Arm, error) {
	var arms []Arm
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, err := parseArm(part)
		if err != nil {
			return nil, err
		}
		arms = append(arms, a)
	}
	return arms, checkArms(arms)
}

// parseArm reads one arm of ParseArms.
func parseArm(part string) (Arm, error) {
	name, body, named := strings.Cut(part, "=")
	// "episodic+decay=30d" has an '=' but no name: a name never holds '+'.
	if !named || strings.Contains(name, "+") {
		name, body = "", part
	}
	fields := strings.Split(body, "+")
	a := Arm{Name: strings.TrimSpace(name), Mode: strings.TrimSpace(fields[0])}
	label := a.Name
	if label == "" {
		label = part
	}
	for _, opt := range fields[1:] {
		opt = strings.TrimSpace(opt)
		key, value, _ := strings.Cut(opt, "=")
		switch key {
		case "frozen":
			if value != "" {
				return Arm{}, memento.Errorf(memento.EINVALID, "arm %q: frozen takes no value, got %q", label, opt)
			}
			a.Frozen = true
		case "decay":
			d, err := parseDecay(value)
			if err != nil {
				return Arm{}, memento.Errorf(memento.EINVALID, "arm %q: %s", label, memento.ErrorMessage(err))
			}
			a.Decay = d
		default:
			return Arm{}, memento.Errorf(memento.EINVALID, "arm %q: unknown setting %q; an arm is [name=]mode{+option}, the options decay=off, decay=DURATION (such as 30d) and frozen", label, opt)
		}
	}
	if a.Name == "" {
		a.Name = strings.NewReplacer("+", "-", "=", "-", " ", "").Replace(part)
	}
	return a, nil
}

// parseDecay reads the value of a decay option: off, a Go duration or a
// whole number of days ("30d"), returned as Arm.Decay spells it.
func parseDecay(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", memento.Errorf(memento.EINVALID, "decay needs a value: decay=off, or a taste half-life such as decay=30d (the engine's default is 90d)")
	}
	if v == DecayOff {
		return DecayOff, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return "", memento.Errorf(memento.EINVALID, "decay=%s: days must be a whole number, such as decay=30d", v)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return "", memento.Errorf(memento.EINVALID, "decay=%s: want off, a number of days (30d) or a duration (720h)", v)
		}
	}
	if d < minHalfLife || d > maxHalfLife {
		return "", memento.Errorf(memento.EINVALID, "decay=%s: the half-life must be from %s to 100 years", v, minHalfLife)
	}
	return d.String(), nil
}

// HalfLife returns the arm's taste half-life and whether decay is off;
// a zero half-life with decay on means the engine's default.
func (a Arm) HalfLife() (halfLife time.Duration, off bool) {
	switch a.Decay {
	case "":
		return 0, false
	case DecayOff:
		return 0, true
	}
	d, err := time.ParseDuration(a.Decay)
	if err != nil {
		return 0, false // checkArms refuses such an arm
	}
	return d, false
}

// Baseline reports whether the arm is one of the simulation's baselines
// rather than a memory setting under test.
func (a Arm) Baseline() bool { return a.Mode == ModeNone || a.Frozen }

// checkArms validates an arm list, for studies and simulations alike.
func checkArms(arms []Arm) error {
	if len(arms) < 2 {
		return memento.Errorf(memento.EINVALID, "a study needs at least two arms, got %d", len(arms))
	}
	seen := map[string]bool{}
	for _, a := range arms {
		if !nameRE.MatchString(a.Name) {
			return memento.Errorf(memento.EINVALID, "arm name %q must be 1 to 64 letters, digits, '.', '_' or '-'", a.Name)
		}
		if seen[a.Name] {
			return memento.Errorf(memento.EINVALID, "arm %q appears twice", a.Name)
		}
		seen[a.Name] = true
		if !memento.ValidMode(a.Mode) && a.Mode != ModeNone {
			return memento.Errorf(memento.EINVALID, "arm %q: mode must be %s, %s or %s (no long-term memory), got %q", a.Name, memento.ModeSemantic, memento.ModeEpisodic, ModeNone, a.Mode)
		}
		if a.Mode == ModeNone && (a.Frozen || a.Decay != "") {
			return memento.Errorf(memento.EINVALID, "arm %q: mode none keeps no memory, so it has nothing to freeze or decay", a.Name)
		}
		if a.Decay != "" && a.Decay != DecayOff {
			if d, err := time.ParseDuration(a.Decay); err != nil || d < minHalfLife || d > maxHalfLife {
				return memento.Errorf(memento.EINVALID, "arm %q: decay %q must be off or a half-life from %s to 100 years", a.Name, a.Decay, minHalfLife)
			}
		}
	}
	return nil
}

// studyOnly refuses the settings a web study cannot apply. A participant's
// user gets the arm's memory mode at enrolment; the server's preference
// decay is one setting for every user, and the baselines withhold memory
// or what the user says, which a study of real people must not do.
func (a Arm) studyOnly() error {
	switch {
	case a.Mode == ModeNone:
		return memento.Errorf(memento.EINVALID, "arm %q: mode none (no long-term memory) is a simulation baseline; a study's arms are %s or %s", a.Name, memento.ModeSemantic, memento.ModeEpisodic)
	case a.Frozen:
		return memento.Errorf(memento.EINVALID, "arm %q: frozen is a simulation baseline (memory told only the first session); use it with experiment simulate", a.Name)
	case a.Decay != "":
		return memento.Errorf(memento.EINVALID, "arm %q: decay cannot differ between a study's arms: the server's preference decay is one setting for every user; per-arm decay runs in experiment simulate", a.Name)
	}
	return nil
}
