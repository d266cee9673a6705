"""Comparing two releases by re-measuring them (`tfbench gate OLD NEW`).

readings  every reading of each grid point on one side (asv samples, probe repeats), from
          asv results directories
rules     what counts as a change: floors measured from same-release runs
session   both releases measured in one session, interleaved, through asv
"""
