//! The API: what a request may name, who may call it, and from where.

use crate::common::{base_config, TestService, TOKEN};
use crate::harness::{bounded, report, Host};
use crate::sandbox_helpers::{error_code, raw_http};
use serde_json::{json, Value};

#[tokio::test]
async fn forbidden_container_settings_are_refused_and_nothing_is_created() {
    let attack = "create requests naming container settings";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(30, attack, async {
        let fields = [
            ("image", json!("alpine")),
            ("mounts", json!([{"source": "/", "target": "/host"}])),
            ("privileged", json!(true)),
            ("cap_add", json!(["SYS_ADMIN"])),
            ("network_mode", json!("host")),
            ("user", json!("0:0")),
            ("devices", json!(["/dev/sda"])),
            ("binds", json!(["/:/host"])),
            ("security_opt", json!(["seccomp=unconfined"])),
            ("pids_limit", json!(-1)),
            ("Image", json!("alpine")),
            ("HostConfig", json!({"Privileged": true})),
            ("mem_limit", json!("100g")),
        ];
        for (field, value) in &fields {
            let mut body = serde_json::Map::new();
            body.insert("runtime".into(), json!("sh"));
            body.insert((*field).into(), value.clone());
            let response = service
                .post("/v1/sessions")
                .json(&Value::Object(body))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap();
            assert_eq!(status, 400, "{field}: {body}");
            assert_eq!(body["error"]["code"], "forbidden_field", "{field}: {body}");
            assert!(
                body["error"]["message"].as_str().unwrap().contains(field),
                "the message names {field}: {body}"
            );
        }
        // Smuggled in the runtime alias: just an unknown alias.
        let response = service
            .post("/v1/sessions")
            .json(&json!({"runtime": "sh --privileged"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let sessions = service.get_json("/v1/sessions").await;
        assert_eq!(sessions["sessions"], json!([]));
        assert!(service.containers().is_empty(), "nothing was created");
        format!(
            "{} fields ({}) -> 400 forbidden_field naming the field; 0 containers created",
            fields.len(),
            fields
                .iter()
                .map(|(f, _)| *f)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn wrong_and_missing_tokens_get_identical_401s() {
    let attack = "wrong and missing tokens";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(30, attack, async {
        let client = reqwest::Client::new();
        let truncated = &TOKEN[..TOKEN.len() - 1];
        let wrong_same_length = "x".repeat(TOKEN.len());
        let basic = {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(format!("sandboxd:{TOKEN}"))
        };
        let credentials: Vec<(&str, Option<Vec<u8>>)> = vec![
            ("none", None),
            ("empty bearer", Some(b"Bearer ".to_vec())),
            ("wrong", Some(format!("Bearer {wrong_same_length}").into_bytes())),
            ("token + 1 char", Some(format!("Bearer {TOKEN}x").into_bytes())),
            ("token - 1 char", Some(format!("Bearer {truncated}").into_bytes())),
            ("no scheme", Some(TOKEN.as_bytes().to_vec())),
            ("basic", Some(format!("Basic {basic}").into_bytes())),
            ("double space", Some(format!("Bearer  {TOKEN}").into_bytes())),
            ("latin-1 bytes", Some(b"Bearer \xe9\xe9\xe9".to_vec())),
        ];
        // The service makes an address wait after 20 failures a minute: 18 here, then the rest.
        let routes = [
            ("POST", "/v1/sessions".to_string()),
            (
                "GET",
                format!("/v1/sessions?token={TOKEN}&access_token={TOKEN}"),
            ),
        ];
        let mut first: Option<(u16, Vec<u8>, Option<Vec<u8>>)> = None;
        let mut answers = 0;
        for (method, route) in &routes {
            for (name, credential) in &credentials {
                let mut request = client
                    .request(method.parse().unwrap(), service.url(route))
                    .body("{}");
                if let Some(value) = credential {
                    request = request.header(
                        "authorization",
                        reqwest::header::HeaderValue::from_bytes(value).unwrap(),
                    );
                }
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                let www = response
                    .headers()
                    .get("www-authenticate")
                    .map(|v| v.as_bytes().to_vec());
                let body = response.bytes().await.unwrap().to_vec();
                assert_eq!(status, 401, "{method} {route} with {name}");
                let answer = (status, body, www);
                match &first {
                    None => first = Some(answer),
                    Some(expected) => assert_eq!(
                        &answer, expected,
                        "{method} {route} with {name} is answered differently"
                    ),
                }
                answers += 1;
            }
        }
        // The scheme in lower case is refused too (fail-closed; RFC 7235 would allow it).
        let lower = client
            .get(service.url("/v1/config"))
            .header("authorization", format!("bearer {TOKEN}"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        assert!(lower == 401 || lower == 429, "{lower}");
        // Past the failure budget: what wrong and right tokens get from this address now.
        let mut later_wrong = Vec::new();
        for _ in 0..3 {
            let status = client
                .get(service.url("/mcp"))
                .bearer_auth(&wrong_same_length)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            assert!(status == 401 || status == 429, "{status}");
            later_wrong.push(status);
        }
        let right_after = service
            .get("/v1/sessions")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        assert!(service.containers().is_empty(), "nothing was created");
        let (_, body, www) = first.unwrap();
        format!(
            "{answers} requests ({} credentials x {} routes, incl. the token in the query string) -> 401 with byte-identical bodies {} and WWW-Authenticate {:?}; `bearer` in lower case -> {lower}; past 20 failures: wrong tokens -> {later_wrong:?}, the right token from the same address -> {right_after}",
            credentials.len(),
            routes.len(),
            String::from_utf8_lossy(&body),
            www.map(|w| String::from_utf8_lossy(&w).into_owned())
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn cross_origin_and_dns_rebinding_requests_are_refused() {
    let attack = "cross-origin and DNS-rebinding requests (API and /mcp)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(30, attack, async {
        let auth = format!("Authorization: Bearer {TOKEN}\r\n");
        let json_body = b"{}";
        let mcp_body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}"#;
        let cases: Vec<(&str, String, &[u8], &str)> = vec![
            ("GET /v1/sessions, Origin evil", format!("GET /v1/sessions HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://evil.example\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_origin"),
            ("POST /v1/sessions, Origin evil", format!("POST /v1/sessions HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n{auth}Connection: close\r\n\r\n"), json_body, "forbidden_origin"),
            ("POST /v1/sessions, Host evil", format!("POST /v1/sessions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n{auth}Connection: close\r\n\r\n"), json_body, "forbidden_host"),
            ("GET /v1/config, Host evil:port", format!("GET /v1/config HTTP/1.1\r\nHost: evil.example:7717\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_host"),
            ("GET /v1/config, Host localhost.evil", format!("GET /v1/config HTTP/1.1\r\nHost: localhost.evil.example\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_host"),
            ("GET /v1/config, Origin null", format!("GET /v1/config HTTP/1.1\r\nHost: {{address}}\r\nOrigin: null\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_origin"),
            ("GET /v1/config, Origin other port", format!("GET /v1/config HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://127.0.0.1:1\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_origin"),
            ("OPTIONS preflight, Origin evil", "OPTIONS /v1/sessions HTTP/1.1\r\nHost: {address}\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n".to_string(), b"", "forbidden_origin"),
            ("POST /mcp, Origin evil", format!("POST /mcp HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n", mcp_body.len()), mcp_body, "forbidden_origin"),
            ("POST /mcp, Host evil", format!("POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n", mcp_body.len()), mcp_body, "forbidden_host"),
        ];
        let mut refused = 0;
        for (name, head, body, code) in &cases {
            let (status, headers, answer) = raw_http(&service, head, body).await;
            assert_eq!(status, 403, "{name}: {}", String::from_utf8_lossy(&answer));
            assert_eq!(error_code(&answer), *code, "{name}");
            assert!(
                !headers.contains("access-control-allow-origin"),
                "{name} allows the origin: {headers}"
            );
            refused += 1;
        }
        // The same request from the service's own origin goes through.
        let own = format!("GET /v1/config HTTP/1.1\r\nHost: {{address}}\r\nOrigin: {}\r\n{auth}Connection: close\r\n\r\n", service.url);
        let (own_status, _, _) = raw_http(&service, &own, b"").await;
        assert_eq!(own_status, 200, "the service's own origin is accepted");
        assert!(service.containers().is_empty(), "nothing was created");
        format!(
            "{refused} requests (Origin evil.example / null / another port, Host evil.example / evil.example:port / localhost.evil.example, on /v1 and /mcp, with a valid token) -> 403 forbidden_origin / forbidden_host, no CORS allowance; own origin -> {own_status}; 0 containers created"
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}
