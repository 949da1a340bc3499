#!/usr/bin/env python3
"""PGQueuer on the benchmark's database, for switchboard-bench (bench/src/throughput/pgqueuer.rs).

One grid point, one round, on a freshly installed PGQueuer schema:
  1. enqueue: --jobs jobs in batches of --enq-batch over one connection, timed;
  2. the same preparation as the product's queue gets before a window: VACUUM (ANALYZE)
     of PGQueuer's tables, then CHECKPOINT;
  3. drain: --consumers QueueManagers (one connection each, opened before the clock
     starts; dequeue batches of --deq-batch; a handler that only counts) drain that
     backlog. The span runs from their start to the moment the queue table holds none
     of the jobs (PGQueuer writes completions through a buffer: a job counts once it
     has left the table, as a todo counts once its completion is answered).
Prints {"event": "start"} and {"event": "end"} around the drain (the bench marks the
cluster's CPU and WAL there), then one JSON object with the figures. The schema is
removed at the end. Needs `pgqueuer` and `asyncpg` (the bench installs them into a venv).
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


async def fresh_schema(conn: asyncpg.Connection) -> None:
    q = Queries(AsyncpgDriver(conn))
    if await q.schema_is_installed():
        await q.uninstall()
    await q.install()


async def left_in_queue(conn: asyncpg.Connection) -> int:
    q = Queries(AsyncpgDriver(conn))
    return sum(s.count for s in await q.queue_size() if s.entrypoint == ENTRYPOINT)


async def prepare(conn: asyncpg.Connection) -> list[str]:
    """VACUUM (ANALYZE) every table PGQueuer installed, then CHECKPOINT; their names."""
    tables = [
        r["t"]
        for r in await conn.fetch(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS t FROM pg_tables "
            "WHERE tablename LIKE 'pgqueuer%' ORDER BY 1"
        )
    ]
    for t in tables:
        await conn.execute(f"VACUUM (ANALYZE) {t}")
    await conn.execute("CHECKPOINT")
    return tables


async def one_drain(args: argparse.Namespace) -> dict:
    payload = b"x" * args.payload_bytes
    conn = await asyncpg.connect(args.dsn)
    try:
        await fresh_schema(conn)
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
        tables = await prepare(conn)

        processed = 0
        all_seen = asyncio.Event()
        consumer_conns = [await asyncpg.connect(args.dsn) for _ in range(args.consumers)]
        managers = []
        for c in consumer_conns:
            qm = QueueManager(Queries(AsyncpgDriver(c)))

            @qm.entrypoint(ENTRYPOINT)
            async def count(job: Job) -> None:
                nonlocal processed
                processed += 1
                if processed >= args.jobs:
                    all_seen.set()

            managers.append(qm)
        print(json.dumps({"event": "start"}), flush=True)
        started = time.perf_counter()
        tasks = [
            asyncio.create_task(
                qm.run(batch_size=args.deq_batch, mode=QueueExecutionMode.drain, dequeue_timeout=timedelta(seconds=1))
            )
            for qm in managers
        ]
        await asyncio.wait_for(all_seen.wait(), timeout=args.timeout)
        deadline = time.perf_counter() + args.timeout
        while await left_in_queue(conn) > 0:
            if time.perf_counter() > deadline:
                raise SystemExit("the queue did not empty")
            await asyncio.sleep(0.005)
        drain_s = time.perf_counter() - started
        print(json.dumps({"event": "end"}), flush=True)
        for qm in managers:
            qm.shutdown.set()
        await asyncio.wait(tasks, timeout=15)
        for c in consumer_conns:
            await c.close()
        result = {
            "enqueue_per_s": args.jobs / enqueue_s,
            "drain_per_s": processed / drain_s,
            "drain_s": drain_s,
            "processed": processed,
            "left": await left_in_queue(conn),
            "tables": tables,
        }
        await Queries(AsyncpgDriver(conn)).uninstall()
        return result
    finally:
        await conn.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--jobs", type=int, default=50_000)
    ap.add_argument("--enq-batch", type=int, default=500)
    ap.add_argument("--consumers", type=int, default=4)
    ap.add_argument("--deq-batch", type=int, default=10)
    ap.add_argument("--payload-bytes", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    print(json.dumps(await one_drain(args)), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
