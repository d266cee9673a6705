"""`tfbench bisect --nightlies`: from "this release is worse" to the nightly build, and the
commits, that changed it.

policy  the bisection over builds, on any backend (tested on a fake one)
builds  tf-nightly builds between two releases, an environment for each, their commits
"""
