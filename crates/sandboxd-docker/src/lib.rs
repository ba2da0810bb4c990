//! The Docker Engine implementation of the sandbox backend.
