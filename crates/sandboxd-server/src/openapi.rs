//! The OpenAPI 3.1 document of the service, served at `GET /v1/openapi.json` behind the token
//! like the rest of the API.
//!
//! It is generated from the code: each handler's `#[utoipa::path]` annotation says its path,
//! parameters, body and answers, the API types derive their schemas, and the router registers
//! every annotated handler at the path its annotation names (`utoipa_axum::routes!`), so a
//! route cannot be served at one path and documented at another. What is not an API handler
//! (the health check, the MCP endpoint, the dashboard's page and files, this document) is
//! described here; a test checks that every route the router answers is in the document.

use crate::state::AppState;
use axum::http::header;
use axum::routing::{get, MethodRouter};
use sandboxd_api::ErrorBody;
use serde_json::json;
use std::collections::BTreeMap;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Ref, RefOr, Response};
use utoipa::OpenApi;

/// The document's fixed parts; the router adds the annotated handlers' paths.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "sandboxd",
        description = "Sandboxes for AI agents, on your own host: one isolated container per session, commands and files through this API. Every route but `GET /healthz` and the dashboard's page needs `Authorization: Bearer <token>`. Errors are `{\"error\": {\"code\": \"...\", \"message\": \"...\"}}`: `code` is stable, `message` says what was wrong and what to do.",
        license(name = "Apache-2.0", identifier = "Apache-2.0")
    ),
    security(("bearer" = [])),
    // The errors, and what the event stream and the terminal's WebSocket carry: no handler's
    // body names those.
    components(schemas(
        sandboxd_api::ErrorBody,
        sandboxd_api::OutputChunk,
        sandboxd_api::OutputDropped,
        sandboxd_api::TerminalMessage,
        sandboxd_api::ScreenViewMessage,
        sandboxd_api::SessionChange
    )),
    tags(
        (name = "service", description = "The runtimes, policy, configuration and figures in force"),
        (name = "sessions", description = "Sessions: one sandbox each, with commands run to completion"),
        (name = "files", description = "A session's files, read and written through the sandbox's agent"),
        (name = "processes", description = "A session's background processes and its terminal"),
        (name = "ports", description = "A session's ports: listed, reached through the sandbox's agent, shared by link"),
        (name = "snapshots", description = "Snapshots of sessions' files, sessions opened from them, and forks"),
        (name = "volumes", description = "Volumes: a tenant's storage that outlives sessions, shared between them, with a hard size cap"),
        (name = "mcp", description = "The Model Context Protocol endpoint for agents"),
        (name = "dashboard", description = "The web dashboard"),
        (name = "computer", description = "A desktop session's screen, mouse and keyboard: computer use"),
        (name = "contexts", description = "A session's code contexts: stateful code execution with rich results, through a Jupyter kernel")
    )
)]
pub struct ApiDoc;

/// The answers every operation on a running session may give besides its own.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // a documentation type: never built, only read by the document
pub enum SessionErrors {
    #[response(
        status = 404,
        description = "`not_found`: no such session (or not the caller's), or no such process"
    )]
    NotFound(ErrorBody),
    #[response(
        status = 409,
        description = "`session_ended`: the session has ended; for processes also `process_exited`, `stdin_unavailable`, `not_a_terminal`"
    )]
    Ended(ErrorBody),
    #[response(
        status = 502,
        description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed"
    )]
    AgentFailed(ErrorBody),
}

/// The answers every file operation may give besides its own.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // a documentation type: never built, only read by the document
pub enum FileErrors {
    #[response(
        status = 400,
        description = "`invalid_path` or `invalid_request`; for a write also `upload_interrupted` (nothing was written)"
    )]
    BadPath(ErrorBody),
    #[response(
        status = 403,
        description = "`permission_denied`; for a write or delete also `read_only` (write under the working directory or /tmp)"
    )]
    Refused(ErrorBody),
    #[response(
        status = 404,
        description = "`not_found`: no such session, or no such file or directory"
    )]
    NotFound(ErrorBody),
    #[response(
        status = 409,
        description = "`session_ended`, or the path is of the wrong kind: `is_directory`, `not_a_directory`, `not_a_file`; `busy`; for a move `exists` and `cross_device`"
    )]
    Conflict(ErrorBody),
    #[response(
        status = 502,
        description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed"
    )]
    AgentFailed(ErrorBody),
}

/// The answers of the service's guard and token check, which every route may give.
const SHARED_RESPONSES: [(&str, &str); 3] = [
    ("401", "Unauthorized"),
    ("403", "Forbidden"),
    ("500", "Internal"),
];

/// Completes the document the router generated and answers `GET /v1/openapi.json` with it.
pub fn serve(mut document: utoipa::openapi::OpenApi) -> MethodRouter<AppState> {
    describe_other_routes(&mut document);
    add_shared_responses(&mut document);
    describe_event_streams(&mut document);
    let body = document
        .to_json()
        .expect("an OpenAPI document always serializes");
    get(|| async move { ([(header::CONTENT_TYPE, "application/json")], body) })
}

/// The routes that are not API handlers.
fn describe_other_routes(document: &mut utoipa::openapi::OpenApi) {
    let no_token = json!([{}]);
    let paths: BTreeMap<String, PathItem> = serde_json::from_value(json!({
        "/healthz": {"get": {
            "tags": ["service"],
            "summary": "Whether the service is up; needs no token",
            "operationId": "health",
            "security": no_token,
            "responses": {"200": {
                "description": "The service answers",
                "content": {"application/json": {"schema": {
                    "type": "object",
                    "properties": {"status": {"type": "string", "enum": ["ok"]}},
                    "required": ["status"]
                }}}
            }}
        }},
        "/v1/openapi.json": {"get": {
            "tags": ["service"],
            "summary": "This document",
            "operationId": "openapi_document",
            "responses": {"200": {
                "description": "The OpenAPI 3.1 document of this service",
                "content": {"application/json": {"schema": {"type": "object"}}}
            }}
        }},
        "/mcp": {
            "post": {
                "tags": ["mcp"],
                "summary": "The MCP endpoint (streamable HTTP transport)",
                "description": "A JSON-RPC message of the Model Context Protocol. The tools open sessions, run commands and code, and read and write files; each call acts with this request's token and shows in the activity log with interface `mcp`. Send `Accept: application/json, text/event-stream`: answers are Server-Sent Events, so progress notifications arrive while a command runs. An `initialize` handshake opens an MCP session (`Mcp-Session-Id`, sent back on every later request), through which `notifications/cancelled` reaches the call it names; a call whose request is dropped is cancelled too (its command is killed). A body over policy.max_upload_bytes is refused with 413 and a JSON-RPC error naming the limit.",
                "operationId": "mcp",
                "requestBody": {
                    "required": true,
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "description": "A JSON-RPC 2.0 request or notification"
                    }}}
                },
                "responses": {
                    "200": {
                        "description": "The JSON-RPC response, after any progress notifications",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}}
                    },
                    "202": {"description": "A notification was accepted"},
                    "400": {"description": "Not a JSON-RPC message"},
                    "404": {"description": "No such MCP session (it ended or idled out): initialize again"},
                    "406": {"description": "The request does not accept application/json and text/event-stream"},
                    "413": {
                        "description": "The body is over policy.max_upload_bytes",
                        "content": {"application/json": {"schema": {
                            "type": "object",
                            "description": "A JSON-RPC 2.0 error with id null, naming the limit"
                        }}}
                    }
                }
            },
            "get": {
                "tags": ["mcp"],
                "summary": "An MCP session's stream of messages the server starts (Server-Sent Events)",
                "operationId": "mcp_stream",
                "responses": {
                    "200": {
                        "description": "The stream",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}}
                    },
                    "400": {"description": "No `Mcp-Session-Id` was sent"},
                    "404": {"description": "No such MCP session"},
                    "406": {"description": "The request does not accept `text/event-stream`"}
                }
            },
            "delete": {
                "tags": ["mcp"],
                "summary": "Ends an MCP session (`Mcp-Session-Id`)",
                "operationId": "mcp_end_session",
                "responses": {
                    "202": {"description": "The session ended"},
                    "400": {"description": "No `Mcp-Session-Id` was sent"},
                    "404": {"description": "No such MCP session"}
                }
            }
        },
        "/": {"get": {
            "tags": ["dashboard"],
            "summary": "The dashboard's page; needs no token (the figures it shows come from the API, which does)",
            "operationId": "dashboard",
            "security": no_token,
            "responses": {"200": {
                "description": "The page",
                "content": {"text/html": {"schema": {"type": "string"}}}
            }}
        }},
        "/docs/api": {"get": {
            "tags": ["dashboard"],
            "summary": "This document rendered for people (Swagger UI, compiled in); needs no token, the page asks for one to fetch the document",
            "operationId": "api_reference",
            "security": no_token,
            "responses": {"200": {
                "description": "The page",
                "content": {"text/html": {"schema": {"type": "string"}}}
            }}
        }},
        "/assets/{path}": {"get": {
            "tags": ["dashboard"],
            "summary": "A file of the dashboard (script, style sheet), compiled into the service",
            "operationId": "dashboard_asset",
            "security": no_token,
            "parameters": [{
                "name": "path",
                "in": "path",
                "required": true,
                "description": "The file's path under /assets/",
                "schema": {"type": "string"}
            }],
            "responses": {
                "200": {"description": "The file", "content": {"*/*": {"schema": {"type": "string"}}}},
                "404": {"$ref": "#/components/responses/NotFound"}
            }
        }}
    }))
    .expect("the other routes' descriptions are valid OpenAPI");
    document.paths.paths.extend(paths);
    let port_parameters = json!([
        {"name": "id", "in": "path", "required": true, "description": "The session's id", "schema": {"type": "string"}},
        {"name": "port", "in": "path", "required": true, "description": "The TCP port in the sandbox", "schema": {"type": "integer", "minimum": 1, "maximum": 65535}}
    ]);
    let proxy = crate::proxy_doc::documented_paths(
        "/v1/sessions/{id}/ports/{port}",
        port_parameters,
        false,
    );
    document.paths.paths.extend(proxy);
    let capability = json!([
        {"name": "capability", "in": "path", "required": true, "description": "The link's capability, from POST /v1/sessions/{id}/ports/{port}/share", "schema": {"type": "string"}}
    ]);
    let shared = crate::proxy_doc::documented_paths("/p/{capability}", capability, true);
    document.paths.paths.extend(shared);

    let responses: BTreeMap<String, RefOr<Response>> = serde_json::from_value(json!({
        "Unauthorized": error_response(
            "The token is missing or wrong (`unauthorized`); the answer has `WWW-Authenticate: Bearer`"
        ),
        "Forbidden": error_response(
            "The request's `Host` is not a name the service answers to (`forbidden_host`, a defence against DNS rebinding), or it came from a page on another origin (`forbidden_origin`)"
        ),
        "NotFound": error_response("No such session, file or route (`not_found`)"),
        "Internal": error_response("The service failed (`internal`); its log says why"),
    }))
    .expect("the shared responses are valid OpenAPI");
    let components = document.components.get_or_insert_with(Default::default);
    components.responses.extend(responses);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "The service token: `Authorization: Bearer <token>`. It can start containers on the host: treat it as a root credential.",
                ))
                .build(),
        ),
    );
}

fn error_response(description: &str) -> serde_json::Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    })
}

/// Adds the guard's and the token check's answers to every operation (no 401 where no token
/// is needed), and a 500.
fn add_shared_responses(document: &mut utoipa::openapi::OpenApi) {
    for item in document.paths.paths.values_mut() {
        for operation in operations_mut(item) {
            let needs_token = operation
                .security
                .as_ref()
                .is_none_or(|security| security.iter().any(|s| *s != Default::default()));
            for (status, name) in SHARED_RESPONSES {
                if status == "401" && !needs_token {
                    continue;
                }
                operation
                    .responses
                    .responses
                    .entry(status.to_string())
                    .or_insert_with(|| Ref::from_response_name(name).into());
            }
        }
    }
}

/// Describes each answer of `text/event-stream` event by event, as OpenAPI 3.2 does with
/// `itemSchema` (and tools read `schema` as on 3.1): an object of the event's name, id and data,
/// the data being JSON text of the schema the handler named, if it named one.
fn describe_event_streams(document: &mut utoipa::openapi::OpenApi) {
    let responses = document
        .paths
        .paths
        .values_mut()
        .flat_map(operations_mut)
        .flat_map(|operation| operation.responses.responses.values_mut());
    for response in responses {
        let RefOr::T(response) = response else {
            continue;
        };
        let Some(RefOr::T(stream)) = response.content.get_mut("text/event-stream") else {
            continue;
        };
        let mut data = json!({"type": "string", "contentMediaType": "application/json"});
        if let Some(RefOr::Ref(named)) = &stream.schema {
            data["contentSchema"] = json!({"$ref": named.ref_location});
        }
        let event = json!({
            "type": "object",
            "description": "One event; comment lines are keepalives",
            "required": ["data"],
            "properties": {
                "event": {"type": "string", "description": "The event's name (see the operation)"},
                "id": {"type": "string"},
                "retry": {"type": "integer"},
                "data": data
            }
        });
        stream.schema =
            Some(serde_json::from_value(event).expect("the event schema is valid OpenAPI"));
    }
}

fn operations_mut(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_complete_and_valid() {
        let mut document = ApiDoc::openapi();
        describe_other_routes(&mut document);
        add_shared_responses(&mut document);
        describe_event_streams(&mut document);
        let json: serde_json::Value = serde_json::from_str(&document.to_json().unwrap()).unwrap();
        assert_eq!(json["openapi"], "3.1.0");
        let health = &json["paths"]["/healthz"]["get"];
        assert_eq!(health["security"], json!([{}]));
        assert!(health["responses"].get("401").is_none(), "no token, no 401");
        assert!(health["responses"].get("403").is_some());
        let mcp = &json["paths"]["/mcp"]["post"];
        assert_eq!(
            mcp["responses"]["401"]["$ref"],
            "#/components/responses/Unauthorized"
        );
        assert_eq!(
            json["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
        let stream = &mcp["responses"]["200"]["content"]["text/event-stream"]["schema"];
        assert_eq!(stream["properties"]["data"]["type"], "string", "{stream}");
    }
}
