//! Background processes and the interactive terminal, through the real service and real
//! sandboxes: streaming and resuming output, stdin, signals, timeouts, the WebSocket
//! terminal, and what happens when the sandbox kills its own agent.

mod common;

#[path = "processes/control.rs"]
mod control;
#[path = "processes/failures.rs"]
mod failures;
#[path = "processes/helpers.rs"]
mod helpers;
#[path = "processes/output.rs"]
mod output;
#[path = "processes/terminal.rs"]
mod terminal;
