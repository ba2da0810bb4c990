//! The one place that turns a failed exchange with a session's agent into an [`Error`] (a
//! connection to the agent is had through `Core::connect`, in `ops/access.rs`). Anything in a
//! sandbox can pose as its agent, so what it says is passed on only cut short and without
//! control characters.

use crate::error::{Error, CODE_EXISTS, CODE_SPAWN_FAILED};
use crate::state::activity::agent_text;
use sandboxd_agent_proto::{self as proto, ErrorCode, ProtoError};
use sandboxd_api::Remedy;
use sandboxd_backend::BackendError;
use std::io::ErrorKind;

/// What was asked of the agent, for the hints an error carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Exec,
    ListFiles,
    ReadFile,
    WriteFile,
    DeleteFile,
    Process,
    StatFile,
    MakeDir,
    MovePath,
    WatchDir,
    Port,
    Code,
}

/// The error for a failed exchange with the agent: its own refusals become the API's codes,
/// with a hint where one helps; a connection it closed or reset means it is gone or going
/// (killed from inside the sandbox), and no answer in time that it is frozen or starved:
/// `agent_unavailable`, as when no connection can be had.
pub fn agent_error(operation: Operation, error: ProtoError) -> Error {
    let ProtoError::Agent { code, message } = error else {
        return exchange_error(&error);
    };
    let (hint, remedy) = hint(operation, &code);
    let message = match hint {
        Some(hint) => format!("{}; {hint}", agent_text(&message)),
        None => agent_text(&message),
    };
    let conflict = |code| Error::Conflict {
        code,
        message: message.clone(),
    };
    let forbidden = |code| Error::Forbidden {
        code,
        message: message.clone(),
    };
    let limit = |code| Error::LimitReached {
        code,
        message: message.clone(),
    };
    // Exhaustive: a code added to the protocol is mapped here before this compiles.
    let error = match code {
        ErrorCode::NotFound | ErrorCode::NoSuchProcess => Error::NotFound(message),
        ErrorCode::IsDirectory => conflict(proto::ERROR_IS_DIRECTORY),
        ErrorCode::NotADirectory => conflict(proto::ERROR_NOT_A_DIRECTORY),
        ErrorCode::NotAFile => conflict(proto::ERROR_NOT_A_FILE),
        ErrorCode::Busy => conflict(proto::ERROR_BUSY),
        ErrorCode::Exists => conflict(CODE_EXISTS),
        ErrorCode::CrossDevice => conflict(proto::ERROR_CROSS_DEVICE),
        ErrorCode::ConnectionRefused => Error::BadGateway {
            code: "port_closed",
            message,
        },
        ErrorCode::StdinUnavailable => conflict("stdin_unavailable"),
        ErrorCode::NotATerminal => conflict("not_a_terminal"),
        ErrorCode::ProcessExited => conflict("process_exited"),
        ErrorCode::ReadOnly => forbidden(proto::ERROR_READ_ONLY),
        ErrorCode::PermissionDenied => forbidden(proto::ERROR_PERMISSION_DENIED),
        ErrorCode::TooManyProcesses => limit("too_many_processes"),
        ErrorCode::TooManyStreams => limit("too_many_streams"),
        ErrorCode::TooLarge => Error::PayloadTooLarge(message),
        ErrorCode::NoSpace => Error::InsufficientStorage(message),
        ErrorCode::InvalidPath => Error::bad_request(proto::ERROR_INVALID_PATH, message),
        ErrorCode::SpawnFailed => Error::bad_request(CODE_SPAWN_FAILED, message),
        ErrorCode::BadRequest => Error::bad_request("invalid_request", message),
        ErrorCode::KernelUnavailable => conflict("kernel_unavailable"),
        // Codes only an agent sends that the service never asks for anything it could
        // refuse so, and codes this build does not know: reported as the agent's words.
        ErrorCode::Io | ErrorCode::Cancelled | ErrorCode::Other(_) => {
            Error::Agent(format!("{}: {message}", agent_text(code.as_str())))
        }
    };
    match remedy {
        Some(remedy) => error.with_remedy(remedy),
        None => error,
    }
}

/// A failed exchange that carries no error code of the agent's own.
fn exchange_error(error: &ProtoError) -> Error {
    let closed = match error {
        ProtoError::Closed => true,
        ProtoError::Io(e) => matches!(
            e.kind(),
            ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof
        ),
        _ => false,
    };
    if closed {
        return Error::Backend(BackendError::AgentUnavailable(format!(
            "{error}; the sandbox may have killed its agent, or the session was paused to disk meanwhile (which ends the calls in flight; the next call resumes it)"
        )));
    }
    if let ProtoError::Timeout(_) = error {
        return Error::Backend(BackendError::AgentUnavailable(format!(
            "{error}; the sandbox may have frozen its agent or be overloaded (a session whose agent stops answering is ended)"
        )));
    }
    // The message may quote what the agent sent.
    Error::Agent(agent_text(&error.to_string()))
}

/// What an agent's refusal of `operation` adds: a hint any face can show as it is, and a
/// remedy each face words itself.
fn hint(operation: Operation, code: &ErrorCode) -> (Option<&'static str>, Option<Remedy>) {
    match (operation, code) {
        (Operation::DeleteFile, ErrorCode::IsDirectory) => {
            (None, Some(Remedy::DeleteRecursively))
        }
        (Operation::ReadFile, ErrorCode::IsDirectory) => (None, Some(Remedy::ListDirectory)),
        (Operation::ReadFile, ErrorCode::TooLarge) => (
            Some("downloads are limited to policy.max_upload_bytes, a sparse file's holes to the runtime's tmpfs_size, and a file that reports no size to policy.max_output_bytes"),
            Some(Remedy::ReadPart),
        ),
        (Operation::ListFiles, ErrorCode::NotADirectory) => (None, Some(Remedy::ReadFile)),
        (Operation::WriteFile, ErrorCode::ReadOnly) => (
            Some("the sandbox's root is read-only; write under the working directory or /tmp"),
            None,
        ),
        (Operation::MakeDir | Operation::MovePath, ErrorCode::ReadOnly) => (
            Some("the sandbox's root is read-only; work under the working directory or /tmp"),
            None,
        ),
        (Operation::MovePath, ErrorCode::CrossDevice) => (
            Some("the working directory, /tmp and the root are separate filesystems; copy the file (read it and write it) instead"),
            None,
        ),
        (Operation::WriteFile, ErrorCode::NoSpace) => (
            Some("the sandbox's writable space is full; delete files or write less"),
            None,
        ),
        (_, ErrorCode::TooManyProcesses) => (None, Some(Remedy::KillAll)),
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn refusal(code: &str, message: &str) -> Error {
        agent_error(
            Operation::Process,
            ProtoError::Agent {
                code: code.into(),
                message: message.into(),
            },
        )
    }

    #[test]
    fn agent_refusals_map_to_api_errors_and_are_kept_short() {
        assert!(matches!(
            refusal("no_such_process", "x").kind(),
            Error::NotFound(_)
        ));
        assert_eq!(
            refusal("too_many_processes", "x").code(),
            "too_many_processes"
        );
        assert_eq!(
            refusal("stdin_unavailable", "x").code(),
            "stdin_unavailable"
        );
        assert_eq!(refusal("spawn_failed", "x").code(), "spawn_failed");
        let long = "y".repeat(10_000);
        match refusal(&long, &long) {
            Error::Agent(message) => assert!(message.len() < 1200, "{}", message.len()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_connection_the_agent_dropped_or_a_silent_agent_means_it_is_unavailable() {
        let gone = |e| agent_error(Operation::Exec, e).code();
        assert_eq!(gone(ProtoError::Closed), "agent_unavailable");
        let reset = std::io::Error::from(ErrorKind::ConnectionReset);
        assert_eq!(gone(ProtoError::Io(reset)), "agent_unavailable");
        assert_eq!(
            gone(ProtoError::Timeout(Duration::from_secs(1))),
            "agent_unavailable"
        );
        assert_eq!(gone(ProtoError::Unexpected("x".into())), "agent_error");
    }

    #[test]
    fn file_refusals_carry_a_hint_for_the_operation() {
        let error = agent_error(
            Operation::DeleteFile,
            ProtoError::Agent {
                code: ErrorCode::IsDirectory,
                message: "is a directory".into(),
            },
        );
        assert_eq!(error.code(), "is_directory");
        assert_eq!(error.remedy(), Some(Remedy::DeleteRecursively));
        assert!(!error.to_string().contains("recursive"), "{error}");
    }
}
