"""A method a path does not serve: 405 with ``Allow`` naming every method the path serves.

Routing answers 405 from the first route whose path matches, so a path served by two routes
(``GET`` and ``DELETE /v1/beliefs/{id}``) announced only the first one's methods. This answers
from every route of the path instead. ``OPTIONS`` is not served (no CORS: the API is called by
programs, not browsers), so it is a 405 like any other method a path does not serve.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.routing import BaseRoute, Route

ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


class ServedMethods:
    """The methods each path serves, from every route that matches it."""

    def __init__(self, routes: Iterable[BaseRoute]) -> None:
        self._routes = [
            (route.path_regex, frozenset(route.methods))
            for route in routes
            if isinstance(route, Route) and route.methods
        ]

    def of(self, path: str) -> list[str]:
        served = {m for regex, methods in self._routes if regex.match(path) for m in methods}
        return sorted(served, key=lambda m: (ORDER.index(m) if m in ORDER else len(ORDER), m))

    async def refuse(self, request: Request, error: Exception) -> JSONResponse:
        """The 405 answer: ``Allow`` lists what the path serves, and so does the detail."""
        path, root = request.scope["path"], request.scope.get("root_path", "")
        served = self.of(path.removeprefix(root) if root else path)
        allow = ", ".join(served)
        return JSONResponse(
            {"detail": f"{request.method} is not served here; this path serves {allow}"},
            status_code=405,
            headers={"Allow": allow},
        )
