"""Engram in the agent frameworks people already use, each behind an optional extra:
``engram[langchain]`` (:mod:`.langchain`), ``engram[langgraph]`` (:mod:`.langgraph`) and
``engram[agents]`` (:mod:`.agents`, the OpenAI Agents SDK).

Every adapter talks to the HTTP API through :mod:`engram.client` with one token and acts only
for the principal that token names (it asks ``/v1/whoami`` whom it is); nothing else of Engram
imports this package, so the core never needs a framework (import-linter contracts).
"""
