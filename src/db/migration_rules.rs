//! The README's rules for a new migration ("Upgrades and several replicas"), checked:
//! a migration runs while instances of the previous release keep serving, so it must not
//! hold a lock that stops their writes for longer than a catalogue change, must give up
//! rather than queue every query behind its lock request, and must not take away what
//! the previous release reads.
//!
//! The check reads each `up.sql` as text (statements split outside quotes, dollar quotes
//! and comments) and knows the statement forms the migrations use; it is a guard against
//! the usual mistakes, not a SQL parser. Tables a migration creates itself are exempt:
//! nobody else uses them yet.

/// A rule a migration's `up.sql` breaks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Broken {
    /// A statement that takes a lock on an existing table comes before any
    /// `SET [LOCAL] lock_timeout`: blocked, it would queue every query behind it.
    NoLockTimeout,
    /// An index built on an existing table without `CONCURRENTLY` blocks its writes for
    /// the build.
    IndexBlocksWrites(String),
    /// A constraint added to an existing table without `NOT VALID` (or a column added with
    /// one, or made `NOT NULL`) scans the table under ACCESS EXCLUSIVE.
    ScanUnderLock(String),
    /// A column dropped, renamed or retyped, or a table dropped or renamed: the previous
    /// release still reads it.
    TakesAway(String),
    /// An `UPDATE` or `DELETE` of an existing table: a backfill inside a migration.
    Backfill(String),
}

/// What one migration's `up.sql` breaks, in the order found (each kind of
/// [`Broken::NoLockTimeout`] reported once).
pub fn check(up_sql: &str) -> Vec<Broken> {
    let statements: Vec<String> = statements(up_sql).iter().flat_map(|s| with_do_blocks_opened(s)).collect();
    let created: Vec<String> = statements.iter().filter_map(|s| created_table(s)).collect();
    let existing = |table: &str| !created.iter().any(|c| c == table);
    let mut timeout_set = false;
    let mut broken = Vec::new();
    for s in &statements {
        if s.starts_with("SET LOCAL LOCK_TIMEOUT") || s.starts_with("SET LOCK_TIMEOUT") {
            timeout_set = true;
        } else if let Some(rest) = strip_any(s, &["CREATE INDEX ", "CREATE UNIQUE INDEX "]) {
            if rest.starts_with("CONCURRENTLY ") {
                continue;
            }
            if let Some(table) = after_word(rest, "ON").map(table_name)
                && existing(&table)
            {
                broken.push(Broken::IndexBlocksWrites(first_word(rest).to_lowercase()));
                locks(&mut broken, timeout_set);
            }
        } else if let Some(rest) = s.strip_prefix("ALTER TABLE ") {
            let (table, actions) = split_first_word(skip_words(rest, &["IF EXISTS", "ONLY"]));
            let table = table_name(table);
            if !existing(&table) {
                continue;
            }
            let actions = top_level_split(actions, ',');
            if !actions.iter().all(|a| takes_no_write_lock(a)) {
                locks(&mut broken, timeout_set);
            }
            for a in actions {
                if let Some(b) = alter_action(&table, a.trim()) {
                    broken.push(b);
                }
            }
        } else if let Some(rest) = strip_any(s, &["CREATE TRIGGER ", "DROP TRIGGER ", "CREATE CONSTRAINT TRIGGER "]) {
            if after_word(rest, "ON").map(table_name).is_some_and(|t| existing(&t)) {
                locks(&mut broken, timeout_set);
            }
        } else if (s.starts_with("DROP INDEX ") && !s.starts_with("DROP INDEX CONCURRENTLY ")) || s.starts_with("LOCK ")
        {
            locks(&mut broken, timeout_set);
        } else if let Some(rest) = s.strip_prefix("DROP TABLE ") {
            let table = table_name(first_word(skip_words(rest, &["IF EXISTS"])));
            if existing(&table) {
                broken.push(Broken::TakesAway(format!("table {}", table.to_lowercase())));
                locks(&mut broken, timeout_set);
            }
        } else if let Some(rest) = strip_any(s, &["UPDATE ", "DELETE FROM "]) {
            let table = table_name(first_word(skip_words(rest, &["ONLY"])));
            if existing(&table) {
                broken.push(Broken::Backfill(table.to_lowercase()));
            }
        }
    }
    broken
}

/// Notes a lock on an existing table taken before any lock timeout was set.
fn locks(broken: &mut Vec<Broken>, timeout_set: bool) {
    if !timeout_set && !broken.contains(&Broken::NoLockTimeout) {
        broken.push(Broken::NoLockTimeout);
    }
}

/// An `ALTER TABLE` action that only takes SHARE UPDATE EXCLUSIVE (writes go on).
fn takes_no_write_lock(action: &str) -> bool {
    let a = action.trim();
    a.starts_with("VALIDATE CONSTRAINT ") || a.starts_with("SET (") || a.starts_with("RESET (")
}

/// What one action of an `ALTER TABLE` on an existing table breaks, if anything.
fn alter_action(table: &str, a: &str) -> Option<Broken> {
    let name = |rest: &str| format!("{}.{}", table.to_lowercase(), first_word(rest).to_lowercase());
    if let Some(rest) = a.strip_prefix("DROP COLUMN ") {
        return Some(Broken::TakesAway(format!("column {}", name(skip_words(rest, &["IF EXISTS"])))));
    }
    if a.starts_with("RENAME ") {
        return Some(Broken::TakesAway(format!("{} ({})", table.to_lowercase(), a.to_lowercase())));
    }
    if let Some(rest) = a.strip_prefix("ALTER COLUMN ").or_else(|| a.strip_prefix("ALTER ")) {
        let (column, change) = split_first_word(rest);
        if change.starts_with("TYPE ") || change.starts_with("SET DATA TYPE ") {
            return Some(Broken::TakesAway(format!("the type of {}", name(column))));
        }
        if change.starts_with("SET NOT NULL") {
            return Some(Broken::ScanUnderLock(format!("{} NOT NULL", name(column))));
        }
        return None;
    }
    if let Some(rest) = a.strip_prefix("ADD CONSTRAINT ") {
        let (constraint, body) = split_first_word(rest);
        let scans = (body.starts_with("CHECK") || body.starts_with("FOREIGN KEY")) && !body.ends_with(" NOT VALID")
            || body.starts_with("UNIQUE")
            || body.starts_with("PRIMARY KEY");
        let by_index = body.contains(" USING INDEX ");
        return (scans && !by_index).then(|| Broken::ScanUnderLock(constraint.to_lowercase()));
    }
    if let Some(rest) = a.strip_prefix("ADD COLUMN ").or_else(|| a.strip_prefix("ADD ")) {
        let rest = skip_words(rest, &["IF NOT EXISTS"]);
        let checked = contains_word(rest, "CHECK") || contains_word(rest, "REFERENCES");
        let not_null_without_default = rest.contains("NOT NULL") && !contains_word(rest, "DEFAULT");
        return (checked || not_null_without_default).then(|| Broken::ScanUnderLock(name(rest)));
    }
    None
}

/// The statements of a script, split at `;` outside quotes, dollar quotes and comments,
/// with comments removed.
fn statements(sql: &str) -> Vec<String> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '-' && next == Some('-') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            cur.push(' ');
        } else if c == '\'' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            cur.extend(&chars[start..(i + 1).min(chars.len())]);
            i += 1;
        } else if c == '$' {
            match dollar_tag(&chars[i..]) {
                Some(tag) => {
                    let body_start = i + tag.len();
                    let close = find(&chars, body_start, &tag).unwrap_or(chars.len());
                    let end = (close + tag.len()).min(chars.len());
                    cur.extend(&chars[i..end]);
                    i = end;
                }
                None => {
                    cur.push(c);
                    i += 1;
                }
            }
        } else if c == ';' {
            out.push(std::mem::take(&mut cur));
            i += 1;
        } else {
            cur.push(c);
            i += 1;
        }
    }
    out.push(cur);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// A statement, normalized; an anonymous block (`DO $$ BEGIN …; … END $$`) becomes the
/// statements it runs, which take their locks as the migration runs.
fn with_do_blocks_opened(statement: &str) -> Vec<String> {
    let s = statement.trim_start();
    let is_do = s.get(..3).is_some_and(|head| head.eq_ignore_ascii_case("DO ")) || s.eq_ignore_ascii_case("DO");
    let body = s.find('$').and_then(|open| {
        let chars: Vec<char> = s[open..].chars().collect();
        let tag = dollar_tag(&chars)?;
        let close = find(&chars, tag.len(), &tag)?;
        Some(chars[tag.len()..close].iter().collect::<String>())
    });
    match (is_do, body) {
        (true, Some(body)) => statements(&body)
            .iter()
            .map(|inner| {
                let inner = normalize(inner);
                inner.strip_prefix("BEGIN ").map(str::to_owned).unwrap_or(inner)
            })
            .collect(),
        _ => vec![normalize(statement)],
    }
}

/// `$tag$` (or `$$`) at the start of `chars`, if it opens a dollar quote.
fn dollar_tag(chars: &[char]) -> Option<Vec<char>> {
    let close = chars.iter().skip(1).position(|c| *c == '$')? + 1;
    let tag = &chars[1..close];
    tag.iter().all(|c| c.is_alphanumeric() || *c == '_').then(|| chars[..=close].to_vec())
}

/// Where `needle` next starts in `chars` at or after `from`.
fn find(chars: &[char], from: usize, needle: &[char]) -> Option<usize> {
    (from..chars.len().saturating_sub(needle.len() - 1)).find(|&i| chars[i..].starts_with(needle))
}

/// Upper case, one space between words.
fn normalize(statement: &str) -> String {
    statement.split_whitespace().collect::<Vec<_>>().join(" ").to_uppercase()
}

/// The table a `CREATE TABLE` statement creates.
fn created_table(s: &str) -> Option<String> {
    let rest = s.strip_prefix("CREATE TABLE ").or_else(|| s.strip_prefix("CREATE UNLOGGED TABLE "))?;
    Some(table_name(first_word(skip_words(rest, &["IF NOT EXISTS"]))))
}

/// A table reference without its schema, quotes or a trailing parenthesis.
fn table_name(word: &str) -> String {
    let word = word.split('(').next().unwrap_or(word);
    let word = word.rsplit('.').next().unwrap_or(word);
    word.trim_matches('"').to_owned()
}

fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

fn split_first_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(' ') {
        Some(i) => (&s[..i], s[i + 1..].trim_start()),
        None => (s, ""),
    }
}

/// `s` without any of `prefixes` (each once, in order) at its start.
fn skip_words<'a>(mut s: &'a str, prefixes: &[&str]) -> &'a str {
    for p in prefixes {
        if let Some(rest) = s.strip_prefix(p).and_then(|r| r.strip_prefix(' ')) {
            s = rest;
        }
    }
    s
}

fn strip_any<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| s.strip_prefix(p))
}

/// The word after the first standalone `word`, with `ONLY` skipped.
fn after_word<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let mut words = s.split(' ');
    words.by_ref().find(|w| *w == word)?;
    words.find(|w| *w != "ONLY")
}

fn contains_word(s: &str, word: &str) -> bool {
    s.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == word)
}

/// `s` split at `sep` where no parenthesis is open and outside quotes.
fn top_level_split(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            c if c == sep && depth == 0 && !quoted => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

#[cfg(test)]
mod tests;
