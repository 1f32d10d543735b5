"""Evaluating formation: a labeled corpus (loading cases, scoring arms), labeling sheets from real
turns, the coverage of known facts, and the commands."""
