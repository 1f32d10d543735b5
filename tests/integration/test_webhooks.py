"""Notifications on real PostgreSQL and a real HTTP receiver on loopback: owed by the sink,
claimed with SKIP LOCKED leases, signed (the standardwebhooks library verifies), retried,
parked, disabled, dropped for a forgotten principal."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import UTC, datetime

import asyncpg
import pytest

from engram.infra.settings import WebhooksSettings
from engram.notifications import drop_principal_deliveries
from engram.notifications.endpoints import rotate_secret
from engram.notifications.payloads import delivery_id
from engram.notifications.queue import list_deliveries, retry_deliveries
from engram.schemas.common import principal_hash
from engram.schemas.memory_events import PrincipalErased
from tests.support.conditions import wait_until
from tests.support.notifying import (
    LOOPBACK,
    add_endpoint,
    changed,
    new_vault,
    notifying,
    owe,
    states,
)
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.integration


async def test_owed_notifications_arrive_signed_in_log_order_with_stable_ids(
    pool: asyncpg.Pool,
) -> None:
    vault = new_vault()
    receiver = await Receiver().start()
    try:
        endpoint, secret = await add_endpoint(pool, vault, receiver.url)
        receiver.secret = secret
        events = [changed(n) for n in range(5)]
        assert await owe(pool, events) == 5
        async with notifying(pool, vault):
            await wait_until(lambda: len(receiver.received) >= 5, timeout_s=20, what="5 arrive")
        assert len(receiver.verified()) == 5
        assert [r.payload["data"]["event_id"] for r in receiver.received] == [
            str(e.event_id) for e in events
        ]
        assert [r.webhook_id for r in receiver.received] == [
            str(delivery_id(endpoint.endpoint_id, e.event_id)) for e in events
        ]
        assert await states(pool) == {"delivered": 5}
    finally:
        await receiver.stop()


async def test_two_notifiers_deliver_each_notification_exactly_once(
    pool: asyncpg.Pool, fresh_database: str
) -> None:
    vault = new_vault()
    receivers = [await Receiver().start() for _ in range(3)]
    other = await asyncpg.create_pool(fresh_database, min_size=1, max_size=4)
    try:
        for receiver in receivers:
            receiver.secret = (await add_endpoint(pool, vault, receiver.url))[1]
        assert await owe(pool, [changed(n) for n in range(20)]) == 60
        async with notifying(pool, vault), notifying(other, vault):
            await wait_until(
                lambda: sum(len(r.received) for r in receivers) >= 60,
                timeout_s=60,
                what="60 deliveries",
            )
            await wait_until(
                lambda: _delivered(pool, 60), timeout_s=20, what="every delivery recorded"
            )
        ids = Counter(r.webhook_id for receiver in receivers for r in receiver.verified())
        assert len(ids) == 60 and set(ids.values()) == {1}
        attempts = await pool.fetchval("SELECT sum(attempts)::int FROM webhook_delivery")
        assert attempts == 60
    finally:
        await other.close()
        for receiver in receivers:
            await receiver.stop()


async def _delivered(pool: asyncpg.Pool, n: int) -> bool:
    return (await states(pool)).get("delivered") == n


async def test_a_410_parks_the_delivery_at_once_listed_as_failed_and_the_next_goes_on(
    pool: asyncpg.Pool,
) -> None:
    vault = new_vault()
    receiver = Receiver(answer=lambda r: 410 if len(receiver.received) == 1 else 204)
    await receiver.start()
    try:
        _endpoint, receiver.secret = await add_endpoint(pool, vault, receiver.url)
        await owe(pool, [changed(1), changed(2)])
        async with notifying(pool, vault):
            await wait_until(lambda: _settled(pool), timeout_s=20, what="one parked, one delivered")
        parked = await list_deliveries(pool, tenant="t", failed=True)
        assert [(d.state, d.attempts, d.last_status) for d in parked] == [("parked", 1, 410)]
        assert parked[0].event_id == changed(1).event_id
        assert await list_deliveries(pool, tenant="other", failed=True) == []
        # retried by the operator, it is due again with fresh attempts and delivered
        assert await retry_deliveries(pool, tenant="t", delivery_ids=[parked[0].id]) == 1
        async with notifying(pool, vault):
            await wait_until(lambda: _delivered(pool, 2), timeout_s=20, what="retried")
        assert len(receiver.received) == 3
    finally:
        await receiver.stop()


async def _settled(pool: asyncpg.Pool) -> bool:
    return await states(pool) == {"parked": 1, "delivered": 1}


async def test_a_receiver_down_for_30_seconds_gets_the_delivery_once_it_is_back(
    pool: asyncpg.Pool,
) -> None:
    """The real schedule (5 s doubling): refused at 0, ~5 and ~15 s, delivered at ~35 s."""
    vault = new_vault()
    receiver = Receiver()
    receiver.port = (await receiver.start()).port
    await receiver.stop()  # down: nothing listens on the port
    receiver.secret = (await add_endpoint(pool, vault, receiver.url))[1]
    await owe(pool, [changed(1)])
    down_since = time.monotonic()
    async with notifying(pool, vault, WebhooksSettings(allow_private=True, poll_s=0.1)):
        await wait_until(
            lambda: _attempts_at_least(pool, 2), timeout_s=30, what="two refused attempts"
        )
        await wait_until(
            lambda: time.monotonic() - down_since >= 30, timeout_s=35, what="30 s down"
        )
        assert receiver.received == []
        row = await pool.fetchrow("SELECT state, last_status, last_error FROM webhook_delivery")
        assert row["state"] == "pending" and row["last_status"] is None
        assert "no answer" in row["last_error"]
        await receiver.start()
        await wait_until(lambda: _delivered(pool, 1), timeout_s=60, what="delivered after")
    assert len(receiver.verified()) == 1


async def _attempts_at_least(pool: asyncpg.Pool, n: int) -> bool:
    return int(await pool.fetchval("SELECT max(attempts) FROM webhook_delivery") or 0) >= n


async def test_an_endpoint_that_keeps_failing_is_disabled_with_its_reason(
    pool: asyncpg.Pool,
) -> None:
    vault = new_vault()
    receiver = await Receiver(status=503).start()
    settings = LOOPBACK.model_copy(update={"disable_after_failures": 2, "disable_after_s": 0.0})
    try:
        _endpoint, _ = await add_endpoint(pool, vault, receiver.url)
        await owe(pool, [changed(1)])
        async with notifying(pool, vault, settings):
            await wait_until(lambda: _attempts_at_least(pool, 1), timeout_s=20, what="1st")
            await pool.execute("UPDATE webhook_delivery SET due_at = now()")  # time passes
            await wait_until(lambda: _disabled(pool), timeout_s=20, what="disabled")
        reason = await pool.fetchval("SELECT disabled_reason FROM webhook_endpoint")
        assert reason.startswith("2 consecutive failed attempts since") and "HTTP 503" in reason
        # a disabled endpoint is owed nothing new and sent nothing
        assert await owe(pool, [changed(2)], first_offset=1) == 0
    finally:
        await receiver.stop()


async def _disabled(pool: asyncpg.Pool) -> bool:
    return bool(await pool.fetchval("SELECT disabled_at IS NOT NULL FROM webhook_endpoint"))


async def test_a_destination_refused_at_send_time_parks_and_disables(pool: asyncpg.Pool) -> None:
    """Registered while loopback was allowed, sent when it is not: the check runs again on
    the address each attempt connects to."""
    vault = new_vault()
    receiver = await Receiver().start()
    try:
        await add_endpoint(pool, vault, receiver.url)
        await owe(pool, [changed(1)])
        strict = WebhooksSettings(poll_s=0.05, timeout_s=2.0, lease_s=3.0)
        async with notifying(pool, vault, strict):
            await wait_until(lambda: _disabled(pool), timeout_s=20, what="disabled")
        assert receiver.received == []
        assert await states(pool) == {"parked": 1}
        reason = await pool.fetchval("SELECT disabled_reason FROM webhook_endpoint")
        assert "127.0.0.1 is a loopback address" in reason
    finally:
        await receiver.stop()


@pytest.mark.parametrize("address", ["::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::"])
async def test_an_ipv6_form_of_loopback_is_refused_at_send_time_as_loopback(
    pool: asyncpg.Pool, address: str
) -> None:
    """IPv4-compatible, NAT64 and 6to4 spellings of 127.0.0.1 are judged as 127.0.0.1 by the
    check before each attempt, not as the public IPv6 addresses Python's ``is_global`` calls
    them (registered while loopback was allowed, as an endpoint older than the rule would be)."""
    vault = new_vault()
    await add_endpoint(pool, vault, f"https://[{address}]:9/hook")
    await owe(pool, [changed(1)])
    strict = WebhooksSettings(poll_s=0.05, timeout_s=2.0, lease_s=3.0)
    async with notifying(pool, vault, strict):
        await wait_until(lambda: _disabled(pool), timeout_s=20, what="disabled")
    assert await states(pool) == {"parked": 1}
    reason = await pool.fetchval("SELECT disabled_reason FROM webhook_endpoint")
    assert f"{address} is an IPv6 form of 127.0.0.1, which is a loopback address" in reason


async def test_forgetting_drops_what_was_owed_and_the_tenant_is_told_once(
    pool: asyncpg.Pool,
) -> None:
    vault = new_vault()
    garden, _ = await add_endpoint(pool, vault, "http://127.0.0.1:9/a")
    atlas, _ = await add_endpoint(pool, vault, "http://127.0.0.1:9/b", project="atlas")
    await owe(pool, [changed(1), changed(2, principal="bo")])
    async with pool.acquire() as conn, conn.transaction():
        await drop_principal_deliveries(conn, "t", "ana")
        await conn.execute(
            "INSERT INTO principal_tombstone (principal_hash, event_id, forgotten_at) "
            "VALUES ($1, $2, now())",
            principal_hash("t", "ana"),
            uuid.UUID(int=99),
        )
    assert await pool.fetchval("SELECT array_agg(principal) FROM webhook_delivery") == ["bo"]
    erased = PrincipalErased(
        event_id=uuid.UUID(int=98),
        tenant="t",
        principal_hash=principal_hash("t", "ana"),
        episode_id=uuid.UUID(int=99),
        occurred_at=datetime.now(UTC),
    )
    # what was still on the topic behind the forgetting is not owed; the notice is, to both
    assert await owe(pool, [changed(3), erased], first_offset=2) == 2
    rows = await pool.fetch(
        "SELECT endpoint_id, event_type FROM webhook_delivery WHERE principal IS NULL"
    )
    assert {(r["endpoint_id"], r["event_type"]) for r in rows} == {
        (garden.endpoint_id, "principal.forgotten"),
        (atlas.endpoint_id, "principal.forgotten"),
    }


async def test_after_a_rotation_both_secrets_verify_until_the_overlap_ends(
    pool: asyncpg.Pool,
) -> None:
    vault = new_vault()
    old, new = Receiver(), Receiver()
    await old.start()
    try:
        endpoint, old.secret = await add_endpoint(pool, vault, old.url)
        async with pool.acquire() as conn:
            new.secret, until = await rotate_secret(
                conn, vault, tenant="t", endpoint_id=endpoint.endpoint_id, overlap_s=3600
            )
        assert until is not None
        await owe(pool, [changed(1)])
        async with notifying(pool, vault):
            await wait_until(lambda: _delivered(pool, 1), timeout_s=20, what="delivered")
        received = old.received[0]
        assert received.verified and received.headers["webhook-signature"].count("v1,") == 2
        assert new._verify(received.body, received.headers)
        async with pool.acquire() as conn:
            _newest, until = await rotate_secret(
                conn, vault, tenant="t", endpoint_id=endpoint.endpoint_id, overlap_s=0
            )
        keys = await vault.signing_keys(pool, tenant="t", endpoint_id=endpoint.endpoint_id)
        assert len(keys) == 2  # the newest, and the one rotated away from an hour from now
    finally:
        await old.stop()


async def test_the_sink_owes_a_record_once_however_often_it_is_read(pool: asyncpg.Pool) -> None:
    vault = new_vault()
    await add_endpoint(pool, vault, "http://127.0.0.1:9/a")
    events = [changed(n) for n in range(3)]
    assert await owe(pool, events) == 3
    assert await owe(pool, events) == 0
    stored = await pool.fetchval(
        "SELECT next_offset FROM public.projector_offset WHERE projector = 'notifications'"
    )
    assert stored == 3


async def test_a_lease_that_lapsed_is_claimed_again_with_the_same_id(pool: asyncpg.Pool) -> None:
    """A sender that died mid-attempt: its lease lapses and the delivery goes again."""
    vault = new_vault()
    receiver = await Receiver().start()
    try:
        endpoint, receiver.secret = await add_endpoint(pool, vault, receiver.url)
        await owe(pool, [changed(1)])
        # a sender claims it and dies: nothing recorded but the lease
        await pool.execute(
            "UPDATE webhook_delivery SET lease = $1, leased_until = now() + interval '1 second', "
            "attempts = 1",
            uuid.uuid4(),
        )
        async with notifying(pool, vault):
            await wait_until(lambda: _delivered(pool, 1), timeout_s=20, what="sent again")
        assert [r.webhook_id for r in receiver.verified()] == [
            str(delivery_id(endpoint.endpoint_id, changed(1).event_id))
        ]
        assert await pool.fetchval("SELECT attempts FROM webhook_delivery") == 2
    finally:
        await receiver.stop()


async def test_one_endpoints_retries_hold_back_only_its_own_later_deliveries(
    pool: asyncpg.Pool,
) -> None:
    vault = new_vault()
    slow = await Receiver(status=503).start()
    fine = await Receiver().start()
    try:
        await add_endpoint(pool, vault, slow.url)
        fine.secret = (await add_endpoint(pool, vault, fine.url))[1]
        await owe(pool, [changed(n) for n in range(3)])
        async with notifying(pool, vault):
            await wait_until(
                lambda: len(fine.received) >= 3 and len(slow.received) >= 1,
                timeout_s=20,
                what="fine gets 3, slow its first",
            )
        # its first is being retried (maybe more than once on a slow machine); the rest wait
        assert len({r.webhook_id for r in slow.received}) == 1
    finally:
        await slow.stop()
        await fine.stop()
