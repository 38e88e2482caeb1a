//! `sqlx::migrate!` embeds the migrations when the crate compiles; a migration added without a
//! change to any Rust file would otherwise be missing from the binary.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
