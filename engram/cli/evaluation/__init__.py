"""Evaluating formation against a labeled corpus: loading cases, scoring arms, the command."""
