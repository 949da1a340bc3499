#!/usr/bin/env python3
"""PGQueuer on the benchmark's database, for switchboard-bench (bench/src/throughput_pgqueuer.rs).

Per round, on a freshly installed PGQueuer schema:
  1. enqueue: --jobs jobs in batches of --enq-batch over one connection, timed;
  2. drain: --consumers QueueManagers (one connection each, dequeue batch --deq-batch,
     a handler that only counts) drain that backlog, timed from their start to the
     moment every one has stopped with the queue empty.
Prints one JSON object: the rates of every round and the jobs left behind.
Needs `pgqueuer` and `asyncpg` (the bench installs them into a venv of its own).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import timedelta

import asyncpg
from pgqueuer import QueueManager
from pgqueuer.db import AsyncpgDriver
from pgqueuer.models import Job
from pgqueuer.queries import Queries
from pgqueuer.types import QueueExecutionMode

ENTRYPOINT = "bench_noop"


async def fresh_schema(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        q = Queries(AsyncpgDriver(conn))
        if await q.schema_is_installed():
            await q.uninstall()
        await q.install()
    finally:
        await conn.close()


async def left_in_queue(conn: asyncpg.Connection) -> int:
    q = Queries(AsyncpgDriver(conn))
    return sum(s.count for s in await q.queue_size() if s.entrypoint == ENTRYPOINT)


async def one_round(args: argparse.Namespace, payload: bytes) -> dict:
    await fresh_schema(args.dsn)
    conn = await asyncpg.connect(args.dsn)
    try:
        await conn.execute("CHECKPOINT")
        q = Queries(AsyncpgDriver(conn))
        started = time.perf_counter()
        left = args.jobs
        while left > 0:
            n = min(args.enq_batch, left)
            await q.enqueue([ENTRYPOINT] * n, [payload] * n, [0] * n)
            left -= n
        enqueue_s = time.perf_counter() - started
        queued = await left_in_queue(conn)
        if queued != args.jobs:
            raise SystemExit(f"enqueued {queued} jobs, expected {args.jobs}")
        await conn.execute("VACUUM ANALYZE")

        processed = 0
        consumer_conns = [await asyncpg.connect(args.dsn) for _ in range(args.consumers)]
        managers = []
        for c in consumer_conns:
            qm = QueueManager(Queries(AsyncpgDriver(c)))

            @qm.entrypoint(ENTRYPOINT)
            async def count(job: Job) -> None:
                nonlocal processed
                processed += 1

            managers.append(qm)
        started = time.perf_counter()
        tasks = [
            asyncio.create_task(
                qm.run(batch_size=args.deq_batch, mode=QueueExecutionMode.drain, dequeue_timeout=timedelta(seconds=1))
            )
            for qm in managers
        ]
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.timeout)
        drain_s = time.perf_counter() - started
        for c in consumer_conns:
            await c.close()
        return {
            "enqueue_per_s": args.jobs / enqueue_s,
            "drain_per_s": processed / drain_s,
            "processed": processed,
            "left": await left_in_queue(conn),
        }
    finally:
        await conn.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--enq-batch", type=int, default=500)
    ap.add_argument("--consumers", type=int, default=4)
    ap.add_argument("--deq-batch", type=int, default=10)
    ap.add_argument("--payload-bytes", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    payload = b"x" * args.payload_bytes
    rounds = [await one_round(args, payload) for _ in range(args.rounds)]
    # Leave nothing of PGQueuer's in the benchmark's database.
    conn = await asyncpg.connect(args.dsn)
    try:
        await Queries(AsyncpgDriver(conn)).uninstall()
    finally:
        await conn.close()
    print(json.dumps({"rounds": rounds}))


if __name__ == "__main__":
    asyncio.run(main())
