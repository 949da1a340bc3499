//! Hand-written SQL, each statement a named value registered where one test can reach
//! it. A statement is declared with [`statement!`] in its area's store module (or in
//! `db` for the database's own housekeeping), which makes it a `static` [`Statement`]
//! and registers it; [`all`] enumerates every registered statement, and the integration
//! test `statements` prepares each against the migrated schema, so a statement that no
//! longer fits the schema fails a test instead of the first request that runs it.
//!
//! [`Statement::query`] is the one place the crate calls `diesel::sql_query`
//! (`clippy.toml` refuses it elsewhere). A statement's text is fixed: a literal (or
//! `concat!` of literals), or built once from constants on first use. A statement whose
//! text would vary at run time is instead a small fixed set of registered variants, or
//! binds an array (`= ANY($n)`).

use std::sync::LazyLock;

use diesel::query_builder::SqlQuery;

/// One hand-written SQL statement: its name (the module path of its `static`), where it
/// is declared, and its text. Made only by [`statement!`], which registers it.
pub struct Statement {
    name: &'static str,
    file: &'static str,
    line: u32,
    text: Text,
}

/// A statement's text: written out, or built once from constants.
enum Text {
    Fixed(&'static str),
    Built(LazyLock<String>),
}

impl Statement {
    /// A statement whose text is written out. For [`statement!`] only: a statement made
    /// otherwise is not registered.
    #[doc(hidden)]
    pub const fn fixed(name: &'static str, file: &'static str, line: u32, text: &'static str) -> Statement {
        Statement { name, file, line, text: Text::Fixed(text) }
    }

    /// A statement whose text `build` makes on first use. For [`statement!`] only.
    #[doc(hidden)]
    pub const fn built(name: &'static str, file: &'static str, line: u32, build: fn() -> String) -> Statement {
        Statement { name, file, line, text: Text::Built(LazyLock::new(build)) }
    }

    /// The statement's name: the module path of its `static`, e.g.
    /// `switchboard::store::todos::claim::NEXT_ON_QUEUE`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The source file that declares it.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The line of that file where the `statement!` block declaring it starts.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// Its SQL text, exactly as it is sent.
    pub fn text(&'static self) -> &'static str {
        match &self.text {
            Text::Fixed(text) => text,
            Text::Built(text) => text.as_str(),
        }
    }

    /// The statement as a diesel query, ready for its binds (and for
    /// [`super::prepared::Prepared`], which keeps it prepared by its text).
    #[expect(clippy::disallowed_methods, reason = "the one place hand-written SQL becomes a query")]
    pub fn query(&'static self) -> SqlQuery {
        diesel::sql_query(self.text())
    }
}

impl std::fmt::Debug for Statement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Statement").field("name", &self.name).field("file", &self.file).finish_non_exhaustive()
    }
}

/// A statement's entry in the registry. For [`statement!`] only.
#[doc(hidden)]
pub struct Registered(pub &'static Statement);

inventory::collect!(Registered);

/// Every registered statement of the crate (in no particular order): each one
/// [`statement!`] declared, wherever it lives.
pub fn all() -> impl Iterator<Item = &'static Statement> {
    inventory::iter::<Registered>.into_iter().map(|r| r.0)
}

/// The registered statement of this name (see [`Statement::name`]), if there is one.
pub fn by_name(name: &str) -> Option<&'static Statement> {
    all().find(|s| s.name == name)
}

/// Declares one or more registered statements, each a `static` [`Statement`] named by its
/// module path:
///
/// ```ignore
/// statement! {
///     /// What it does.
///     pub(super) static BY_ID = "SELECT * FROM todos WHERE id = $1";
///     /// Built once, on first use, from constants.
///     static LISTED = format!("SELECT {COLUMNS} FROM sinks WHERE id = $1");
///     /// Built once by a function (`fn() -> String`).
///     static CLAIM = built(claim_sql);
/// }
/// ```
macro_rules! statement {
    () => {};
    (@register $(#[$m:meta])* $vis:vis $name:ident, $value:expr) => {
        $(#[$m])*
        $vis static $name: $crate::db::statement::Statement = $value;
        ::inventory::submit! { $crate::db::statement::Registered(&$name) }
    };
    ($(#[$m:meta])* $vis:vis static $name:ident = format!($($f:tt)+); $($rest:tt)*) => {
        $crate::db::statement::statement!(@register $(#[$m])* $vis $name,
            $crate::db::statement::Statement::built(
                concat!(module_path!(), "::", stringify!($name)), file!(), line!(), || format!($($f)+)));
        $crate::db::statement::statement!($($rest)*);
    };
    ($(#[$m:meta])* $vis:vis static $name:ident = built($build:expr); $($rest:tt)*) => {
        $crate::db::statement::statement!(@register $(#[$m])* $vis $name,
            $crate::db::statement::Statement::built(
                concat!(module_path!(), "::", stringify!($name)), file!(), line!(), $build));
        $crate::db::statement::statement!($($rest)*);
    };
    ($(#[$m:meta])* $vis:vis static $name:ident = $text:expr; $($rest:tt)*) => {
        $crate::db::statement::statement!(@register $(#[$m])* $vis $name,
            $crate::db::statement::Statement::fixed(
                concat!(module_path!(), "::", stringify!($name)), file!(), line!(), $text));
        $crate::db::statement::statement!($($rest)*);
    };
}
pub(crate) use statement;

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::all;

    #[test]
    fn no_two_statements_share_a_name() {
        let mut seen: HashMap<&str, Vec<String>> = HashMap::new();
        for s in all() {
            seen.entry(s.name()).or_default().push(format!("{}:{}", s.file(), s.line()));
        }
        let shared: Vec<_> = seen.iter().filter(|(_, at)| at.len() > 1).collect();
        assert!(shared.is_empty(), "statements sharing a name: {shared:?}");
        assert!(!seen.is_empty(), "no statement is registered");
    }

    #[test]
    fn every_statement_has_text() {
        let empty: Vec<_> = all().filter(|s| s.text().trim().is_empty()).map(|s| s.name()).collect();
        assert!(empty.is_empty(), "statements without text: {empty:?}");
    }
}
