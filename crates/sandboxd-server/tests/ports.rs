//! A session's ports through the REST face, over the fake agent (nothing listens in a fake
//! sandbox); the proxy itself is tested against real servers in the sandboxd crate.

mod common;

use axum::http::{Method, StatusCode};
use common::*;
use serde_json::json;

#[tokio::test]
async fn ports_are_listed_and_a_closed_port_is_a_bad_gateway_logged_by_number() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, list) = service.get(&format!("/v1/sessions/{id}/ports")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list, json!({"ports": []}));
    let answer = service
        .admin()
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/ports/8000/api?x=1"),
            None,
            b"body".to_vec(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY);
    assert_eq!(answer.json()["error"]["code"], "port_closed");
    for bad in ["0", "65536", "http"] {
        assert_error(
            &service
                .get(&format!("/v1/sessions/{id}/ports/{bad}/"))
                .await,
            StatusCode::BAD_REQUEST,
            "invalid_port",
        );
    }
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let newest = &log["entries"][0];
    assert_eq!(
        (&newest["action"], &newest["target"]),
        (&json!("port_connect"), &json!("8000"))
    );
    assert_eq!(newest["status"], "error");
    assert!(
        !log.to_string().contains("api?x=1"),
        "the path is not logged: {log}"
    );
}

#[tokio::test]
async fn the_proxy_needs_the_token() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let answer = service
        .anonymous()
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/ports/8000/"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_share_link_reaches_its_port_without_the_token_until_revoked_or_the_session_ends() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, link) = service
        .post(
            &format!("/v1/sessions/{id}/ports/8000/share"),
            json!({"ttl_secs": 600}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{link}");
    let path = link["path"].as_str().unwrap().to_string();
    assert!(
        path.starts_with("/p/") && path.len() == 3 + 62 + 1,
        "{path}"
    );
    assert_eq!(
        (&link["port"], &link["created_by"]),
        (&json!(8000), &json!("admin"))
    );

    // Without the token, the link reaches the session's port (where nothing listens).
    let anonymous = service.anonymous();
    let answer = anonymous
        .send(Method::GET, &format!("{path}index.html"), None, Vec::new())
        .await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY, "{}", answer.json());
    assert_eq!(answer.json()["error"]["code"], "port_closed");
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let opened = &log["entries"][0];
    assert_eq!(
        (&opened["action"], &opened["target"]),
        (&json!("share_open"), &json!("8000"))
    );
    assert_eq!(
        opened["principal"],
        format!("link:{}", link["id"].as_str().unwrap())
    );
    assert!(
        !log.to_string().contains(&path[3..65]),
        "the capability is never logged"
    );

    // Listed without its path; a wrong capability is not found.
    let (_, list) = service.get(&format!("/v1/sessions/{id}/shares")).await;
    assert_eq!(list["shares"].as_array().unwrap().len(), 1);
    assert!(list["shares"][0].get("path").is_none(), "{list}");
    let wrong = anonymous
        .send(Method::GET, "/p/0000/", None, Vec::new())
        .await;
    assert_eq!(wrong.status, StatusCode::NOT_FOUND);

    let share_id = link["id"].as_str().unwrap();
    let (status, _) = service
        .delete(&format!("/v1/sessions/{id}/shares/{share_id}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    let revoked = anonymous.send(Method::GET, &path, None, Vec::new()).await;
    assert_eq!(revoked.status, StatusCode::NOT_FOUND);

    let (_, link) = service
        .post(&format!("/v1/sessions/{id}/ports/8000/share"), json!({}))
        .await;
    let path = link["path"].as_str().unwrap().to_string();
    service.delete(&format!("/v1/sessions/{id}")).await;
    let ended = anonymous.send(Method::GET, &path, None, Vec::new()).await;
    assert_eq!(
        ended.status,
        StatusCode::NOT_FOUND,
        "a closed session's links stop at once"
    );
}

#[tokio::test]
async fn share_links_expire_are_bounded_in_time_and_belong_to_their_tenant() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let id = alpha.open(None).await;
    let route = format!("/v1/sessions/{id}/ports/8000/share");
    for ttl in [0, 3601] {
        let (status, _) = alpha.post(&route, json!({"ttl_secs": ttl})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "ttl {ttl}");
    }
    let (_, link) = alpha.post(&route, json!({"ttl_secs": 1})).await;
    assert_eq!(link["created_by"], "tenant:alpha");
    let path = link["path"].as_str().unwrap().to_string();
    let other = service.client(BETA_TOKEN);
    let (status, _) = other.get(&format!("/v1/sessions/{id}/shares")).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "another tenant's session is not found"
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let expired = service
        .anonymous()
        .send(Method::GET, &path, None, Vec::new())
        .await;
    assert_eq!(expired.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn one_tenant_cannot_take_every_share_link_and_a_closed_sessions_links_free_their_places() {
    let tenants = format!(
        "{}{}",
        tenant("alpha", ALPHA_TOKEN, 11, None),
        tenant("beta", BETA_TOKEN, 1, None)
    );
    let service = TestService::start(&config(12, 0, &tenants));
    let alpha = service.client(ALPHA_TOKEN);
    let share = |id: &str| format!("/v1/sessions/{id}/ports/8000/share");
    let mut sessions = Vec::new();
    for _ in 0..10 {
        let id = alpha.open(None).await;
        for _ in 0..100 {
            let (status, link) = alpha.post(&share(&id), json!({})).await;
            assert_eq!(status, StatusCode::CREATED, "{link}");
        }
        sessions.push(id);
    }
    // The tenant holds its thousand: a link of its eleventh session is refused, naming the
    // limits.
    let eleventh = alpha.open(None).await;
    let (status, refused) = alpha.post(&share(&eleventh), json!({})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert_eq!(refused["error"]["code"], "too_many_shares");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("1000 a tenant"));
    // Another tenant still shares.
    let beta = service.client(BETA_TOKEN);
    let id = beta.open(None).await;
    let (status, _) = beta.post(&share(&id), json!({})).await;
    assert_eq!(status, StatusCode::CREATED);
    // A closed session's links are gone at once, and their places with them.
    let (status, _) = alpha.delete(&format!("/v1/sessions/{}", sessions[0])).await;
    assert_eq!(status, StatusCode::OK);
    let (status, link) = alpha.post(&share(&eleventh), json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{link}");
}

#[tokio::test]
async fn every_refusal_under_p_is_a_page_to_a_browser_and_json_to_any_other_client() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let share = |port: u16| {
        let service = &service;
        let id = &id;
        async move {
            let (_, link) = service
                .post(&format!("/v1/sessions/{id}/ports/{port}/share"), json!({}))
                .await;
            link
        }
    };
    let closed = share(8000).await["path"].as_str().unwrap().to_string();
    let revoked = share(8001).await;
    service
        .delete(&format!(
            "/v1/sessions/{id}/shares/{}",
            revoked["id"].as_str().unwrap()
        ))
        .await;
    let revoked = revoked["path"].as_str().unwrap().to_string();
    let refusals = [
        (
            Method::GET,
            "/p/not.a.link".to_string(),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Method::GET,
            "/p/%ff/".into(),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Method::GET,
            "/p/".into(),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (Method::GET, "/p".into(), StatusCode::NOT_FOUND, "not_found"),
        (
            Method::GET,
            format!("/p/{}/", "0".repeat(62)),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Method::GET,
            format!("{revoked}a/page"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Method::POST,
            closed.clone(),
            StatusCode::BAD_GATEWAY,
            "port_closed",
        ),
        (
            Method::TRACE,
            closed,
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
    ];
    let browser = service
        .anonymous()
        .accepting("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
    let program = service.anonymous().accepting("application/json");
    for (method, path, status, code) in refusals {
        let page = browser.send(method.clone(), &path, None, Vec::new()).await;
        assert_eq!(page.status, status, "{method} {path}");
        assert_eq!(
            page.headers["content-type"], "text/html; charset=utf-8",
            "{method} {path}"
        );
        assert_eq!(
            page.headers["content-security-policy"],
            "default-src 'none'"
        );
        let text = String::from_utf8_lossy(&page.body);
        assert!(
            text.contains(&format!("<code>{code}</code>")),
            "{path}: {text}"
        );
        let json = program.send(method.clone(), &path, None, Vec::new()).await;
        assert_eq!(json.status, status, "{method} {path}");
        assert_eq!(json.json()["error"]["code"], code, "{method} {path}");
    }
}
