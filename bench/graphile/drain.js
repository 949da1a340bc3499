#!/usr/bin/env node
// Graphile Worker on the benchmark's database, for switchboard-bench
// (bench/src/throughput/graphile.rs). One concurrency, one round:
//   1. its schema migrated (runMigrations), any job left from before deleted;
//   2. --jobs no-op jobs added in bulk (graphile_worker.add_jobs, --batch per call), each
//      with a payload {"body": "xx…"} of --payload-bytes;
//   3. the same preparation as the product's queue gets before a window: VACUUM (ANALYZE)
//      of the schema's tables, then CHECKPOINT;
//   4. one run() with --concurrency, pollInterval --poll-ms, noHandleSignals, a task that
//      does nothing, on a pool of concurrency + 2 connections opened before the clock
//      starts; the span runs until every job has completed (its row deleted:
//      job:complete fires after that), which is then checked in the table.
// Prints {"event": "start"} / {"event": "end"} around the drain (the bench marks the
// cluster's CPU and WAL there), then one JSON line with the figures. Logging is off
// (NO_LOG_SUCCESS, a silent logger): Graphile at its best.
"use strict";

process.env.NO_LOG_SUCCESS = "1";
const { run, runMigrations, Logger } = require("graphile-worker");
const { Pool } = require("pg");
const { EventEmitter } = require("events");

function flag(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

async function main() {
  const dsn = flag("dsn");
  const jobs = Number(flag("jobs", "30000"));
  const batch = Number(flag("batch", "500"));
  const concurrency = Number(flag("concurrency", "16"));
  const pollInterval = Number(flag("poll-ms", "10"));
  const payloadBytes = Number(flag("payload-bytes", "200"));
  const schema = flag("schema", "graphile_worker");
  const timeoutMs = Number(flag("timeout-s", "600")) * 1000;
  if (!dsn) throw new Error("--dsn is required");

  const logger = new Logger(() => () => {});
  const pgPool = new Pool({ connectionString: dsn, max: concurrency + 2 });
  const admin = await pgPool.connect();
  try {
    await runMigrations({ pgPool, schema, logger });
    await admin.query(`delete from ${schema}._private_jobs`);
    const added = Date.now();
    for (let left = jobs; left > 0; left -= batch) {
      const n = Math.min(batch, left);
      await admin.query(
        `select ${schema}.add_jobs(array(
           select row('bench_noop', json_build_object('body', repeat('x', $2::int)),
                      null, null, null, null, null, null)::${schema}.job_spec
           from generate_series(1, $1::int)))`,
        [n, payloadBytes],
      );
    }
    const addS = (Date.now() - added) / 1000;
    const tables = (
      await admin.query(
        `select quote_ident(schemaname) || '.' || quote_ident(tablename) as t
           from pg_tables where schemaname = $1 order by 1`,
        [schema],
      )
    ).rows.map((r) => r.t);
    for (const t of tables) await admin.query(`vacuum (analyze) ${t}`);
    await admin.query("checkpoint");

    // Warm the pool: every connection open before the clock starts (the admin holds one).
    const warm = await Promise.all(Array.from({ length: concurrency + 1 }, () => pgPool.connect()));
    warm.forEach((c) => c.release());

    let completed = 0;
    let failed = 0;
    let resolveAll;
    const allDone = new Promise((r) => (resolveAll = r));
    const events = new EventEmitter();
    events.on("job:complete", ({ error }) => {
      if (error) failed += 1;
      completed += 1;
      if (completed >= jobs) resolveAll();
    });
    console.log(JSON.stringify({ event: "start" }));
    const started = process.hrtime.bigint();
    const runner = await run({
      pgPool,
      schema,
      concurrency,
      pollInterval,
      noHandleSignals: true,
      logger,
      events,
      taskList: { bench_noop: async () => {} },
    });
    const timer = setTimeout(() => resolveAll(), timeoutMs);
    await allDone;
    const drainS = Number(process.hrtime.bigint() - started) / 1e9;
    clearTimeout(timer);
    console.log(JSON.stringify({ event: "end" }));
    await runner.stop();
    const left = Number((await admin.query(`select count(*) as n from ${schema}._private_jobs`)).rows[0].n);
    console.log(
      JSON.stringify({
        add_per_s: jobs / addS,
        drain_s: drainS,
        completed: completed - failed,
        failed,
        left,
        tables,
      }),
    );
  } finally {
    admin.release();
    await pgPool.end();
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
