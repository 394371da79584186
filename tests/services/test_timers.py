"""The timer service's schedules, on a real nats-server."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import nats

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.families import fold_of
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.store import MemoryStore
from athenaeum.services.views.read_models import ReadModelStore
from athenaeum.services.timers.service import TimerService


async def test_a_deadline_past_the_end_of_message_schedules_is_never_scheduled(store_env, tmp_path: Path) -> None:
    # Set, it would fire at once and be set again without end: the start-up sweep meets it.
    app = AthenaeumApplication(env=store_env)
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    nc = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    try:
        with ThreadPoolExecutor(1) as workers:
            timers = TimerService(nc, CommandHandler(MemoryStore(fold_of)), app, store, workers,
                                  stream=store_env["ATHENAEUM_STREAM"])
            await nc.jetstream().add_stream(name=timers.stream, subjects=[f"{timers.stream}.>"], allow_msg_schedules=True)
            await timers.schedule("quorum", "0000BEEF", datetime(2263, 1, 1, tzinfo=timezone.utc))
            await timers.schedule("quorum", "0000CAFE", datetime(2200, 1, 1, tzinfo=timezone.utc))
            info = await nc.jetstream().stream_info(timers.stream)
            assert info.state.messages == 1  # only the one before the end
    finally:
        await nc.close()
        store.close()
        app.close()
