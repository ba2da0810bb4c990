//! Tool schemas every client takes as they are. schemars writes Rust's integer widths as
//! `format: uint64` and the like (formats JSON Schema does not define, which strict validators
//! warn about on every call) and an `Option` as a type array (`type: ["string", "null"]`),
//! which clients that map schemas onto a single-`type` dialect (the OpenAPI subset of Gemini's
//! function declarations, for one) reject or misread. This transform rewrites the generated
//! schemas: integer formats go (their `minimum` stays); in arguments, where leaving an optional
//! one out says all that null would, the `null` alternative goes; in results, which do write
//! null, a type array becomes `anyOf` branches of one type each.

use rmcp::model::{JsonObject, Tool};
use schemars::transform::{transform_subschemas, Transform};
use schemars::Schema;
use serde_json::Value;
use std::sync::Arc;

/// The formats schemars gives integers, which JSON Schema does not define.
const INTEGER_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
];

/// The tool with portable input and output schemas.
pub fn portable(mut tool: Tool) -> Tool {
    tool.input_schema = rewrite(&tool.input_schema, Portable { arguments: true });
    tool.output_schema = tool
        .output_schema
        .map(|schema| rewrite(&schema, Portable { arguments: false }));
    tool
}

fn rewrite(schema: &JsonObject, mut transform: Portable) -> Arc<JsonObject> {
    let mut schema = Schema::from(schema.clone());
    transform.transform(&mut schema);
    match Value::from(schema) {
        Value::Object(object) => Arc::new(object),
        _ => unreachable!("an object schema stays an object"),
    }
}

struct Portable {
    /// A tool's arguments, where an optional value is one left out rather than null.
    arguments: bool,
}

impl Transform for Portable {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            let integer_format = object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| INTEGER_FORMATS.contains(&format));
            if integer_format {
                object.remove("format");
            }
            if self.arguments {
                drop_null(object);
            } else {
                split_type_array(object);
            }
        }
        transform_subschemas(self, schema);
    }
}

/// The schema without its `null` alternative: `type: ["string", "null"]` becomes `type:
/// "string"`, `anyOf: [A, {type: null}]` becomes A (beside the schema's own keywords), and a
/// `default: null` goes.
fn drop_null(object: &mut JsonObject) {
    let is_null = |value: &Value| value == "null";
    if object.get("default") == Some(&Value::Null) {
        object.remove("default");
    }
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| !is_null(t));
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".into(), only);
        }
    }
    let Some(Value::Array(alternatives)) = object.get_mut("anyOf") else {
        return;
    };
    alternatives.retain(|a| !a.get("type").is_some_and(is_null));
    if let [Value::Object(only)] = alternatives.as_slice() {
        let only = only.clone();
        object.remove("anyOf");
        for (key, value) in only {
            object.entry(key).or_insert(value);
        }
    }
}

/// `type: [A, B]` as `anyOf: [{type: A}, {type: B}]` (the schema's other keywords stay beside
/// it: each applies only to values of its own type).
fn split_type_array(object: &mut JsonObject) {
    let Some(Value::Array(types)) = object.get("type") else {
        return;
    };
    if object.contains_key("anyOf") {
        return;
    }
    let branches = types
        .iter()
        .map(|t| Value::Object(JsonObject::from_iter([("type".to_string(), t.clone())])))
        .collect();
    object.remove("type");
    object.insert("anyOf".into(), Value::Array(branches));
}

#[cfg(test)]
mod tests {
    use crate::tools::{Connector, SandboxTools};
    use rmcp::model::Tool;
    use sandboxd_api::Sandboxes;
    use serde_json::Value;
    use std::sync::Arc;

    /// What a model reads of a tool's description at most; run_code's, which covers two
    /// ways of running code, is held to less.
    const MAX_DESCRIPTION: usize = 900;
    const MAX_RUN_CODE_DESCRIPTION: usize = 400;

    struct Nowhere;

    impl Connector for Nowhere {
        fn connect(&self, _: Option<&http::request::Parts>) -> Result<Box<dyn Sandboxes>, String> {
            Err("no service in this test".into())
        }
    }

    fn tools() -> Vec<Tool> {
        SandboxTools::new(Arc::new(Nowhere)).tools(None, None)
    }

    /// Every object in `value`, at every depth, with its path.
    fn objects<'a>(path: String, value: &'a Value, found: &mut Vec<(String, &'a Value)>) {
        match value {
            Value::Object(object) => {
                found.push((path.clone(), value));
                for (key, child) in object {
                    objects(format!("{path}.{key}"), child, found);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    objects(format!("{path}[{i}]"), child, found);
                }
            }
            _ => {}
        }
    }

    fn schemas(tool: &Tool) -> Vec<(String, Value, bool)> {
        let mut schemas = vec![(
            format!("{}.inputSchema", tool.name),
            Value::Object(tool.input_schema.as_ref().clone()),
            true,
        )];
        if let Some(output) = &tool.output_schema {
            let path = format!("{}.outputSchema", tool.name);
            schemas.push((path, Value::Object(output.as_ref().clone()), false));
        }
        schemas
    }

    #[test]
    fn every_schema_is_portable() {
        for tool in tools() {
            for (path, schema, arguments) in schemas(&tool) {
                let mut found = Vec::new();
                objects(path, &schema, &mut found);
                for (at, object) in found {
                    let kind = &object["type"];
                    assert!(!kind.is_array(), "{at}: a type array {kind}");
                    let format = object["format"].as_str().unwrap_or_default();
                    assert!(
                        !format.starts_with("int") && !format.starts_with("uint"),
                        "{at}: format {format}"
                    );
                    let null_default = object.get("default") == Some(&Value::Null);
                    let null = kind == "null" || null_default;
                    assert!(!(arguments && null), "{at}: a null argument");
                }
            }
        }
    }

    #[test]
    fn every_tool_has_a_title_and_a_short_description() {
        let tools = tools();
        assert_eq!(tools.len(), 24);
        for tool in &tools {
            assert!(
                tool.title.as_deref().is_some_and(|t| !t.is_empty()),
                "{}",
                tool.name
            );
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(
                description.len() <= MAX_DESCRIPTION,
                "{}: {}",
                tool.name,
                description.len()
            );
        }
        let run_code = tools.iter().find(|t| t.name == "run_code").unwrap();
        let description = run_code.description.as_deref().unwrap_or_default();
        assert!(
            description.len() <= MAX_RUN_CODE_DESCRIPTION,
            "{}",
            description.len()
        );
    }

    #[test]
    fn counts_ports_and_durations_start_at_one() {
        let tools = tools();
        for (tool, argument) in [
            ("fork_session", "count"),
            ("share_port", "port"),
            ("share_port", "ttl_secs"),
            ("run_command", "timeout_secs"),
            ("run_code", "timeout_secs"),
        ] {
            let tool = tools.iter().find(|t| t.name == tool).unwrap();
            let property = &tool.input_schema["properties"][argument];
            assert_eq!(
                property["minimum"], 1,
                "{}.{argument}: {property}",
                tool.name
            );
            assert_eq!(property["type"], "integer", "{}.{argument}", tool.name);
        }
    }

    #[test]
    fn an_optional_result_field_stays_nullable_in_one_type_branches() {
        let tools = tools();
        let run = tools.iter().find(|t| t.name == "run_command").unwrap();
        let exit_code = &run.output_schema.as_ref().unwrap()["properties"]["exit_code"];
        assert_eq!(
            exit_code["anyOf"],
            serde_json::json!([{"type": "integer"}, {"type": "null"}])
        );
        let open = tools.iter().find(|t| t.name == "open_session").unwrap();
        assert_eq!(open.input_schema["properties"]["runtime"]["type"], "string");
    }
}
