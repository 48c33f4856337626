"""`make bench`: timings and memory of every method, written to bench/results.json and bench/RESULTS.md.
Not part of the installed package."""
