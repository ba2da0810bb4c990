//! The service side of the protocol: async framing, the dial-in [`AgentHub`] and the clients.

mod archive;
mod exec;
mod files;
mod files_meta;
mod framing;
mod hub;
mod kernel;
mod ports;
mod process;
mod secret;
mod wake;

pub use archive::{archive_stream_limit, open_archive, upload_archive, ArchiveDownload};
pub use exec::{ping, run_exec, ExecResult, OutputSink, OUTPUT_SINK};
pub use files::{
    delete_path, list_dir, open_file, upload_file, DirListing, FileDownload, ReadLimits,
    UploadError,
};
pub use files_meta::{make_dir, move_path, stat_path, watch_dir, DirWatch};
pub use framing::{read_frame, write_frame, write_json};
pub use hub::{AgentHub, AgentLease, HELLO_TIMEOUT, MAX_IDLE};
pub use kernel::{
    declare_kernel, item_size, list_kernels, shutdown_kernel, start_kernel_run, KernelItem,
    KernelRun,
};
pub use ports::{carry, connect_port, list_ports, Carried};
pub use process::{
    attach_process, kill_all_processes, list_processes, resize_process, signal_process,
    start_process, write_process_stdin, OutputEvent, ProcessInput, ProcessOutput,
};
pub use secret::{claim, AgentKey};
pub use wake::{make_wake_fifo, wake_agent};
