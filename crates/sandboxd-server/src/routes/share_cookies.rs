//! The cookies of a share link's host, kept to that link. Every link's host sits under the one
//! share domain, and a page may set a cookie for the whole domain from its script
//! (`document.cookie = "x=1; Domain=<share domain>"`), which the browser then sends to every
//! other link, another tenant's included. So the service vouches for the cookies a link's own
//! server sets: beside each it sets a companion cookie, host-only, whose value is an HMAC of
//! the cookie's name and value under the link's capability (which no other link's page knows),
//! and a request passes on to the sandbox only the cookies whose companion matches. The page
//! still reads its server's cookies unchanged; a cookie only its script set (or changed) is not
//! passed to its server.

use axum::http::{header, HeaderMap, HeaderValue};
use hmac::{KeyInit, Mac};
use std::collections::HashSet;

/// What every companion cookie's name starts with.
const COMPANION_PREFIX: &str = "__sbx_";
/// Hex digits of the name's and the value's HMAC in a companion: 64 and 128 bits.
const NAME_DIGITS: usize = 16;
const VALUE_DIGITS: usize = 32;

type Hmac = hmac::Hmac<sha2::Sha256>;

fn hex_hmac(capability: &str, parts: &[&str], digits: usize) -> String {
    let mut mac = Hmac::new_from_slice(capability.as_bytes()).expect("HMAC takes any key");
    for part in parts {
        mac.update(part.as_bytes());
        mac.update(&[0]);
    }
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..digits].to_string()
}

fn companion_name(capability: &str, name: &str) -> String {
    format!(
        "{COMPANION_PREFIX}{}",
        hex_hmac(capability, &["name", name], NAME_DIGITS)
    )
}

fn companion_value(capability: &str, name: &str, value: &str) -> String {
    hex_hmac(capability, &["value", name, value], VALUE_DIGITS)
}

/// Keeps the `Cookie` headers of a request to the link `capability` to the cookies its own
/// server set (their companions dropped too).
pub fn keep_own_cookies(capability: &str, headers: &mut HeaderMap) {
    let sent: Vec<(String, String)> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            Some((name.trim().to_string(), value.trim().to_string()))
        })
        .collect();
    let companions: HashSet<(&str, &str)> = sent
        .iter()
        .filter(|(name, _)| name.starts_with(COMPANION_PREFIX))
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let kept: Vec<String> = sent
        .iter()
        .filter(|(name, _)| !name.starts_with(COMPANION_PREFIX))
        .filter(|(name, value)| {
            let companion = companion_name(capability, name);
            let vouched = companion_value(capability, name, value);
            companions.contains(&(companion.as_str(), vouched.as_str()))
        })
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    headers.remove(header::COOKIE);
    if let Ok(cookies) = HeaderValue::from_str(&kept.join("; ")) {
        if !kept.is_empty() {
            headers.insert(header::COOKIE, cookies);
        }
    }
}

/// Keeps every cookie the link's server sets to the link's own host (its `Domain` attribute
/// dropped) and vouches for it with a companion of the same lifetime and path.
pub fn vouch_for_set_cookies(capability: &str, headers: &mut HeaderMap) {
    let set: Vec<String> = headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .map(|value| {
            value
                .split(';')
                .filter(|attribute| {
                    let name = attribute.split('=').next().unwrap_or("").trim();
                    !name.eq_ignore_ascii_case("domain")
                })
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect();
    headers.remove(header::SET_COOKIE);
    for cookie in set {
        let (pair, attributes) = cookie.split_once(';').unwrap_or((&cookie, ""));
        let Some((name, value)) = pair.split_once('=') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        let companion = format!(
            "{}={}; HttpOnly{}{attributes}",
            companion_name(capability, name),
            companion_value(capability, name, value),
            if attributes.is_empty() { "" } else { ";" },
        );
        for line in [cookie.as_str(), companion.as_str()] {
            if let Ok(line) = HeaderValue::from_str(line) {
                headers.append(header::SET_COOKIE, line);
            }
        }
    }
}

/// Drops every cookie of a request to a path link: its page has an opaque origin and no cookie
/// of its own, so what the browser sends belongs to the service's host.
pub fn drop_cookies(headers: &mut HeaderMap) {
    headers.remove(header::COOKIE);
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: &str = "a1b2c3";
    const OTHER_LINK: &str = "d4e5f6";

    fn set_by_server(capability: &str, cookies: &[&str]) -> Vec<String> {
        let mut headers = HeaderMap::new();
        for cookie in cookies {
            headers.append(header::SET_COOKIE, HeaderValue::from_str(cookie).unwrap());
        }
        vouch_for_set_cookies(capability, &mut headers);
        headers
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect()
    }

    /// What a browser holding `set` sends back: each cookie's name=value.
    fn sent_back(set: &[String]) -> String {
        set.iter()
            .map(|line| line.split(';').next().unwrap().trim().to_string())
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn passed_on(capability: &str, cookie: &str) -> Option<String> {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
        keep_own_cookies(capability, &mut headers);
        headers
            .get(header::COOKIE)
            .map(|v| v.to_str().unwrap().to_string())
    }

    #[test]
    fn a_links_own_cookies_lose_their_domain_and_come_with_a_companion_of_the_same_lifetime() {
        let set = set_by_server(
            LINK,
            &["sid=abc; Domain=.example.com; Path=/app; Max-Age=60"],
        );
        assert_eq!(set.len(), 2, "{set:?}");
        assert_eq!(set[0], "sid=abc; Path=/app; Max-Age=60");
        assert!(set[1].starts_with(COMPANION_PREFIX), "{}", set[1]);
        assert!(
            set[1].ends_with("; HttpOnly; Path=/app; Max-Age=60"),
            "{}",
            set[1]
        );
    }

    #[test]
    fn only_the_cookies_the_links_server_set_are_passed_on() {
        let set = set_by_server(LINK, &["sid=abc", "theme=dark; Path=/"]);
        let browser = sent_back(&set);
        assert_eq!(
            passed_on(LINK, &browser).as_deref(),
            Some("sid=abc; theme=dark")
        );
        // A cookie another link's page set for the whole share domain, beside them, and one
        // with the same name as the link's own.
        let tossed = format!("{browser}; tracker=1; sid=evil");
        assert_eq!(
            passed_on(LINK, &tossed).as_deref(),
            Some("sid=abc; theme=dark")
        );
        // Another link's server's cookies, vouched for under its own capability, are not this
        // link's.
        let other = sent_back(&set_by_server(OTHER_LINK, &["sid=xyz"]));
        assert_eq!(passed_on(LINK, &other), None);
        // A value changed outside the server (by a script) is not passed on either.
        let changed = browser.replace("sid=abc", "sid=abd");
        assert_eq!(passed_on(LINK, &changed).as_deref(), Some("theme=dark"));
    }
}
