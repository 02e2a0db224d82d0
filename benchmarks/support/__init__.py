"""What several benchmarks share (benchmarks/*.py import it as `support`; tests/test_benchmarks_quick.py runs
only the benchmarks themselves, the files directly in benchmarks/)."""
