//! Fair across waiting agents: one todo wakes one agent, the one that has waited
//! longest; the others keep waiting and get the next todos in turn.

use super::{WAKEUPS, answered, metric, spawn, wait_for_waiters, wait_on_any};

#[actix_web::test]
async fn one_todo_goes_to_the_longest_waiting_agent_and_the_next_waits_on_for_the_next_todo() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let first = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;
    let second = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 2).await;

    let one = app.create_todo(&ep, "inbox", "one").await;
    let answer = answered(first).await;
    assert_eq!(answer.todo(), Some(one.to_string().as_str()), "the first to wait gets it: {:?}", answer.body);
    // The second was never woken (no herd) and is still waiting.
    wait_for_waiters(&app.base, 1).await;
    assert_eq!(metric(&app.base, WAKEUPS).await, 1, "one todo, one wake-up");
    assert!(!second.is_finished());

    let two = app.create_todo(&ep, "inbox", "two").await;
    let answer = answered(second).await;
    assert_eq!(answer.todo(), Some(two.to_string().as_str()), "{:?}", answer.body);
    assert_eq!(metric(&app.base, WAKEUPS).await, 2);
}

#[actix_web::test]
async fn a_burst_of_todos_wakes_as_many_waiters_and_each_gets_one() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let mut waiting = Vec::new();
    for n in 1..=3 {
        waiting.push(wait_on_any(&app.base, &ep, 30));
        wait_for_waiters(&app.base, n).await;
    }
    let mut made = Vec::new();
    for n in 0..3 {
        made.push(app.create_todo(&ep, "inbox", &format!("t{n}")).await.to_string());
    }
    let mut got = Vec::new();
    for w in waiting {
        let answer = answered(w).await;
        got.push(answer.todo().unwrap_or_else(|| panic!("empty: {:?}", answer.body)).to_owned());
    }
    got.sort();
    made.sort();
    assert_eq!(got, made, "each todo claimed once, each waiter served");
}
