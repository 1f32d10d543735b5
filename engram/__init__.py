"""Engram: durable, provenance-linked memory formed from an agent's conversations."""
