"""What faust itself costs per record on this machine: the formation worker's app and topics
with a trivial agent that sends each record's value to the claims topic (through the producer
send the pipeline uses) and acknowledges the record once Kafka has acknowledged the send — the
least a formation agent must do.

bench/throughput.py starts this as a subprocess beside bench/framework_worker.py: the gap
between the two is what Engram's pipeline adds (validation, backlog, lanes, ordering, serialising
a batch); this figure is the floor that no change inside the pipeline can go below.

    python bench/faust_floor.py   (Kafka settings from the environment)
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any, cast

import faust

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engram.infra.logs import configure_logging  # noqa: E402
from engram.infra.settings import load_settings  # noqa: E402
from engram.streams.app import EngramStreams, declare_app, run_worker  # noqa: E402


def register_forwarding_agent(streams: EngramStreams) -> None:
    async def forward(stream: faust.StreamT[bytes]) -> None:
        send = await streams.producer_send(streams.settings.kafka.claims_topic)
        async for event in cast(Any, stream).noack().events():
            sent = await send(key=b"k", value=event.message.value)
            sent.add_done_callback(partial(_ack, event))

    streams.app.agent(streams.episodes, name="engram.formation")(forward)


def _ack(event: Any, _: object) -> None:
    event.ack()


def main() -> None:
    configure_logging("warning")
    streams = declare_app(load_settings())
    register_forwarding_agent(streams)
    run_worker(streams, loglevel="warning")


if __name__ == "__main__":
    main()
