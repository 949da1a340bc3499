//! Rebuilds the crate when a migration is added or changed: `embed_migrations!` reads
//! the `migrations/` folder at compile time, which cargo does not otherwise watch.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
