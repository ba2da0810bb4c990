//! The sandboxd command.
fn main() {}
