//! Types of the sandboxd HTTP API, shared by the server, the client and the tests.
//!
//! Everything here is plain data: what goes over the wire as JSON. The config crate resolves
//! the operator's file into [`RuntimeInfo`] and [`Policy`], so the service shows exactly what
//! is in force.

mod activity;
mod computer;
mod contexts;
mod egress;
mod error;
mod exec;
mod files;
mod files_meta;
mod lifecycle;
mod output_watch;
mod policy;
mod ports;
mod processes;
mod remedy;
mod runtimes;
mod sandboxes;
mod service;
mod sessions;
mod snapshots;
mod text;
mod volumes;

pub use activity::{ActivityEntry, ActivityList, AuditEntry, AuditList, CLIENT_HEADER};
pub use computer::{
    ComputerAction, ComputerRequest, ComputerResult, MouseButton, Point, Recording,
    RecordingRequest, Region, ScreenSize, ScreenViewMessage, Screenshot, ScrollDirection,
    DEFAULT_SCREEN, MAX_RECORDING_FPS, MAX_TYPED_CHARS,
};
pub use contexts::{
    CodeEnd, CodeError, CodeEvent, CodeResult, ContextInfo, ContextList, ContextRequest, RunCode,
};
pub use egress::{
    egress_allows, first_widening, normalize_host, EgressRule, SessionNetwork,
    DEFAULT_EGRESS_PORTS, MAX_EGRESS_RULES,
};
pub use error::{ErrorBody, ErrorDetail};
pub use exec::{ExecRequest, ExecResult};
pub use files::{ArchiveWritten, FileDeleted, FileEntry, FileKind, FileList, FileWritten};
pub use files_meta::{DirMade, FileChange, FileChangeKind, FileInfo, MakeDir, MovePath};
pub use lifecycle::LifecycleKind;
pub use output_watch::OutputWatch;
pub use policy::{
    IdleAction, Policy, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONTEXTS_PER_SESSION,
    DEFAULT_MAX_CONTEXTS_PER_TENANT, DEFAULT_MAX_DNS_LOOKUPS, DEFAULT_MAX_DNS_LOOKUPS_PER_SANDBOX,
    DEFAULT_MAX_PORT_CONNECTIONS_PER_TENANT, DEFAULT_MAX_REQUESTS_PER_CALLER, DEFAULT_MAX_SHARES,
    DEFAULT_MAX_SHARES_PER_SESSION, DEFAULT_MAX_SHARES_PER_TENANT, DEFAULT_MAX_WATCHES,
    DEFAULT_MAX_WATCHES_PER_SESSION, DEFAULT_MAX_WATCHES_PER_TENANT, DEFAULT_MCP_OUTPUT_BYTES,
    DEFAULT_RESERVED_CONNECTIONS, DEFAULT_VOLUME_QUOTA_BYTES, DEFAULT_VOLUME_QUOTA_COUNT,
};
pub use ports::{PortInfo, PortList, ShareInfo, ShareList, ShareRequest, TUNNEL_PROTOCOL};
pub use processes::{
    InputWritten, KilledProcesses, OutputChunk, OutputDropped, ProcessInfo, ProcessInput,
    ProcessList, ProcessState, SignalRequest, SignalSpec, StartProcess, TerminalMessage,
    TerminalSize, Ticket,
};
pub use remedy::{with_wording, without_rest_wording, Remedy};
pub use runtimes::{
    BuildProgress, ImageStatus, Isolation, Limits, NetworkMode, RuntimeBuildEvent, RuntimeEntry,
    RuntimeInfo, RuntimeList,
};
pub use sandboxes::{read_bounded, Chunks, Failure, Sandboxes};
pub use service::{ConfigView, Stats, TenantInfo};
pub use sessions::{
    CreateSession, PausedMemory, SessionChange, SessionInfo, SessionList, SessionState,
};
pub use snapshots::{ForkRequest, ForkResult, SnapshotInfo, SnapshotList, SnapshotRequest};
pub use text::strip_ansi;
pub use volumes::{VolumeInfo, VolumeList, VolumeMountRequest, VolumeRequest, VolumeSize};
