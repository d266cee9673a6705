"""Comparing two releases by re-measuring them (`tfbench gate OLD NEW`).

readings  every reading of each grid point on one side (asv samples, probe repeats), from
          asv results directories
rules     what counts as a change (floors: tfbench.floors)
session   the round policy: phases over one state, measuring through a backend
asvruns   the backend: asv runs in each release's environment; run_gate, the whole command
confirm   probe points measured again in a release's environment (run by asvruns)
kept      a whole-suite gate run kept for the report
shards    the gate in shards: a deterministic share of the grid on each runner, then joined
shifts    common-mode shifts: a metric moved alike at most points of a pair has one cause
calibration  the time reader's calibration per CPU: an A/A gate and a planted one, kept
"""
