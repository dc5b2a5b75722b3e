"""Benchmarks (not tests): `bench/run` runs them all; each script also runs alone."""
