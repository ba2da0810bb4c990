//! E2B's paged listings: `limit` items a page, the next page's `nextToken` in the
//! `x-next-token` header. The token is a cursor naming the page's last item (its time and ID,
//! encoded), not a position: the next page starts strictly after that item, so a sandbox
//! opened or closed between two requests neither repeats nor skips one.

use crate::errors::E2bError;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

const NEXT_TOKEN_HEADER: &str = "x-next-token";
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;
/// Marks the cursor's form, so a token of another form is refused, never misread.
const CURSOR_VERSION: &str = "1";
/// The longest token read: an ID of sandboxd's is far shorter.
const MAX_TOKEN: usize = 512;

/// Where an item stands in a listing: ordered by time, then by ID.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Position {
    /// Nanoseconds since the Unix epoch.
    at: i128,
    id: String,
}

impl Position {
    /// The position of an item created at `created_at` (RFC 3339; one that does not parse
    /// counts as the epoch, as the listings' filters count it).
    pub(crate) fn of(created_at: &str, id: &str) -> Position {
        Position {
            at: created_at_time(created_at).unix_timestamp_nanos(),
            id: id.to_string(),
        }
    }

    fn token(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{CURSOR_VERSION}:{}:{}", self.at, self.id))
    }

    /// The position a token of [`Position::token`] names; `None` for any other text.
    fn from_token(token: &str) -> Option<Position> {
        if token.len() > MAX_TOKEN {
            return None;
        }
        let text = String::from_utf8(URL_SAFE_NO_PAD.decode(token).ok()?).ok()?;
        let rest = text.strip_prefix(CURSOR_VERSION)?.strip_prefix(':')?;
        let (at, id) = rest.split_once(':')?;
        let id_chars = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if id.is_empty() || !id.chars().all(id_chars) {
            return None;
        }
        Some(Position {
            at: at.parse().ok()?,
            id: id.to_string(),
        })
    }
}

/// An item's creation time as a listing orders and filters by it.
pub(crate) fn created_at_time(created_at: &str) -> OffsetDateTime {
    OffsetDateTime::parse(created_at, &Rfc3339).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    OldestFirst,
    NewestFirst,
}

impl Order {
    /// Whether `position` comes after `cursor` in this order.
    fn is_past(self, position: &Position, cursor: &Position) -> bool {
        match self {
            Order::OldestFirst => position > cursor,
            Order::NewestFirst => position < cursor,
        }
    }
}

/// One page of `items` in `order` as E2B answers it: up to `limit` items after the one
/// `next_token` names, and the token of the next page in a header when there is one.
pub(crate) fn paged<T>(
    items: Vec<T>,
    order: Order,
    next_token: Option<&str>,
    limit: Option<usize>,
    position: impl Fn(&T) -> Position,
    describe: impl Fn(&T) -> Value,
) -> Response {
    match page(items, order, next_token, limit, position) {
        Ok((items, next)) => {
            let mut response = Json(items.iter().map(describe).collect::<Vec<_>>()).into_response();
            if let Some(next) = next.and_then(|token| token.parse().ok()) {
                response.headers_mut().insert(NEXT_TOKEN_HEADER, next);
            }
            response
        }
        Err(e) => e.into_http(),
    }
}

/// The items of the page [`paged`] answers, and the next page's token.
fn page<T>(
    mut items: Vec<T>,
    order: Order,
    next_token: Option<&str>,
    limit: Option<usize>,
    position: impl Fn(&T) -> Position,
) -> Result<(Vec<T>, Option<String>), E2bError> {
    let cursor = match next_token {
        Some(token) => Some(
            Position::from_token(token)
                .ok_or_else(|| E2bError::invalid("nextToken is not one this service gave"))?,
        ),
        None => None,
    };
    items.sort_by_cached_key(&position);
    if order == Order::NewestFirst {
        items.reverse();
    }
    let start = cursor.map_or(0, |cursor| {
        items.partition_point(|item| !order.is_past(&position(item), &cursor))
    });
    let limit = limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let more = items.len().saturating_sub(start) > limit;
    let page: Vec<T> = items.into_iter().skip(start).take(limit).collect();
    let next = more.then(|| page.last().map(|last| position(last).token()));
    Ok((page, next.flatten()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An item of a listing: its creation time in seconds and its ID.
    type Item = (i64, &'static str);

    fn position(item: &Item) -> Position {
        let at = OffsetDateTime::from_unix_timestamp(item.0).unwrap();
        Position::of(&at.format(&Rfc3339).unwrap(), item.1)
    }

    fn ids(items: &[Item]) -> Vec<&'static str> {
        items.iter().map(|item| item.1).collect()
    }

    /// Every page of `items` in `order`, `change` applied to the list before each page after
    /// the first: the IDs each page held.
    fn every_page(
        mut items: Vec<Item>,
        order: Order,
        mut change: impl FnMut(&mut Vec<Item>),
    ) -> Vec<Vec<&'static str>> {
        let mut pages = Vec::new();
        let mut token = None;
        loop {
            let (shown, next) = page(items.clone(), order, token.as_deref(), Some(1), position)
                .unwrap_or_else(|e| panic!("{e:?}"));
            pages.push(ids(&shown));
            let Some(next) = next else { return pages };
            token = Some(next);
            change(&mut items);
            assert!(pages.len() < 10, "paging does not end");
        }
    }

    #[test]
    fn a_sandbox_opened_between_pages_neither_repeats_nor_skips_one() {
        let items = vec![(10, "a"), (20, "b"), (30, "c")];
        let mut opened = false;
        let pages = every_page(items, Order::NewestFirst, |items| {
            if !opened {
                items.push((40, "new"));
                opened = true;
            }
        });
        assert_eq!(
            pages,
            [["c"], ["b"], ["a"]],
            "the newer one is not on later pages"
        );

        let items = vec![(10, "a"), (20, "b"), (30, "c")];
        let mut opened = false;
        let pages = every_page(items, Order::OldestFirst, |items| {
            if !opened {
                items.push((40, "new"));
                opened = true;
            }
        });
        assert_eq!(pages, [["a"], ["b"], ["c"], ["new"]]);
    }

    #[test]
    fn a_sandbox_closed_between_pages_skips_no_other() {
        let items = vec![(10, "a"), (20, "b"), (30, "c"), (40, "d")];
        // The first page's item, which the token names, goes: the next page still starts
        // right after it.
        let pages = every_page(items, Order::NewestFirst, |items| {
            items.retain(|item| item.1 != "d");
        });
        assert_eq!(pages, [["d"], ["c"], ["b"], ["a"]]);
    }

    #[test]
    fn items_of_the_same_time_are_ordered_by_id() {
        let items = vec![(10, "b"), (10, "a"), (10, "c")];
        let pages = every_page(items, Order::OldestFirst, |_| {});
        assert_eq!(pages, [["a"], ["b"], ["c"]]);
    }

    #[test]
    fn the_last_page_has_no_next_token() {
        let items = vec![(10, "a"), (20, "b")];
        let (two, next) = page(items.clone(), Order::NewestFirst, None, Some(2), position).unwrap();
        assert_eq!((ids(&two), next), (vec!["b", "a"], None));
        let (all, next) = page(items, Order::NewestFirst, None, None, position).unwrap();
        assert_eq!((ids(&all), next), (vec!["b", "a"], None));
    }

    #[test]
    fn a_token_this_service_never_gave_is_refused() {
        let given = position(&(10, "a")).token();
        assert_eq!(Position::from_token(&given), Some(position(&(10, "a"))));
        let forged = [
            "1".to_string(),
            "not base64 at all!".to_string(),
            URL_SAFE_NO_PAD.encode("2:10:a"),
            URL_SAFE_NO_PAD.encode("1:ten:a"),
            URL_SAFE_NO_PAD.encode("1:10:"),
            URL_SAFE_NO_PAD.encode("1:10:a/../b"),
            URL_SAFE_NO_PAD.encode([0xff, 0xfe]),
            "A".repeat(MAX_TOKEN + 4),
        ];
        for token in forged {
            let refused = page(
                vec![(10, "a")],
                Order::NewestFirst,
                Some(&token),
                None,
                position,
            );
            let e = refused.err().unwrap_or_else(|| panic!("{token} was taken"));
            assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST, "{token}");
            assert!(e.message.contains("nextToken"), "{token}: {}", e.message);
        }
    }
}
