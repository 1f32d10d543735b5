"""The platform every process stands on: the one settings object, structured logs, the
Prometheus registry, the loopback health server, the PostgreSQL pool and its outage retry.

It knows nothing of memory: no formation, no beliefs, no generations. Everything above may
import it; it imports no other package of Engram's."""
