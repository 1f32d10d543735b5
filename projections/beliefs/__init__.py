"""The beliefs wing: the belief projector (a consumer of ``engram.claims``) and what it writes —
beliefs, evidence, refusals, the run audit, the claims history, the memory-event outbox — plus
forgetting and the projection's digest. It may use the messages wing's public face (hiding a
deleted belief's messages); no other wing reaches into its modules."""
