//! A session's interactive terminal: `/bin/sh` on a pty, both directions over one agent
//! connection.

use crate::core::Core;
use crate::error::{Error, CODE_SPAWN_FAILED};
use crate::ops::processes::{api_info, plan, process_error, terminal_size, CONTROL_TIMEOUT};
use crate::state::activity::{Caller, PendingEntry};
use sandboxd_agent_proto::host::{
    attach_process, start_process, OutputEvent, ProcessInput as AgentInput, ProcessOutput,
};
use sandboxd_api::{ProcessInfo, StartProcess};
use sandboxd_backend::AgentStream;
use tokio::io::{ReadHalf, WriteHalf};

impl Core {
    /// Starts `/bin/sh` (or `/bin/sh -c COMMAND`) on a new terminal and attaches to it, on one
    /// connection, so no process is left without its terminal for want of a second one.
    pub async fn open_terminal(
        &self,
        caller: &Caller,
        session_id: &str,
        cols: Option<u16>,
        rows: Option<u16>,
        command: Option<String>,
    ) -> Result<Terminal, Error> {
        let session = self.running_session(caller, session_id, "pty")?;
        // An interactive shell is a place to work, not one command: it may last the longest.
        let request = StartProcess {
            argv: command.is_none().then(|| vec!["/bin/sh".to_string()]),
            command,
            pty: true,
            cols,
            rows,
            timeout_secs: Some(self.config().policy.max_timeout_secs),
            ..StartProcess::default()
        };
        let planned = plan(request, &self.config().policy)?;
        let mut entry = self.entry(caller, &session, "pty", &planned.program);
        let attached = async {
            let mut agent = self.connect(&session).await?;
            let info = start_process(&mut agent, &planned, CONTROL_TIMEOUT)
                .await
                .map_err(|e| match process_error(e) {
                    Error::BadRequest {
                        code: CODE_SPAWN_FAILED,
                        message,
                    } => Error::bad_request(
                        CODE_SPAWN_FAILED,
                        format!(
                            "a terminal runs /bin/sh, and this sandbox cannot run it: {message}"
                        ),
                    ),
                    other => other,
                })?;
            let (output, input) = attach_process(agent, &info.id, 0, true, CONTROL_TIMEOUT)
                .await
                .map_err(process_error)?;
            Ok((info, output, input))
        };
        let (info, output, input) = attached.await.map_err(|e| entry.fail(e))?;
        Ok(Terminal {
            info: api_info(info),
            output: TerminalOutput { output },
            input: TerminalInput { input },
            entry,
        })
    }
}

/// An interactive terminal: its process, both directions, and its activity entry (which the
/// face records when the terminal ends, and touches as keystrokes and output pass).
pub struct Terminal {
    pub info: ProcessInfo,
    pub output: TerminalOutput,
    pub input: TerminalInput,
    pub entry: PendingEntry,
}

pub struct TerminalOutput {
    output: ProcessOutput<ReadHalf<AgentStream>>,
}

impl TerminalOutput {
    /// The terminal's next bytes; `Err(info)` once the process exited. A terminal is drawn
    /// from its byte stream, so nothing stands in for a gap the agent reports.
    pub async fn next(&mut self) -> Result<Result<Vec<u8>, ProcessInfo>, Error> {
        loop {
            match self.output.next().await.map_err(process_error)? {
                OutputEvent::Output { data, .. } => return Ok(Ok(data)),
                OutputEvent::Dropped { .. } => {}
                OutputEvent::Exited(info) => return Ok(Err(api_info(info))),
            }
        }
    }
}

pub struct TerminalInput {
    input: AgentInput<WriteHalf<AgentStream>>,
}

impl TerminalInput {
    pub async fn send(&mut self, data: &[u8]) -> Result<(), Error> {
        self.input.send(data).await.map_err(process_error)
    }

    /// Resizes the terminal; a size out of range is ignored.
    pub async fn resize(&mut self, cols: u16, rows: u16) -> Result<(), Error> {
        match terminal_size(Some(cols), Some(rows)) {
            Ok(size) => self.input.resize(size).await.map_err(process_error),
            Err(_) => Ok(()),
        }
    }
}
