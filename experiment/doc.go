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
package experiment
