// Package experiment runs between-subjects studies of Memento's memory
// modes: a study has arms (each a memory mode, such as semantic or
// episodic), participants are enrolled into arms by balanced
// randomisation without being told which, answer demographics, talk to
// the agent with their arm's memory, and fill in a questionnaire (an
// Instrument: a data file such as the Jian, Bisantz and Drury (2000) trust
// scale in instruments/).
//
// Data flows: the web study (http/experiment.go) enrols participants and
// stores their answers through a Store (sqlite/experiment.go); Export
// writes them as CSV or JSON for analysis elsewhere, and Analyze scores
// them (reverse items, mean of the items) and computes the report with
// the stats package: descriptives per arm, comparability of the arms,
// assumption checks, the two-sample tests with the one appropriate chosen,
// Cohen's d and the sample size a confirmatory study would need. Plot
// draws the score distributions and item means.
//
// Simulate runs the long-horizon study no participant could: scripted
// users (simuser.go: a latent rating function over titles that drifts and
// changes, and what they say and ask drawn from it) talk to one agent per
// arm through SimDeps, which the command wires to the real agent, store
// and pipeline on a simulated calendar (SimClock). After each session it
// reads each user's memory (stale beliefs, tokens held), assembles the
// context document of their request, and scores the agent's list against
// their current ratings (simscore.go); PlotSimulation draws the sessions.
// Arms (arm.go) set the memory mode and further memory settings, and the
// baselines (no memory, a memory never told of a change) show that the
// measures can fail.
package experiment
