"""Numbered SQL migrations, shipped as package data and applied in order by ``engram migrate``."""
