"""A child process kept for as long as a task of its parent's loop runs.

``engram worker`` makes the message vectors in a process of its own (``engram embedder``) so the
embedding model's CPU does not share formation's interpreter; the user still starts one command.
:func:`keep_child` is that task: it starts the child, starts it again if it exits (after
:data:`RESTART_AFTER_S`, logged), and when the task is cancelled — the worker stopping — asks
it to stop (SIGTERM: the child stops between fetches) and waits for it, killing it after
:data:`STOP_WITHIN_S`. On Linux the child is also sent SIGTERM if the parent dies without
stopping it (``PR_SET_PDEATHSIG``), so a killed worker leaves no embedder behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import signal
import sys
from collections.abc import Mapping, Sequence

import structlog

log = structlog.get_logger("engram.worker")

RESTART_AFTER_S = 5.0
"""How long a child that exited waits before it is started again (a crash loop is slowed)."""
STOP_WITHIN_S = 20.0
"""How long a child is given to stop after SIGTERM before it is killed."""
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: be sent SIGTERM when the parent dies (Linux; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


async def stop_child(child: asyncio.subprocess.Process) -> int:
    """SIGTERM, then SIGKILL after :data:`STOP_WITHIN_S`; the child's exit status."""
    if child.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            child.terminate()
        try:
            return await asyncio.wait_for(child.wait(), STOP_WITHIN_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
    return await child.wait()


async def keep_child(argv: Sequence[str], *, env: Mapping[str, str], name: str) -> None:
    """Run ``argv`` (with ``env``) until cancelled, restarting it whenever it exits; stop it on
    cancellation (see the module's docstring)."""
    while True:
        child = await asyncio.create_subprocess_exec(
            *argv, env=dict(env), preexec_fn=_die_with_parent
        )
        log.info("child.started", child=name, pid=child.pid)
        try:
            status = await child.wait()
        except asyncio.CancelledError:
            status = await asyncio.shield(stop_child(child))
            log.info("child.stopped", child=name, pid=child.pid, status=status)
            raise
        log.warning(
            "child.exited", child=name, pid=child.pid, status=status, restart_in_s=RESTART_AFTER_S
        )
        await asyncio.sleep(RESTART_AFTER_S)
