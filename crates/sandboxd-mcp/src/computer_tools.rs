//! The computer-use tool: one tool taking an `action` and its fields, as model providers'
//! computer-use tools are shaped, on a desktop session (a runtime of the `desktop` recipe).
//! A screenshot comes back as an image content block at most 1280 pixels wide (a size models
//! read well); any action can ask for a fresh one after it. A router of its own, added to the
//! other tools' in [`SandboxTools::new`].

use crate::answer::{Answer, Refusal};
use crate::errors::tool_error;
use crate::tools::SandboxTools;
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use sandboxd_api::{ComputerAction, ComputerRequest, ComputerResult, MouseButton, ScrollDirection};
use schemars::JsonSchema;
use serde::Deserialize;

/// The widest screenshot the tool answers with.
pub const MAX_SCREENSHOT_WIDTH: u32 = 1280;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComputerParams {
    /// The session's id, as open_session returned it (a session of the "desktop" runtime).
    pub session_id: String,
    /// What to do: screenshot, mouse_move, click, double_click, mouse_down, mouse_up, drag,
    /// scroll, key, type, screen_size or cursor_position.
    pub action: ComputerAction,
    /// Screen pixels from the left (with y): where a mouse action acts, or where a drag starts.
    #[serde(default)]
    pub x: Option<u32>,
    /// Screen pixels from the top.
    #[serde(default)]
    pub y: Option<u32>,
    /// Where a drag ends.
    #[serde(default)]
    pub to_x: Option<u32>,
    #[serde(default)]
    pub to_y: Option<u32>,
    /// For click, mouse_down and mouse_up: left (default), middle or right.
    #[serde(default)]
    pub button: Option<MouseButton>,
    /// For scroll: up, down, left or right.
    #[serde(default)]
    pub direction: Option<ScrollDirection>,
    /// For scroll: wheel notches, 1 to 50 (default 3).
    #[serde(default)]
    pub amount: Option<u32>,
    /// For key: X key names, a chord joined with "+", several separated by spaces, e.g.
    /// "ctrl+l", "Return", "ctrl+shift+t", "Page_Down".
    #[serde(default)]
    pub keys: Option<String>,
    /// For type: the text to type (at most 10000 characters).
    #[serde(default)]
    pub text: Option<String>,
    /// After any action: also answer with a fresh screenshot.
    #[serde(default)]
    pub screenshot: bool,
}

#[tool_router(router = computer_tool_router, vis = "pub(crate)")]
impl SandboxTools {
    #[tool(
        title = "Use the computer",
        description = "Look at and operate a desktop session's screen (open_session with the runtime \"desktop\": XFCE and Chromium on a 1024x768 screen). action: screenshot (answers an image, at most 1280 pixels wide), mouse_move, click (x, y, button), double_click, mouse_down, mouse_up, drag (x, y to to_x, to_y), scroll (direction, amount), key (keys: e.g. \"ctrl+l\", \"Return\"), type (text), screen_size, cursor_position. Coordinates are screen pixels; a mouse action without x and y acts where the pointer is. Set screenshot: true on any action to see the screen after it. Start applications with run_command, e.g. `chromium http://localhost:8000 &`; the display is :0 and starts with the first action.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<ComputerResult>()
    )]
    async fn computer(
        &self,
        Parameters(params): Parameters<ComputerParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let takes_screenshot = params.action == ComputerAction::Screenshot || params.screenshot;
        let request = ComputerRequest {
            x: params.x,
            y: params.y,
            to_x: params.to_x,
            to_y: params.to_y,
            button: params.button,
            direction: params.direction,
            amount: params.amount,
            keys: params.keys,
            text: params.text,
            max_width: takes_screenshot.then_some(MAX_SCREENSHOT_WIDTH),
            screenshot: params.screenshot && params.action != ComputerAction::Screenshot,
            ..ComputerRequest::new(params.action)
        };
        let mut result = client
            .computer(&params.session_id, request)
            .await
            .map_err(tool_error)?;
        let image = result
            .screenshot
            .as_mut()
            .map(|shot| std::mem::take(&mut shot.png_base64));
        let answer = Answer::with_text(result_text(&result), &result);
        Ok(match image {
            Some(png) => answer.with_images(vec![(png, "image/png".to_string())]),
            None => answer,
        })
    }
}

/// The result in words: what was read, and how the screenshot maps to the screen.
fn result_text(result: &ComputerResult) -> String {
    let mut parts = Vec::new();
    if let Some(screen) = result.screen {
        parts.push(format!("The screen is {}x{}.", screen.width, screen.height));
    }
    if let Some(cursor) = result.cursor {
        parts.push(format!("The pointer is at {},{}.", cursor.x, cursor.y));
    }
    if let Some(shot) = &result.screenshot {
        let source = shot.source;
        if shot.width == source.width {
            parts.push(format!(
                "Screenshot of the {}x{} screen: its pixels are screen pixels.",
                shot.width, shot.height
            ));
        } else {
            parts.push(format!(
                "Screenshot of the {}x{} screen, shown at {}x{}: multiply its coordinates by {:.3} for screen pixels.",
                source.width,
                source.height,
                shot.width,
                shot.height,
                f64::from(source.width) / f64::from(shot.width)
            ));
        }
    }
    if parts.is_empty() {
        "Done.".to_string()
    } else {
        parts.join(" ")
    }
}
