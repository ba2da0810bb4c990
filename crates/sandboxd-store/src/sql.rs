//! SQL run through the connection's statement cache.

use rusqlite::Connection;

/// Runs a statement through the connection's statement cache: the same few statements run on
/// every operation (the activity ring, activity times), so they are parsed once.
pub(crate) fn execute_cached(
    c: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<usize> {
    c.prepare_cached(sql)?.execute(params)
}
