#!/usr/bin/env python3
"""Agents written the way most agents are: Python, `requests`, threads in one process.

For switchboard-bench's throughput run (bench/src/throughput/python.rs). --threads
threads, each with its own requests.Session (one keep-alive connection), drain one
queue over REST:
  single: claim-next, then complete that todo with its lease token;
  batch:  claim-next with "limit", then one batch complete of what came.
With --lean every claim asks for the lean answer (`?answer=lean`: {"todos": [...]}), and
every batch complete for its lean answer (`?answer=lean`: each item's id and ok, no todo).
After --warmup seconds the measured window starts: the script prints
{"event": "start"}, --seconds later {"event": "end"}, then stops the threads and prints
one JSON object: units (todos completed in the window), seconds, p50_ms / p99_ms of a
cycle (claim + complete), errors, empty claims, and the first error.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time

import requests


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.units = 0
        self.errors = 0
        self.empty = 0
        self.first_error: str | None = None
        self.recording = False
        self.latencies: list[float] = []
        self.stop = False

    def done(self, n: int, took: float) -> None:
        with self.lock:
            self.units += n
            if self.recording:
                self.latencies.append(took)

    def failed(self, why: str) -> None:
        with self.lock:
            self.errors += 1
            if self.first_error is None:
                self.first_error = why


def claimed(answer: dict, lean: bool) -> list[tuple[str, str]]:
    """(id, lease_token) of every todo a claim answered."""
    if lean:
        if "todos" not in answer:
            raise RuntimeError("the lean answer has no `todos`: the server has no lean answer")
        return [(t["id"], t["lease_token"]) for t in answer["todos"]]
    if "claims" in answer:
        return [(c["todo"]["id"], c["lease_token"]) for c in answer["claims"]]
    if answer.get("todo"):
        return [(answer["todo"]["id"], answer["lease_token"])]
    return []


def agent(args: argparse.Namespace, tally: Tally) -> None:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {args.token}"
    todos = f"{args.base}/api/v1/agent/todos"
    claim_url = f"{todos}/claim-next" + ("?answer=lean" if args.lean else "")
    body: dict = {"queue": args.queue}
    if args.mode == "batch":
        body["limit"] = args.limit
    while not tally.stop:
        started = time.perf_counter()
        try:
            r = session.post(claim_url, json=body, timeout=60)
            if r.status_code != 200:
                raise RuntimeError(f"claim-next answered {r.status_code}: {r.text[:200]}")
            got = claimed(r.json(), args.lean)
            if not got:
                with tally.lock:
                    tally.empty += 1
                time.sleep(0.01)
                continue
            if args.mode == "batch":
                items = [{"id": i, "lease_token": t} for i, t in got]
                r = session.post(f"{todos}/complete" + ("?answer=lean" if args.lean else ""), json={"items": items}, timeout=60)
                if r.status_code != 200:
                    raise RuntimeError(f"batch complete answered {r.status_code}: {r.text[:200]}")
                bad = [x for x in r.json()["results"] if not x.get("ok")]
                if bad:
                    raise RuntimeError(f"batch complete: an item failed: {bad[0]}")
            else:
                todo_id, token = got[0]
                r = session.post(f"{todos}/{todo_id}/complete", json={"lease_token": token}, timeout=60)
                if r.status_code != 200:
                    raise RuntimeError(f"complete answered {r.status_code}: {r.text[:200]}")
            tally.done(len(got), time.perf_counter() - started)
        except Exception as e:  # a failed cycle is counted and reported, not fatal
            tally.failed(str(e))
            time.sleep(0.01)


def quantile(v: list[float], q: float) -> float:
    if not v:
        return 0.0
    v = sorted(v)
    return v[min(int(len(v) * q), len(v) - 1)] * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the server, http://127.0.0.1:PORT")
    ap.add_argument("--token", required=True, help="the agent's bearer token")
    ap.add_argument("--queue", default="work")
    ap.add_argument("--mode", choices=["single", "batch"], default="single")
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--lean", action="store_true")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()

    tally = Tally()
    threads = [threading.Thread(target=agent, args=(args, tally), daemon=True) for _ in range(args.threads)]
    for t in threads:
        t.start()
    time.sleep(args.warmup)
    with tally.lock:
        tally.recording = True
        from_units, from_at = tally.units, time.perf_counter()
    print(json.dumps({"event": "start"}), flush=True)
    time.sleep(args.seconds)
    with tally.lock:
        tally.recording = False
        to_units, to_at = tally.units, time.perf_counter()
    print(json.dumps({"event": "end"}), flush=True)
    tally.stop = True
    for t in threads:
        t.join(timeout=120)
    print(
        json.dumps(
            {
                "units": to_units - from_units,
                "seconds": to_at - from_at,
                "p50_ms": quantile(tally.latencies, 0.5),
                "p99_ms": quantile(tally.latencies, 0.99),
                "errors": tally.errors,
                "empty": tally.empty,
                "first_error": tally.first_error,
            }
        ),
        flush=True,
    )
    sys.exit(0)


if __name__ == "__main__":
    main()
