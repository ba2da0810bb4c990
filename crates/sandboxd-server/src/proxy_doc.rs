//! The reverse proxy's routes in the OpenAPI document, apart from the routes themselves so the
//! document and the routes (which name its shared response sets) do not import each other.

/// The methods the proxy forwards (any other is 405).
pub const PROXIED_METHODS: [&str; 6] = ["get", "put", "post", "delete", "patch", "options"];

/// The proxy's routes for the OpenAPI document, which no annotation can describe (any of
/// several methods, any path below the port). `prefix` is where a port's root is, with its
/// parameters; `shared` when a share link reaches it without the token.
pub fn documented_paths(
    prefix: &str,
    parameters: serde_json::Value,
    shared: bool,
) -> std::collections::BTreeMap<String, utoipa::openapi::path::PathItem> {
    use serde_json::json;
    let security = if shared {
        json!([{}])
    } else {
        json!([{"bearer": []}])
    };
    let what = if shared {
        "through a share link, without the token"
    } else {
        "through the sandbox's agent"
    };
    let responses = json!({
        "101": {"description": "A WebSocket upgrade the port accepted, joined end to end"},
        "200": {"description": "What the port answered: its status, headers and body, streamed (chunked and Server-Sent Events included)"},
        "400": {"description": "`invalid_port`", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}},
        "404": {"$ref": "#/components/responses/NotFound"},
        "429": {"description": "`too_many_port_connections`", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}},
        "502": {"description": "`port_closed` (nothing listens there), `upstream_error`, `upstream_timeout`, `agent_unavailable`", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
    });
    let mut path_parameters = parameters.as_array().cloned().unwrap_or_default();
    path_parameters.push(json!({"name": "path", "in": "path", "required": true, "description": "The path below the port's root, with the query passed on", "schema": {"type": "string"}}));
    let item = |parameters: Vec<serde_json::Value>, suffix: &str| {
        let operations: serde_json::Map<String, serde_json::Value> = PROXIED_METHODS
            .iter()
            .map(|method| {
                let id = format!("{}_{method}{suffix}", if shared { "shared_port" } else { "port" });
                (method.to_string(), json!({
                    "tags": ["ports"],
                    "summary": format!("Forward a request to the port on the sandbox's loopback, {what}"),
                    "description": "Any of these methods; the body is streamed both ways. `Authorization`, hop-by-hop headers and the client header are not passed on, and `Host` is `127.0.0.1:{port}`. A WebSocket upgrade is passed on and the two sockets joined.",
                    "operationId": id,
                    "security": security,
                    "parameters": parameters,
                    "responses": responses,
                }))
            })
            .collect();
        serde_json::Value::Object(operations)
    };
    let root_parameters = parameters.as_array().cloned().unwrap_or_default();
    let root_redirect = json!({"get": {
        "tags": ["ports"],
        "summary": "Redirects to the port's root, with the slash relative links need",
        "operationId": format!("{}_root_redirect", if shared { "shared_port" } else { "port" }),
        "security": security,
        "parameters": root_parameters.clone(),
        "responses": {
            "308": {"description": "To the same path with a trailing slash"},
            "200": {"description": "Never: the answer is the redirect"},
            "400": {"description": "`invalid_port`", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}},
            "404": {"$ref": "#/components/responses/NotFound"}
        }
    }});
    serde_json::from_value(json!({
        prefix: root_redirect,
        format!("{prefix}/"): item(root_parameters, "_root"),
        format!("{prefix}/{{path}}"): item(path_parameters, ""),
    }))
    .expect("the proxy's descriptions are valid OpenAPI")
}
