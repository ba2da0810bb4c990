//! The in-sandbox agent.
fn main() {}
