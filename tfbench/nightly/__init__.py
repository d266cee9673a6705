"""`tfbench bisect --nightlies`: from "this release is worse" to the nightly build, and the
commits, that changed it.

policy  the bisection over builds, on any backend (tested on a fake one)
builds  tf-nightly builds between two releases, an environment for each, their commits
run     a bisection for real: each build in its environment, the target in fresh processes
repro   a standalone reproducer of a target, for a report filed upstream
upstream  a report ready to file with TensorFlow, from a kept bisection
sentinels  what the nightly watch reads on every build: the footprint, a point a family
series  a machine's nightly history: one file per build the watch read
watch   the nightly watch: every build read the day it is published, steps named
"""
