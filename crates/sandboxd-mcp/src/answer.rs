//! What a tool call answers: readable text (for hosts that show only text) and structured
//! content matching the tool's output schema; or a refusal.
//!
//! Most tools answer small records, whose text is the structured content as indented JSON, as
//! the MCP specification recommends. A command's result is the exception: its output is in
//! the text only, and its structured content holds the facts (exit code, byte counts, flags,
//! files), so the output counts once against what a model reads.

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

/// A successful answer.
pub struct Answer {
    text: String,
    structured: Value,
    /// Image content blocks after the text: (base64 data, MIME type).
    images: Vec<(String, String)>,
}

impl Answer {
    /// `value` as structured content, and as indented JSON text.
    pub fn json(value: &impl Serialize) -> Answer {
        let structured = serde_json::to_value(value).unwrap_or(Value::Null);
        let text = serde_json::to_string_pretty(&structured).unwrap_or_default();
        Answer {
            text,
            structured,
            images: Vec::new(),
        }
    }

    /// `value` as structured content, with `text` for those who read: the same facts in
    /// words, and what `value` leaves out for its size (a command's output).
    pub fn with_text(text: String, value: &impl Serialize) -> Answer {
        Answer {
            text,
            structured: serde_json::to_value(value).unwrap_or(Value::Null),
            images: Vec::new(),
        }
    }

    /// The answer with `images` as image content blocks after its text.
    pub fn with_images(mut self, images: Vec<(String, String)>) -> Answer {
        self.images = images;
        self
    }
}

impl IntoCallToolResult for Answer {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        let mut content = vec![ContentBlock::text(self.text)];
        content.extend(
            self.images
                .into_iter()
                .map(|(data, mime)| ContentBlock::image(data, mime)),
        );
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(self.structured);
        Ok(result.into())
    }
}

/// A call that did not succeed: a tool error the agent reads and acts on (a failed operation),
/// or a JSON-RPC error (a request the service will not take at all, e.g. over a size limit).
pub enum Refusal {
    Tool(String),
    Request(rmcp::ErrorData),
}

impl From<String> for Refusal {
    fn from(text: String) -> Refusal {
        Refusal::Tool(text)
    }
}

impl IntoCallToolResult for Refusal {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        match self {
            Refusal::Tool(text) => Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into()),
            Refusal::Request(error) => Err(error),
        }
    }
}
