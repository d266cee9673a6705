"""The measuring instrument, bottom to top.

meter       RSS now and its peak over a region (the kernel's VmHWM, or sampling)
growth      growth per iteration (Theil-Sen) and the leak verdict, on a series of readings
collector   Python's collector around the window: kept after full collections, the garbage
            they free, the sawtooth a user's loop draws
steps       the step loop in one process: warm-up, baseline, iterations -> a Reading
devices     CPU/GPU as a parameter: usable here or a skip, allocator peaks
record      the measured record every layer above shares (child, CLI, benchmarks)
supervisor  the parent: forks one child per measurement, bounds its memory and time
child       the child: primes its memory, runs the steps, writes its record
heap        the heap in use at the allocator (mallinfo2, a preloaded counter) and its peak
heapcount   that counter, in C: built once per Python, preloaded into a measuring child
spawn       every process tfbench starts: its own group, a watchdog of memory and time
parents     one measuring parent for a whole run's probes, shared through a broker
timer       a step's time read in blocks: the time reader's measuring side (tfbench.pairs)

tfbench.targets sits above this package and the scenario catalog: it turns a scenario id or
a user's file::function into a step for the child.
"""
