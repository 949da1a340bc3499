//! The functions and triggers the migrations leave in the database, checked against
//! checked-in text. Migrations are history: a function created in one and replaced in
//! two later ones (`switchboard_outbox_dead_letter`: 000015, 000024, 000028) is read
//! nowhere whole. `tests/it/functions/<name>.sql` holds what `pg_get_functiondef`
//! answers for each function of the `public` schema named `switchboard_…` in a freshly
//! migrated database, and `tests/it/functions/triggers.txt` what `pg_get_triggerdef`
//! answers for each trigger (table, name, timing, events, condition, function), one a
//! line. A migration that changes any of them changes these files in the same commit:
//! `SWITCHBOARD_WRITE_FUNCTIONS=1 cargo test --test it trigger_functions` rewrites them
//! from the database (read the diff before committing it).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::harness::TestDb;

/// Where the checked-in text lives.
fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/functions")
}

/// The file of the trigger list (every other file of [`dir`] is one function).
const TRIGGERS: &str = "triggers.txt";

/// Each `switchboard_…` function of `public`: name, identity arguments, definition.
/// Aggregates (`pg_get_functiondef` has no text for them) are not expected.
const FUNCTIONS: &str = "SELECT coalesce(json_agg(json_build_array(p.proname, \
     pg_get_function_identity_arguments(p.oid), pg_get_functiondef(p.oid)) \
     ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)), '[]')::text \
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace \
     AND p.proname LIKE 'switchboard\\_%' AND p.prokind IN ('f', 'p')";

/// Every trigger a migration made (not the ones behind foreign keys), by table and name;
/// one that is not simply enabled says how it is set.
const TRIGGER_LIST: &str = "SELECT pg_get_triggerdef(t.oid) \
     || CASE t.tgenabled WHEN 'O' THEN '' ELSE ' -- tgenabled = ' || t.tgenabled::text END \
     FROM pg_trigger t WHERE NOT t.tgisinternal ORDER BY t.tgrelid::regclass::text, t.tgname";

/// The functions triggers run that are not `switchboard_…` functions of `public` (and so
/// have no checked-in text).
const UNPINNED_TRIGGER_FUNCTIONS: &str = "SELECT DISTINCT t.tgfoid::regprocedure::text \
     FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid \
     WHERE NOT t.tgisinternal \
     AND NOT (p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'switchboard\\_%') ORDER BY 1";

#[actix_web::test]
async fn every_function_and_trigger_matches_its_checked_in_text() {
    let db = TestDb::new().await;
    let session = db.session().await;
    let rows: Vec<(String, String, String)> =
        serde_json::from_str(&session.lines(FUNCTIONS).await).expect("the function list is JSON");
    let mut functions = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, args, definition) in rows {
        if functions.insert(name.clone(), definition).is_some() {
            problems.push(format!(
                "{name} is overloaded (also ({args})): one file a name cannot hold both; \
                 name the new one differently"
            ));
        }
    }
    let triggers = session.lines(TRIGGER_LIST).await + "\n";
    let unpinned = session.lines(UNPINNED_TRIGGER_FUNCTIONS).await;
    if !unpinned.is_empty() {
        problems.push(format!("triggers run functions with no checked-in text: {unpinned}"));
    }

    if std::env::var_os("SWITCHBOARD_WRITE_FUNCTIONS").is_some() {
        write_all(&functions, &triggers);
    }

    let files = checked_in();
    for (name, definition) in &functions {
        match files.get(name) {
            None => {
                problems.push(format!("{name} has no tests/it/functions/{name}.sql; its definition:\n{definition}"))
            }
            Some(text) if text != definition => {
                problems
                    .push(format!("{name} differs from tests/it/functions/{name}.sql:\n{}", diff(text, definition)));
            }
            Some(_) => {}
        }
    }
    for name in files.keys().filter(|f| !functions.contains_key(*f)) {
        problems.push(format!("tests/it/functions/{name}.sql: no such function in the migrated database"));
    }
    let pinned = std::fs::read_to_string(dir().join(TRIGGERS)).unwrap_or_default();
    if pinned != triggers {
        problems.push(format!("the triggers differ from tests/it/functions/{TRIGGERS}:\n{}", diff(&pinned, &triggers)));
    }
    assert!(
        problems.is_empty(),
        "{}\n\n(a migration that changes these changes the checked-in text in the same commit: \
         SWITCHBOARD_WRITE_FUNCTIONS=1 cargo test --test it trigger_functions rewrites it)",
        problems.join("\n\n")
    );
    assert!(functions.contains_key("switchboard_outbox_dead_letter"), "the list finds the functions it is about");
}

/// Each checked-in function file by the function's name.
fn checked_in() -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir()).expect("tests/it/functions/") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "sql") {
            let name = path.file_stem().expect("a file name").to_string_lossy().into_owned();
            files.insert(name, std::fs::read_to_string(&path).expect("a readable file"));
        }
    }
    files
}

/// Rewrites the checked-in text from the database (`SWITCHBOARD_WRITE_FUNCTIONS`).
fn write_all(functions: &BTreeMap<String, String>, triggers: &str) {
    let dir = dir();
    std::fs::create_dir_all(&dir).expect("create tests/it/functions/");
    for name in checked_in().keys().filter(|f| !functions.contains_key(*f)) {
        std::fs::remove_file(dir.join(format!("{name}.sql"))).expect("remove a file of a dropped function");
    }
    for (name, definition) in functions {
        std::fs::write(dir.join(format!("{name}.sql")), definition).expect("write a function's file");
    }
    std::fs::write(dir.join(TRIGGERS), triggers).expect("write the trigger list");
}

/// A line diff of `expected` (the file) against `actual` (the database): `-` lines only
/// the file has, `+` lines only the database has, two lines of context around each
/// change and `@@ file line N` where a run of changes starts.
fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    // (sign, line of the file where it stands, text)
    let mut ops: Vec<(char, usize, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', i + 1, a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i + 1, a[i]));
            i += 1;
        } else {
            ops.push(('+', i + 1, b[j]));
            j += 1;
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') {
        ops.push(('!', a.len(), "(one ends with a newline, the other does not)"));
    }
    // Whether a change is at most two lines away from ops[k].
    let near = |k: usize| ops[k.saturating_sub(2)..(k + 3).min(ops.len())].iter().any(|op| op.0 != ' ');
    let mut out = String::new();
    let mut shown_previous = false;
    for (k, (sign, line, text)) in ops.iter().enumerate() {
        if !near(k) {
            shown_previous = false;
            continue;
        }
        if !shown_previous {
            let _ = writeln!(out, "@@ file line {line}");
        }
        let _ = writeln!(out, "{sign} {text}");
        shown_previous = true;
    }
    out
}

#[test]
fn the_diff_shows_what_changed_with_context() {
    let file = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
    let db = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\n";
    assert_eq!(diff(file, db), "@@ file line 2\n  b\n  c\n- d\n+ D\n  e\n  f\n@@ file line 11\n  k\n  l\n+ m\n");
    assert_eq!(diff("x", "x\n"), "@@ file line 1\n  x\n! (one ends with a newline, the other does not)\n");
    assert_eq!(diff("same\n", "same\n"), "");
}
