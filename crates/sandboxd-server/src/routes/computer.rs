//! Computer use on a desktop session: one route for every action (an `action` and the fields
//! it takes, as model providers' computer-use tools are shaped, so an agent's tool call passes
//! through unchanged and every action has one way in, one check and one activity entry), and
//! the screenshot alone as an image, for a person or a program that wants the PNG itself.

use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, Authenticated, JsonRequest, QueryRequest};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_api::{ComputerRequest, ComputerResult, Recording, RecordingRequest, Region};
use serde::Deserialize;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// An action's body: at most 10000 characters of text to type, and the rest.
pub const BODY_LIMIT: usize = 128 << 10;

impl JsonRequest for ComputerRequest {
    const WHAT: &'static str = "computer action";
    const HINT: &'static str =
        "; send e.g. {\"action\": \"click\", \"x\": 100, \"y\": 200} or {\"action\": \"screenshot\"}";
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/computer",
    tag = "computer",
    summary = "One action on a desktop session's screen, mouse or keyboard",
    description = "For a session of a runtime of the `desktop` recipe (the embedded default's `desktop`): `screenshot` (a PNG, base64, of the screen or `region`, at most `max_width` wide), `mouse_move`, `click` (`button` left, middle or right), `double_click`, `mouse_down`, `mouse_up`, `drag` (from `x`, `y` to `to_x`, `to_y`), `scroll` (`direction`, `amount`), `key` (`keys`: X key names, chords joined with `+`, e.g. `ctrl+c Return`), `type` (`text`), `screen_size`, `cursor_position`. Coordinates are screen pixels; mouse actions take `x` and `y` together or neither (then they act where the pointer is). `screenshot: true` adds a screenshot taken after any action. The first action finds the display started (Xvfb and XFCE at 1024x768) if nothing draws it yet. Each action is an activity entry (`computer_click`, ...) with its coordinates, buttons or key names; typed text is recorded by its length only.",
    params(("id" = String, Path, description = "The session's id")),
    request_body = ComputerRequest,
    responses(
        (status = 200, description = "What the action read, and the screenshot when asked", body = ComputerResult),
        (status = 400, description = "`invalid_request`: a field the action does not take, a missing one, or a key that is not a key name", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`no_desktop` (the runtime has no desktop), `no_display` (the display did not start) or `computer_failed` (xdotool or scrot failed, with what it said)", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn act(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<ComputerRequest>,
) -> Result<Json<ComputerResult>, ApiError> {
    Ok(Json(state.core.computer(&caller, &id, request).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotQuery {
    max_width: Option<u32>,
    x: Option<u32>,
    y: Option<u32>,
    width: Option<u32>,
    height: Option<u32>,
}

impl QueryRequest for ScreenshotQuery {
    const TAKES: &'static str =
        "`max_width`, and a region as `x`, `y`, `width` and `height` (all four or none)";
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/computer/screenshot",
    tag = "computer",
    summary = "A PNG of a desktop session's screen",
    description = "The screen, or the region `x`, `y`, `width`, `height` (screen pixels, all four or none), scaled down to at most `max_width` wide keeping its proportions. The headers `Sandboxd-Screen-Region` (`x,y,width,height`: the part of the screen shown) and the image's own size map its pixels back to the screen. An activity entry `computer_screenshot`.",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("max_width" = Option<u32>, Query, description = "The widest the image may be"),
        ("x" = Option<u32>, Query, description = "The region's left edge"),
        ("y" = Option<u32>, Query, description = "The region's top edge"),
        ("width" = Option<u32>, Query, description = "The region's width"),
        ("height" = Option<u32>, Query, description = "The region's height")
    ),
    responses(
        (status = 200, description = "The PNG", content_type = "image/png", body = String),
        (status = 400, description = "`invalid_request`: part of a region, or one outside the screen", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`no_desktop`, `no_display` or `computer_failed`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn screenshot(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ScreenshotQuery>,
) -> Result<Response, ApiError> {
    let region = match (query.x, query.y, query.width, query.height) {
        (Some(x), Some(y), Some(width), Some(height)) => Some(Region {
            x,
            y,
            width,
            height,
        }),
        (None, None, None, None) => None,
        _ => {
            return Err(sandboxd_core::Error::bad_request(
                "invalid_request",
                "a region takes `x`, `y`, `width` and `height` together, or none of them",
            )
            .into())
        }
    };
    let shot = state
        .core
        .screenshot(&caller, &id, region, query.max_width)
        .await?;
    let source = shot.source;
    let region_header = format!(
        "{},{},{},{}",
        source.x, source.y, source.width, source.height
    );
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static("image/png")),
        (
            HeaderName::from_static("sandboxd-screen-region"),
            HeaderValue::from_str(&region_header).expect("digits and commas"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    Ok((headers, shot.png).into_response())
}

impl JsonRequest for RecordingRequest {
    const WHAT: &'static str = "recording";
    const HINT: &'static str = "; send {} or e.g. {\"path\": \"/workspace/demo.mp4\", \"fps\": 10}";
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/computer/recording",
    tag = "computer",
    summary = "Start recording a desktop session's screen to a video file in the sandbox",
    description = "ffmpeg records the display (x11grab; the display is started first if nothing draws it) into `path` (default `/workspace/screen-<unix time>.mp4`), H.264 in fragmented MP4, so the file plays even if the recording is cut short, at `fps` frames a second (1 to 30, default 10), until `DELETE` stops it. One recording at a time per session. An activity entry `computer_record_start` with the path.",
    params(("id" = String, Path, description = "The session's id")),
    request_body = RecordingRequest,
    responses(
        (status = 200, description = "Recording", body = Recording),
        (status = 400, description = "`invalid_request`: a path that is not absolute or does not end in .mp4, or `fps` out of range", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`recording_running`, `no_desktop`, `no_display` or `computer_failed` (ffmpeg did not start, with what it said)", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn start_recording(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<RecordingRequest>,
) -> Result<Json<Recording>, ApiError> {
    Ok(Json(
        state.core.start_recording(&caller, &id, request).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}/computer/recording",
    tag = "computer",
    summary = "Stop recording a desktop session's screen",
    description = "Stops ffmpeg (SIGINT, so it ends the file; killed after 10 s) and answers the file's path and size; read it with the files API. An activity entry `computer_record_stop` with the path and the size.",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The recording's file", body = Recording),
        (status = 409, description = "`no_recording`: nothing is being recorded", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn stop_recording(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Recording>, ApiError> {
    Ok(Json(state.core.stop_recording(&caller, &id).await?))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(act).layer(DefaultBodyLimit::max(BODY_LIMIT)))
        .routes(routes!(screenshot))
        .routes(routes!(start_recording, stop_recording))
}
