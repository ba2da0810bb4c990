//! A typed async client for the sandboxd HTTP API.
//!
//! The `sandboxd` command line and the MCP bridge both talk to the service through this crate.
//! A [`Client`] holds the service's URL, the token and the [`Interface`] it speaks for, which
//! the service records in each session's activity log.

mod archive;
mod client;
mod code;
mod error;
mod exec_stream;
mod files_meta;
mod network;
mod ports;
mod processes;
mod sandboxes;
mod snapshots;
mod streams;
mod terminal;
mod volumes;

pub use archive::ArchiveDownload;
pub use client::{Client, Interface, DEFAULT_URL, REQUEST_TIMEOUT};
pub use error::ClientError;
pub use files_meta::FileWatch;
pub use processes::{OutputEvent, OutputStream};
pub use reqwest::Body;
pub use streams::{FileDownload, RuntimeBuild};
pub use terminal::{Terminal, TerminalEvent};
