"""The model arm: proposals from an OpenAI-compatible model, plugged into the formation stage's
port (:class:`engram.streams.formation_stage.ModelArm`).

- :mod:`.extractor` — one call to the model: the prompt out, a strictly decoded reply back
  (:mod:`.prompt` renders the prompt, :mod:`.reply` decodes the answer, :mod:`.context` is the
  window of earlier messages beside the one asked about);
- :mod:`.attempts` — bounded retries of one call, each attempt kept without content;
- :mod:`.receipts` — the arm's tables: answers kept as receipts, the attempts' audit, the
  session messages of the context window;
- :mod:`.arm` — the arm as the stage runs it: context, receipt, attempts, fallback;
- :mod:`.evidence` — the evaluation artifact a model arm needs before it may form anything.

Nothing here is imported at start-up: ``engram.streams.wiring`` builds the arm when a policy asks for
a model, and only then loads the ``openai`` client (~1 s).
"""
