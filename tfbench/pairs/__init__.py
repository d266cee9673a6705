"""Time read in pairs of processes, two builds' environments side by side: the reader
(timing), its measuring server (server) and its three-answer verdict (verdict). The gate
reads every `time_` point with it, and bisect compares two builds' times with it."""
