//! Unit tests of the embedded cluster's pure parts: binary lookup, quoting, path checks
//! and error messages.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::conninfo::settings_file;
use super::data_dir::{can_traverse, check_ancestors, check_path_text};
use super::process::tail_lines;
use super::*;

fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("switchboard-embedded-unit-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn binaries_not_found_is_one_line_naming_package_and_variable() {
    let dir = scratch_dir("nobin");
    let err = EmbeddedPostgres::locate_binaries(Some(&dir)).unwrap_err();
    let text = err.to_string();
    fs::remove_dir_all(&dir).unwrap();
    assert!(
        matches!(err, EmbeddedError::BinariesNotFound { ref searched } if searched.as_slice() == std::slice::from_ref(&dir))
    );
    assert!(!text.contains('\n'), "{text}");
    assert!(text.contains("`postgresql`"), "{text}");
    assert!(text.contains("SWITCHBOARD_DATABASE_URL"), "{text}");
    assert!(text.contains(&dir.display().to_string()), "{text}");
}

#[test]
fn binaries_not_found_display_is_exact() {
    let err = EmbeddedError::BinariesNotFound { searched: vec![PathBuf::from("/a/bin"), PathBuf::from("/b\nc")] };
    assert_eq!(
        err.to_string(),
        "no PostgreSQL server binaries found (looked in: /a/bin, /b?c); install the `postgresql` package or set SWITCHBOARD_DATABASE_URL to an existing server"
    );
}

#[test]
fn override_with_both_binaries_is_accepted() {
    let dir = scratch_dir("fakebin");
    for name in ["initdb", "pg_ctl"] {
        let path = dir.join(name);
        fs::write(&path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let found = EmbeddedPostgres::locate_binaries(Some(&dir));
    let expected = fs::canonicalize(&dir).unwrap();
    // Not executable -> not a binary.
    fs::set_permissions(dir.join("pg_ctl"), fs::Permissions::from_mode(0o644)).unwrap();
    let refused = EmbeddedPostgres::locate_binaries(Some(&dir));
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.unwrap(), expected);
    assert!(matches!(refused, Err(EmbeddedError::BinariesNotFound { .. })));
}

#[test]
fn versions_sort_numerically() {
    let dir = scratch_dir("versions");
    for v in ["9.6", "15", "10", "notaversion", "16"] {
        fs::create_dir_all(dir.join(v).join("bin")).unwrap();
    }
    let found = versioned_bin_dirs(&dir);
    fs::remove_dir_all(&dir).unwrap();
    let names: Vec<_> =
        found.iter().map(|p| p.parent().unwrap().file_name().unwrap().to_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["16", "15", "10", "9.6"]);
}

#[test]
fn conninfo_values_are_quoted_only_when_needed() {
    assert_eq!(conninfo_value("/tmp/x/run"), "/tmp/x/run");
    assert_eq!(conninfo_value("/tmp/a b/run"), "'/tmp/a b/run'");
    assert_eq!(conninfo_value(r"it's\x"), r"'it\'s\\x'");
    assert_eq!(conninfo_value(""), "''");
}

#[test]
fn settings_quote_socket_dir_for_list_and_conf() {
    let text = settings_file(r#"/d/it's, "q"\b"#);
    assert!(text.contains("listen_addresses = ''\n"));
    assert!(text.contains(r#"unix_socket_directories = '"/d/it''s, ""q""\\b"'"#), "{text}");
    assert!(text.contains("port = 5432\n"));
}

#[test]
fn traversal_follows_the_first_matching_class() {
    // owner match: only user bits count
    assert!(can_traverse(0o700, 101, 0, 101, 104));
    assert!(!can_traverse(0o011, 101, 0, 101, 104));
    // group match
    assert!(can_traverse(0o750, 0, 104, 101, 104));
    assert!(!can_traverse(0o701, 0, 104, 101, 104));
    // others
    assert!(can_traverse(0o711, 0, 0, 101, 104));
    assert!(!can_traverse(0o700, 0, 0, 101, 104));
}

#[test]
fn ancestor_check_names_the_blocking_directory() {
    let top = scratch_dir("ancestors");
    let locked = top.join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
    let data = locked.join("data");
    fs::create_dir(&data).unwrap();
    // A user that owns nothing here and shares no group with the owner.
    let stranger = RunAs { name: "stranger".to_owned(), uid: 4_000_000_001, gid: 4_000_000_001, switch: true };
    let result = check_ancestors(&data, &stranger);
    fs::remove_dir_all(&top).unwrap();
    let err = result.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EmbeddedError::DataDirUnusable { .. }));
    assert!(!text.contains('\n'), "{text}");
    assert!(text.contains(&format!("cannot enter {}", locked.display())), "{text}");
}

#[test]
fn awkward_data_dir_paths_are_refused() {
    for bad in ["/tmp/a,b/data", "/tmp/line\nbreak"] {
        let err = check_path_text(Path::new(bad)).unwrap_err();
        assert!(matches!(err, EmbeddedError::DataDirUnusable { .. }));
        assert!(!err.to_string().contains('\n'), "{err}");
    }
    assert!(check_path_text(Path::new("/tmp/it's a $dir/data")).is_ok());
}

#[test]
fn database_names_are_validated() {
    assert!(validate_database_name("switchboard").is_ok());
    assert!(validate_database_name("with space-and\"quote").is_ok());
    assert!(validate_database_name("").is_err());
    assert!(validate_database_name(&"x".repeat(64)).is_err());
    assert!(validate_database_name("a\nb").is_err());
}

#[test]
fn long_socket_paths_are_refused() {
    let long = PathBuf::from(format!("/{}", "d".repeat(120)));
    let err = check_socket_path(&long, &long.join(RUN_DIR)).unwrap_err();
    assert!(err.to_string().contains("over the"), "{err}");
    assert!(check_socket_path(Path::new("/tmp/x"), Path::new("/tmp/x/run")).is_ok());
}

#[test]
fn command_failed_is_one_line() {
    use std::os::unix::process::ExitStatusExt;
    let err = EmbeddedError::CommandFailed {
        command: "pg_ctl start".to_owned(),
        status: ExitStatus::from_raw(1 << 8),
        detail: "stderr: pg_ctl: could not start server | Examine the log output.".to_owned(),
    };
    assert_eq!(
        err.to_string(),
        "`pg_ctl start` failed (exit status: 1): stderr: pg_ctl: could not start server | Examine the log output."
    );
}

#[test]
fn tails_skip_blank_lines() {
    assert_eq!(tail_lines("a\n\n b \nc\nd\ne\nf\n\n", 3), ["d", "e", "f"]);
    assert!(tail_lines("", 3).is_empty());
}
