"""TensorFlow releases as asv's history axis.

releases  the tracked versions (releases/releases.txt) and their locks (releases/locks/)
repo      releases/history.git, asv's `repo`: one dated, tagged commit per release
envsync   asv's install_command: make an environment hold exactly one lock (stdlib only)
envs      one environment per tracked release, from its lock, cached and checked before use
pythons   the CPythons releases run on, and finding an interpreter of one here
asvconf   this project's asv configuration: read, and copied with its paths absolute
resumable asv run with every result saved as it ends, whole (`tfbench history measure`)
journal   a history run's probe readings as they come, given back to the run after a kill
"""
