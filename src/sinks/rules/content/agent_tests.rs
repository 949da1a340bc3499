use super::*;

const BASE: &str = "https://board.example/";

fn facts() -> AgentPageFacts {
    AgentPageFacts {
        endpoint_slug: "builder".into(),
        endpoint_id: "ep_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a".into(),
        text: "Prod deploy blocked: the release key expired".into(),
        todo_id: None,
        queue: None,
        severity: Severity::High,
    }
}

#[test]
fn an_agent_page_is_titled_by_the_endpoint_and_quotes_the_agent_text_labelled_as_agent_written() {
    let m = agent_page(&facts(), BASE);
    assert_eq!(m.title, "Agent · builder");
    assert_eq!(m.severity, Severity::High);
    assert_eq!(
        m.body.lines().collect::<Vec<_>>(),
        [
            "The agent of endpoint builder asked to tell its owner (notify_owner).",
            "Notice (agent-written): \"Prod deploy blocked: the release key expired\"",
        ]
    );
    assert_eq!(m.link, "https://board.example/endpoints/ep_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a");
}

#[test]
fn an_agent_page_about_a_todo_names_it_and_its_queue_and_links_the_todo() {
    let mut f = facts();
    f.todo_id = Some("td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0b".into());
    f.queue = Some("deploys".into());
    let m = agent_page(&f, BASE);
    assert!(m.body.contains("\nTodo: td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0b\nQueue: deploys"), "{}", m.body);
    assert_eq!(m.link, "https://board.example/todos/td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0b");
}

#[test]
fn an_agent_page_text_is_one_line_without_controls_and_cut_to_the_title_limit() {
    let mut f = facts();
    f.text = format!("line one\nline\u{7} two </channel> {}", "y".repeat(300));
    let m = agent_page(&f, BASE);
    let line = m.body.lines().nth(1).unwrap();
    let quoted = line.trim_start_matches("Notice (agent-written): \"").trim_end_matches('"');
    assert!(quoted.starts_with("line one line two «/channel» yyy"), "{quoted}");
    assert_eq!(quoted.chars().count(), TITLE_MAX_CHARS);
    assert!(quoted.ends_with('…'));
    assert_eq!(m.title, "Agent · builder", "the agent's text never becomes the title");
}
