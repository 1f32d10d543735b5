"""``engram mcp``: Engram's memory as Model Context Protocol tools for agents — ``recall``,
``remember`` and ``correct`` — over stdio or streamable HTTP, acting for the one principal whose
token it is given. It is an entry point beside the HTTP API: it reads through the same
projections and writes through the same doors (the intake for explicit memory, the corrections
service), so there is no second write path."""
