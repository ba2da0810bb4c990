//! E2B's signed file URLs (`download_url`, `upload_url`): `GET` (read) or `POST` (write)
//! `/files?path=P[&username=U]&signature=v1_S[&signature_expiration=T]`, where `S` is the
//! unpadded base64 of SHA-256 over `P:OPERATION:U:ACCESS_TOKEN[:T]` and `T` a Unix time after
//! which the URL is refused. Such a URL needs no header: with `E2B_SANDBOX_URL` it does not
//! even name its sandbox, which is then the open one whose access token made the signature.
//! A URL that checks out goes on to envd's `/files` as a request with that token; one that
//! does not is refused and counted like a wrong token.

use crate::errors::{Code, E2bError};
use crate::naming::{SANDBOX_ID_HEADER, SANDBOX_PORT_HEADER};
use crate::state::ClientAddress;
use crate::state::Face;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode};
use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

/// The route signed URLs are for.
const FILES_PATH: &str = "/files";
const SIGNATURE_VERSION: &str = "v1_";
/// The users a signature may name: the SDK's default (empty) and E2B's `user`, which here is
/// the sandbox's one unprivileged user.
const USERS: [&str; 2] = ["", "user"];

/// What a signed URL's query says.
struct SignedQuery {
    path: String,
    user: String,
    signature: String,
    expiration: Option<String>,
}

/// Whether the request is a signed URL's: envd's `/files` with a `signature` and no access
/// token (a request with one is authenticated by it, as any other).
pub fn is_signed(request: &Request) -> bool {
    request.uri().path() == FILES_PATH
        && !request.headers().contains_key("x-access-token")
        && query(request).is_some_and(|pairs| pairs.iter().any(|(k, _)| k == "signature"))
}

/// Checks a signed URL's signature and expiry against sandbox `id` (or, without one, the open
/// sandboxes) and gives the request that sandbox's id and access token, for envd.
pub fn authorize(
    face: &Face,
    id: Option<&str>,
    address: &ClientAddress,
    request: &mut Request,
) -> Result<(), E2bError> {
    let operation = match *request.method() {
        Method::GET | Method::HEAD => "read",
        Method::POST => "write",
        _ => {
            return Err(E2bError::invalid(
                "a signed URL is for GET (read) or POST (write)",
            ))
        }
    };
    let signed = read_query(request)?;
    if !USERS.contains(&signed.user.as_str()) {
        return Err(E2bError::new(
            Code::PermissionDenied,
            StatusCode::FORBIDDEN,
            format!(
                "user \"{}\" is not available: sandboxd runs everything in a sandbox as its one unprivileged user",
                signed.user
            ),
        ));
    }
    if let Some(expiration) = &signed.expiration {
        let at: i64 = expiration
            .parse()
            .map_err(|_| E2bError::invalid("signature_expiration is a Unix time in seconds"))?;
        if OffsetDateTime::now_utc().unix_timestamp() > at {
            return Err(E2bError::unauthenticated(format!(
                "the signed URL expired at {at} (signature_expiration)"
            )));
        }
    }
    let (sandbox, token) = face
        .core
        .session_that_signed(id, |token| signed.made_with(operation, token), address.0)
        .map_err(|e| match e {
            sandboxd_core::Error::Unauthorized => E2bError::unauthenticated(format!(
                "the URL's signature does not match its path, operation ({operation}) and user for {}",
                id.map_or("any open sandbox".to_string(), |id| format!("sandbox {id}"))
            )),
            other => other.into(),
        })?;
    let headers = request.headers_mut();
    for (name, value) in [
        ("x-access-token", token.as_str()),
        (SANDBOX_ID_HEADER, sandbox.as_str()),
    ] {
        let value = HeaderValue::from_str(value).map_err(|_| E2bError::invalid("bad header"))?;
        headers.insert(name, value);
    }
    headers.remove(SANDBOX_PORT_HEADER);
    Ok(())
}

impl SignedQuery {
    /// Whether the signature was made with `token` for `operation`, compared in constant time.
    fn made_with(&self, operation: &str, token: &str) -> bool {
        let mut raw = format!("{}:{operation}:{}:{token}", self.path, self.user);
        if let Some(expiration) = &self.expiration {
            raw.push(':');
            raw.push_str(expiration);
        }
        let digest = Sha256::digest(raw.as_bytes());
        let expected = format!(
            "{SIGNATURE_VERSION}{}",
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(digest)
        );
        bool::from(expected.as_bytes().ct_eq(self.signature.as_bytes()))
    }
}

fn query(request: &Request) -> Option<Vec<(String, String)>> {
    serde_urlencoded::from_str(request.uri().query()?).ok()
}

fn read_query(request: &Request) -> Result<SignedQuery, E2bError> {
    let pairs = query(request).ok_or_else(|| E2bError::invalid("the URL's query is not valid"))?;
    let one = |name: &str| -> Result<Option<String>, E2bError> {
        let mut values = pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v);
        let first = values.next().cloned();
        match values.next() {
            Some(_) => Err(E2bError::invalid(format!("the URL gives {name} twice"))),
            None => Ok(first),
        }
    };
    let signature = one("signature")?.unwrap_or_default();
    if !signature.starts_with(SIGNATURE_VERSION) {
        return Err(E2bError::unauthenticated(
            "the URL's signature is not one this service checks (v1_...)",
        ));
    }
    Ok(SignedQuery {
        path: one("path")?.unwrap_or_default(),
        user: one("username")?.unwrap_or_default(),
        signature,
        expiration: one("signature_expiration")?,
    })
}
