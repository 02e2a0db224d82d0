"""Gang scheduling: one pure decision module (`policy.decide`) over plain data (`model`), the trace
reader and the simulator that replays traces through it. See docs/scheduling.md."""
