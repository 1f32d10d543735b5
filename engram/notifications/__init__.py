"""Notifications: signed webhooks that tell an application its memory changed, without carrying
anyone's words (docs/notifications.md).

- :mod:`.owed` — what the sink writes: memory events in, deliveries owed out, in the caller's
  transaction (the sink is one of a log follower's, ``engram.projections.notifying``);
- :mod:`.formed` — ``project.formed_through`` owed when a watermark moves;
- :mod:`.queue` — deliveries claimed (``SKIP LOCKED`` leases), settled, listed, retried, dropped
  for a forgotten principal;
- :mod:`.notifier` — the sender loop; :mod:`.sending`, :mod:`.transport`, :mod:`.signing`,
  :mod:`.outcomes` — one attempt, the HTTP request, the Standard Webhooks signature, retries;
- :mod:`.destinations` — where an endpoint may point, checked at registration and at every send;
- :mod:`.endpoints`, :mod:`.vault` — endpoints per project and their secrets, wrapped by the KEK.
"""

from engram.notifications.owed import SINK, MemoryRecord, record_owed
from engram.notifications.queue import delivery_freshness
from engram.notifications.queue import forget_principal as drop_principal_deliveries

__all__ = [
    "SINK",
    "MemoryRecord",
    "delivery_freshness",
    "drop_principal_deliveries",
    "record_owed",
]
