//! What a tool call answers: its content once as readable text (for hosts that show only text)
//! and once as structured content matching the tool's output schema; or a refusal.

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

    /// `value` as structured content, with `text` for those who read.
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
