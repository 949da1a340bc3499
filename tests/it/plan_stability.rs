//! The claim cycle's plans do not depend on fresh statistics: on a queue analyzed while
//! it was small that then received 200 000 todos with no ANALYZE (a burst that
//! autovacuum's ANALYZE has not caught up with, which on a busy database can take
//! minutes), every statement of the claim cycle (single and batched claim-next, on a
//! queue or any, the group commit's claim, single and batched complete) is planned
//! exactly as after an ANALYZE, both ways PostgreSQL may plan a prepared statement
//! (custom, for the values at hand; generic, which a long-lived prepared statement
//! settles on). A control query shows the burst does move a plan that depends on the
//! statistics, so the comparison is a real one.

use switchboard::db::statement;

use crate::harness::{TestApp, connect};

/// A claim-cycle statement (by its registered name) and the values it is explained
/// with: `{ep}` the endpoint, `{ids}` 100 pending todos' ids, `{hashes}` 100 hashes.
const CYCLE: [(&str, &str); 8] = [
    ("switchboard::store::todos::claim::NEXT_ON_QUEUE", "'{ep}', 'q', 300, '\\x00'::bytea, NULL, false"),
    ("switchboard::store::todos::claim::NEXT_ON_ANY_QUEUE", "'{ep}', NULL, 300, '\\x00'::bytea, NULL, false"),
    ("switchboard::store::todos::batch::claim::NEXT_BATCH_ON_QUEUE", "'{ep}', 'q', 300, {hashes}, NULL, false, 100"),
    (
        "switchboard::store::todos::batch::claim::NEXT_BATCH_ON_ANY_QUEUE",
        "'{ep}', NULL, 300, {hashes}, NULL, false, 100",
    ),
    (
        "switchboard::store::todos::batch::each::EACH_ON_QUEUE",
        "'{ep}', 'q', array_fill(300, ARRAY[16]), {hashes}, array_fill(NULL::text, ARRAY[16]), \
         array_fill(false, ARRAY[16]), 16",
    ),
    ("switchboard::store::todos::finish::COMPLETE_OPENED_ON_ROW", "{id}, '{ep}', NULL, NULL, NULL, false, NULL"),
    (
        "switchboard::store::todos::batch::complete::COMPLETE_BATCH",
        "{ids}, '{ep}', array_fill(NULL::jsonb, ARRAY[100]), array_fill(NULL::bytea, ARRAY[100]), \
         array_fill(NULL::text, ARRAY[100]), array_fill(false, ARRAY[100]), array_fill(NULL::text, ARRAY[100])",
    ),
    (
        "switchboard::store::todos::batch::each::COMPLETE_EACH",
        "{ids}, '{ep}', array_fill(NULL::jsonb, ARRAY[100]), array_fill(NULL::bytea, ARRAY[100]), \
         array_fill(NULL::text, ARRAY[100]), array_fill(false, ARRAY[100]), array_fill(NULL::text, ARRAY[100])",
    ),
];

/// A query whose plan depends on the statistics: stale, it expects most of the
/// endpoint's rows to be done and joins them by hashing the whole table; analyzed, it
/// knows almost none are and looks each up by key.
const CONTROL: &str =
    "SELECT count(*) FROM todos a JOIN todos b ON b.id = a.id WHERE a.endpoint_id = '{ep}' AND a.state = 'done'";

/// Every plan of the claim cycle, and the control's, in the form the table's statistics
/// give now: `(what, plan without costs)`.
async fn plans(client: &tokio_postgres::Client, values: &dyn Fn(&str) -> String) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, (name, args)) in CYCLE.iter().enumerate() {
        let text = statement::by_name(name).unwrap_or_else(|| panic!("{name} is not registered")).text();
        client.batch_execute(&format!("PREPARE cycle_{i} AS {text}")).await.unwrap();
        for mode in ["force_custom_plan", "force_generic_plan"] {
            client.batch_execute(&format!("SET plan_cache_mode = {mode}")).await.unwrap();
            let plan = explain(client, &format!("EXECUTE cycle_{i} ({})", values(args))).await;
            out.push((format!("{name} ({mode})"), plan));
        }
        client.batch_execute(&format!("DEALLOCATE cycle_{i}; RESET plan_cache_mode")).await.unwrap();
    }
    out.push(("control".into(), explain(client, &values(CONTROL)).await));
    out
}

async fn explain(client: &tokio_postgres::Client, what: &str) -> String {
    let rows = client.simple_query(&format!("EXPLAIN (COSTS OFF) {what}")).await.unwrap();
    let plan = rows
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    name_init_plan_outputs(&plan)
}

/// `plan` with each InitPlan's output (`InitPlan 5 (returns $6)`, and every `$6` after
/// it) renamed `$init1`, `$init2`, … in order: PostgreSQL numbers them among its own
/// parameters, and the number can move while the plan stays the same.
fn name_init_plan_outputs(plan: &str) -> String {
    let mut named = plan.to_owned();
    let (mut n, mut from) = (0, 0);
    while let Some(at) = named[from..].find("(returns $").map(|at| at + from) {
        let start = at + "(returns ".len();
        from = start;
        let digits = named[start + 1..].chars().take_while(char::is_ascii_digit).count();
        let param = named[start..start + 1 + digits].to_owned();
        n += 1;
        let name = format!("$init{n}");
        named.replace_range(start..start + param.len(), &name);
        named = replace_param(&named, &param, &name);
    }
    named
}

/// `text` with the parameter `param` (`$6`, not `$60`) replaced by `name`.
fn replace_param(text: &str, param: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(param) {
        let after = &rest[at + param.len()..];
        out.push_str(&rest[..at]);
        out.push_str(if after.starts_with(|c: char| c.is_ascii_digit()) { param } else { name });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[test]
fn init_plan_outputs_are_named_in_order_and_other_parameters_kept() {
    let plan = "InitPlan 5 (returns $6)\n  Cond: (id = ANY ($6)) AND x = $60 AND q = $1";
    assert_eq!(
        name_init_plan_outputs(plan),
        "InitPlan 5 (returns $init1)\n  Cond: (id = ANY ($init1)) AND x = $60 AND q = $1"
    );
}

#[actix_web::test]
async fn the_claim_cycle_is_planned_alike_on_a_queue_that_grew_by_200_000_todos_since_its_last_analyze() {
    let (app, o, ep) = TestApp::with_worker().await;
    let insert = |rows: u32, pending_every: u32, offset: u32| {
        format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, completed_at, created_at) \
             SELECT gen_random_uuid(), '{ep}', '{sc}', 'q', 't', \
                    CASE WHEN n % {pending_every} = 0 THEN 'pending' ELSE 'done' END, \
                    CASE WHEN n % {pending_every} = 0 THEN NULL ELSE now() END, \
                    now() - interval '1 day' + (n + {offset}) * interval '1 ms' \
             FROM generate_series(1, {rows}) n",
            ep = ep.id.0,
            sc = o.scope.0
        )
    };
    // A small queue that has worked a little, analyzed as such.
    app.db.exec(&insert(300, 10, 0)).await;
    app.db.exec("VACUUM ANALYZE todos, todo_attempts").await;
    // The burst: 200 000 pending todos, and no ANALYZE.
    app.db.exec(&insert(200_000, 1, 1_000)).await;

    let client = connect(&app.db).await;
    let ids = client
        .simple_query(
            "SELECT 'ARRAY[' || string_agg(quote_literal(id::text) || '::uuid', ',') || ']' FROM \
                       (SELECT id FROM todos WHERE state = 'pending' ORDER BY created_at LIMIT 100) x",
        )
        .await
        .unwrap();
    let ids = match &ids[1] {
        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).unwrap().to_owned(),
        other => panic!("{other:?}"),
    };
    let first = ids.trim_start_matches("ARRAY[").split(',').next().unwrap().to_owned();
    let values = |args: &str| {
        args.replace("{ep}", &ep.id.0.to_string())
            .replace("{ids}", &ids)
            .replace("{id}", &first)
            .replace("{hashes}", "array_fill('\\x00'::bytea, ARRAY[100])")
    };

    let stale = plans(&client, &values).await;
    client.batch_execute("ANALYZE todos").await.unwrap();
    let analyzed = plans(&client, &values).await;

    let (control_stale, control_analyzed) = (&stale.last().unwrap().1, &analyzed.last().unwrap().1);
    assert_ne!(control_stale, control_analyzed, "the burst should move a plan that reads the statistics");
    for ((what, before), (_, after)) in stale.iter().zip(&analyzed).filter(|(s, _)| s.0 != "control") {
        assert_eq!(before, after, "{what} is planned differently before the ANALYZE (left) and after (right)");
        assert!(!after.contains("Seq Scan on todos"), "{what} reads the whole table:\n{after}");
        if what.contains("COMPLETE_EACH") {
            // The batch complete relies on this plan to lock its rows in id order (two
            // batches racing over the same todos then never deadlock): the sorted items
            // drive a nested loop that updates each row found by its key.
            let lines: Vec<&str> = after.lines().map(str::trim).collect();
            let (nested, sort, by_key) = (
                lines.iter().position(|l| l.contains("Nested Loop")),
                lines.iter().position(|l| l.starts_with("Sort Key:") && l.contains("id")),
                lines.iter().position(|l| l.contains("Index Scan using todos_pkey on todos t")),
            );
            assert!(
                matches!((nested, sort, by_key), (Some(n), Some(s), Some(k)) if n < s && s < k),
                "{what}: not the sorted items driving a nested loop over the key:\n{after}"
            );
        }
        if what.contains("claim::") || what.contains("EACH_ON") {
            assert!(after.contains("todos_claim_"), "{what} finds its candidates off a claim index:\n{after}");
        }
    }
}
