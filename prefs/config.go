package prefs

import (
	"cmp"
	"math"
	"strconv"
	"time"

	"github.com/memento-ai/memento"
)

// Defaults of Config.
const (
	// DefaultMergeThreshold is the cosine similarity at or above which new
	// evidence reinforces an existing memory instead of adding one. With
	// the offline embedder, spelling variants and plurals of one concept
	// ("heists" / "heist" 0.99, "strawberry" / "strawberries" 0.92) are
	// above it, while neighbouring but different concepts ("heist" /
	// "crime" 0.87, "sci-fi" / "science fiction" 0.75 before synonym
	// normalisation, "quiet keyboards" / "clicky keyboards" 0.49) stay
	// apart, to be grouped by clustering instead.
	DefaultMergeThreshold = 0.9
	// DefaultMaxWeight bounds a memory's weight in absolute value: one
	// statement gives at most 1, and repeated evidence approaches 3 ever
	// more slowly, so a much-repeated concept cannot drown all others.
	DefaultMaxWeight = 3.0
)

// Config holds the settings of the preference memory. The zero value is the
// default configuration.
type Config struct {
	// Decay says how fast weights fade (taste 90 days, fact 3 years).
	Decay DecayConfig
	// MergeThreshold is the similarity at which evidence reinforces a
	// memory (default DefaultMergeThreshold).
	MergeThreshold float64
	// MaxWeight bounds |weight| (default DefaultMaxWeight).
	MaxWeight float64
	// Eps and MinPts are DBSCAN's parameters for clustering a user's
	// memories (defaults DefaultEps and DefaultMinPts).
	Eps    float32
	MinPts int
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	c.MergeThreshold = cmp.Or(c.MergeThreshold, DefaultMergeThreshold)
	c.MaxWeight = cmp.Or(c.MaxWeight, DefaultMaxWeight)
	c.Eps = cmp.Or(c.Eps, DefaultEps)
	c.MinPts = cmp.Or(c.MinPts, DefaultMinPts)
	return c
}

// Validate reports the first setting out of range. Errors: EINVALID.
func (c Config) Validate() error {
	if err := c.Decay.Validate(); err != nil {
		return err
	}
	switch {
	case c.MergeThreshold < 0 || c.MergeThreshold > 1 || math.IsNaN(c.MergeThreshold):
		return memento.Errorf(memento.EINVALID, "the preference merge threshold must be a similarity from 0 to 1, got %v", c.MergeThreshold)
	case c.MaxWeight < 0 || math.IsNaN(c.MaxWeight) || (c.MaxWeight > 0 && c.MaxWeight < 1):
		return memento.Errorf(memento.EINVALID, "the maximum preference weight must be at least 1, got %v", c.MaxWeight)
	case c.Eps < 0 || c.Eps > 2 || c.Eps != c.Eps:
		return memento.Errorf(memento.EINVALID, "the clustering eps must be a cosine distance from 0 to 2, got %v", c.Eps)
	case c.MinPts < 0:
		return memento.Errorf(memento.EINVALID, "the clustering minPts must not be negative, got %d", c.MinPts)
	}
	return nil
}

// ApplyEnv reads the settings from MEMENTO_PREFS_* variables through
// getenv: MEMENTO_PREFS_TASTE_HALF_LIFE and MEMENTO_PREFS_FACT_HALF_LIFE
// (durations such as 2160h), MEMENTO_PREFS_MERGE_THRESHOLD,
// MEMENTO_PREFS_MAX_WEIGHT, MEMENTO_PREFS_EPS, MEMENTO_PREFS_MIN_PTS and
// MEMENTO_PREFS_DECAY=off. Errors: EINVALID naming the variable.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	dur := func(name string, dst *time.Duration) error {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "%s must be a duration such as 2160h, got %q", name, v)
			}
			*dst = d
		}
		return nil
	}
	num := func(name string, dst *float64) error {
		if v := getenv(name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "%s must be a number, got %q", name, v)
			}
			*dst = f
		}
		return nil
	}
	var eps float64
	if err := dur("MEMENTO_PREFS_TASTE_HALF_LIFE", &c.Decay.TasteHalfLife); err != nil {
		return err
	}
	if err := dur("MEMENTO_PREFS_FACT_HALF_LIFE", &c.Decay.FactHalfLife); err != nil {
		return err
	}
	if err := num("MEMENTO_PREFS_MERGE_THRESHOLD", &c.MergeThreshold); err != nil {
		return err
	}
	if err := num("MEMENTO_PREFS_MAX_WEIGHT", &c.MaxWeight); err != nil {
		return err
	}
	if err := num("MEMENTO_PREFS_EPS", &eps); err != nil {
		return err
	}
	if eps != 0 {
		c.Eps = float32(eps)
	}
	if v := getenv("MEMENTO_PREFS_MIN_PTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return memento.Errorf(memento.EINVALID, "MEMENTO_PREFS_MIN_PTS must be a whole number, got %q", v)
		}
		c.MinPts = n
	}
	switch v := getenv("MEMENTO_PREFS_DECAY"); v {
	case "":
	case "off":
		c.Decay.Off = true
	case "on":
		c.Decay.Off = false
	default:
		return memento.Errorf(memento.EINVALID, "MEMENTO_PREFS_DECAY must be on or off, got %q", v)
	}
	return c.Validate()
}
