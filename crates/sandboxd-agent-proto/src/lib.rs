//! The wire protocol between sandboxd and its in-sandbox agent.
