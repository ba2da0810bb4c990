//! The REST face: one file per resource, each handler extracting its request, calling the
//! core once and answering with its result.

pub mod archive;
pub mod audit;
pub mod computer;
pub mod computer_view;
pub mod contexts;
pub mod events;
pub mod exec_stream;
pub mod files;
pub mod files_meta;
pub mod network;
pub mod pause;
pub mod ports;
pub mod processes;
pub mod service;
pub mod sessions;
pub mod share_cookies;
pub mod share_host;
pub mod share_path;
pub mod snapshots;
pub mod stream;
pub mod terminal;
pub mod tickets;
pub mod tunnel;
pub mod volumes;
