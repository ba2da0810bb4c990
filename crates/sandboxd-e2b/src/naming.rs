//! How an SDK's request names a sandbox and proves it may reach it: the headers and envd's port,
//! which the router, the signed URLs, the port proxy and the service's admission all read.

/// The header every SDK request to envd carries.
pub const SANDBOX_ID_HEADER: &str = "e2b-sandbox-id";
/// The port a request with [`SANDBOX_ID_HEADER`] is for; envd's when absent.
pub const SANDBOX_PORT_HEADER: &str = "e2b-sandbox-port";
/// The port of envd in an E2B sandbox.
pub const ENVD_PORT: u16 = 49983;
/// The headers that carry a sandbox's access token to the face, never to the sandbox.
pub const ACCESS_TOKEN_HEADERS: [&str; 2] = ["x-access-token", "e2b-traffic-access-token"];
