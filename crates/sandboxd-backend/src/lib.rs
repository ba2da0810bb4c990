//! The sandbox backend trait: what the service needs from a container platform.
