"""The shared bottom layer: settings, logging, metrics, health endpoints, the database pool and
the formation backlog's store. Everything above may import it; it imports only ``schemas``."""
