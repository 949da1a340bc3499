use super::*;

use Broken::*;

/// Migrations that break a rule: what each breaks and why that was accepted (the
/// README's table of migrations says what each means for an upgrade). Those up to
/// `000036` were written before the rules were checked; a later one may only take away
/// what no running release reads any more.
fn grandfathered() -> Vec<(&'static str, Vec<Broken>, &'static str)> {
    let index = |n: &str| IndexBlocksWrites(n.into());
    let scan = |n: &str| ScanUnderLock(n.into());
    vec![
        (
            "000002_webhooks",
            vec![
                NoLockTimeout,
                scan("events.webhook_id"),
                index("events_delivery_dedup"),
                scan("todos.quarantine_reason"),
            ],
            "before the rules; README: no on a large events or todos",
        ),
        (
            "000004_work_order",
            vec![NoLockTimeout, scan("todos.work_order")],
            "before the rules; README: no on a large todos",
        ),
        ("000006_payload_lz4", vec![NoLockTimeout], "SET COMPRESSION changes only the catalogue"),
        ("000007_event_attribution", vec![NoLockTimeout], "two foreign keys dropped, a brief lock"),
        (
            "000009_board_indexes",
            vec![
                index("todos_board_state_idx"),
                NoLockTimeout,
                index("todos_board_retrying_idx"),
                index("todos_dead_letters_idx"),
                index("todos_dead_letters_search_idx"),
            ],
            "before the rules; README: no on a large todos",
        ),
        ("000010_hook_change_notify", vec![NoLockTimeout], "triggers on two small tables"),
        ("000015_outbox", vec![index("sinks_scope_idx"), NoLockTimeout], "an index on the small sinks table; triggers"),
        (
            "000016_sink_budget_bounds",
            vec![NoLockTimeout, scan("sinks_budget_per_hour_check"), scan("sinks_burst_check")],
            "wider CHECKs on the small sinks table",
        ),
        ("000019_digests", vec![index("outbox_undeliverable_idx"), NoLockTimeout], "README: no on a large outbox"),
        ("000023_outbox_costs", vec![Backfill("outbox".into())], "touches only held rows of deleted sinks"),
        ("000026_outbox_direct", vec![NoLockTimeout], "a nullable column: a catalogue change"),
        ("000034_attempt_written_at_close", vec![Backfill("todos".into())], "copies only the open attempts"),
    ]
}

/// Every migration in `migrations/`: (name without the date, `up.sql`).
fn migrations() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
    let mut found: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("the migrations folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .map(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).expect("a name").to_owned();
            let short = name.splitn(4, '-').nth(3).expect("a dated name").to_owned();
            (short, std::fs::read_to_string(p.join("up.sql")).expect("up.sql"))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn every_migration_keeps_the_rules_or_is_a_known_exception() {
    let all = migrations();
    assert!(all.len() >= 36, "the migrations were found: {}", all.len());
    let known = grandfathered();
    for (name, up) in &all {
        let expected = known.iter().find(|(n, _, _)| n == name).map(|(_, b, _)| b.clone()).unwrap_or_default();
        assert_eq!(check(up), expected, "{name} breaks the README's rules for a migration under live traffic");
    }
    // An exception is history, not a way out: none after the rules were checked, except
    // taking away what no release still running reads (one release after the code that
    // read it is gone; the reason names that release).
    for (name, broken, why) in &known {
        let removal = broken.iter().all(|b| matches!(b, TakesAway(_)));
        assert!(*name <= "000036" || removal, "a new exception: {name} ({why})");
        assert!(all.iter().any(|(n, _)| n == name), "{name} is not a migration");
    }
}

#[test]
fn an_index_on_an_existing_table_is_built_concurrently() {
    let plain = "SET LOCAL lock_timeout = '5s';\nCREATE INDEX todos_x_idx ON todos (x);";
    assert_eq!(check(plain), vec![IndexBlocksWrites("todos_x_idx".into())]);
    assert_eq!(check("CREATE INDEX CONCURRENTLY IF NOT EXISTS todos_x_idx ON todos (x);"), vec![]);
    let fresh = "CREATE TABLE things (id uuid PRIMARY KEY, x int);\nCREATE UNIQUE INDEX things_x ON things (x);";
    assert_eq!(check(fresh), vec![], "a table the migration creates has no users yet");
}

#[test]
fn a_lock_on_an_existing_table_comes_after_the_lock_timeout() {
    assert_eq!(check("ALTER TABLE todos ADD COLUMN x int;"), vec![NoLockTimeout]);
    assert_eq!(check("SET LOCAL lock_timeout = '5s';\nALTER TABLE todos ADD COLUMN x int;"), vec![]);
    assert_eq!(check("CREATE TRIGGER t AFTER UPDATE ON todos FOR EACH ROW EXECUTE FUNCTION f();"), vec![NoLockTimeout]);
    assert_eq!(check("DROP INDEX todos_x_idx;"), vec![NoLockTimeout]);
    assert_eq!(check("LOCK TABLE todos IN SHARE ROW EXCLUSIVE MODE;"), vec![NoLockTimeout]);
    // SHARE UPDATE EXCLUSIVE: writes go on, so there is nothing to time out.
    assert_eq!(check("ALTER TABLE todos VALIDATE CONSTRAINT todos_valid;"), vec![]);
    assert_eq!(check("ALTER TABLE outbox SET (fillfactor = 80);"), vec![]);
}

#[test]
fn a_constraint_on_an_existing_table_is_added_not_valid() {
    let t = "SET LOCAL lock_timeout = '5s';\n";
    assert_eq!(
        check(&format!("{t}ALTER TABLE todos ADD CONSTRAINT c CHECK (x > 0);")),
        vec![ScanUnderLock("c".into())]
    );
    assert_eq!(
        check(&format!("{t}ALTER TABLE todos ADD CONSTRAINT c CHECK (x > 0) NOT VALID, DROP CONSTRAINT d;")),
        vec![]
    );
    assert_eq!(
        check(&format!(
            "{t}ALTER TABLE todos ADD CONSTRAINT a CHECK (x > 0) NOT VALID, ADD CONSTRAINT b CHECK (y > 0);"
        )),
        vec![ScanUnderLock("b".into())],
        "each action on its own"
    );
    assert_eq!(
        check(&format!("{t}ALTER TABLE todos ADD COLUMN w text CHECK (octet_length(w) <= 4096);")),
        vec![ScanUnderLock("todos.w".into())]
    );
    assert_eq!(check(&format!("{t}ALTER TABLE todos ADD COLUMN f boolean NOT NULL DEFAULT false;")), vec![]);
    assert_eq!(
        check(&format!("{t}ALTER TABLE todos ALTER COLUMN f SET NOT NULL;")),
        vec![ScanUnderLock("todos.f NOT NULL".into())]
    );
}

#[test]
fn nothing_the_previous_release_reads_is_taken_away() {
    let t = "SET LOCAL lock_timeout = '5s';\n";
    assert_eq!(check(&format!("{t}ALTER TABLE todos DROP COLUMN x;")), vec![TakesAway("column todos.x".into())]);
    assert_eq!(
        check(&format!("{t}ALTER TABLE todos ALTER COLUMN x TYPE bigint;")),
        vec![TakesAway("the type of todos.x".into())]
    );
    assert_eq!(check(&format!("{t}ALTER TABLE todos RENAME COLUMN x TO y;")).len(), 1);
    assert_eq!(check(&format!("{t}DROP TABLE IF EXISTS todos;")), vec![TakesAway("table todos".into())]);
}

#[test]
fn an_update_of_an_existing_table_is_a_backfill() {
    assert_eq!(check("UPDATE todos SET x = 1;"), vec![Backfill("todos".into())]);
    assert_eq!(check("DELETE FROM outbox WHERE true;"), vec![Backfill("outbox".into())]);
    let in_a_function = "CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  UPDATE todos SET x = 1;\n  \
                         RETURN NEW;\nEND $$;";
    assert_eq!(check(in_a_function), vec![], "a function body runs later, not in the migration");
}

#[test]
fn statements_in_an_anonymous_block_count_and_quotes_and_comments_do_not_split() {
    let hidden = "DO $$\nBEGIN\n  CREATE INDEX todos_y ON todos (y);\nEXCEPTION WHEN undefined_object THEN\n  \
                  RAISE NOTICE 'no; trgm';\nEND\n$$;";
    assert_eq!(check(hidden), vec![IndexBlocksWrites("todos_y".into()), NoLockTimeout]);
    let quoted = "-- UPDATE todos SET x = 1;\nSELECT 'UPDATE todos; DROP TABLE todos' /* ; DELETE FROM todos; */;";
    assert_eq!(check(quoted), vec![]);
    assert_eq!(statements("SELECT $tag$ a;b $tag$; SELECT 2").len(), 2);
}
