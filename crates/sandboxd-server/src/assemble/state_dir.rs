//! The service's state directory: made private, and holding what a restart must find again
//! (the generated token, the instance id) and the copy of the agent that sandboxes mount.

use super::AssembleError;
use rand::Rng;
use sandboxd_config::{check_token, to_hex, Config, TokenSource};
use sandboxd_docker::is_static_elf;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Creates `dir` as 0700, or tightens it to 0700: the state directory and every directory in
/// it are the service's alone (the engine, as root, still bind-mounts from them).
pub fn create_private_dir(dir: &Path) -> Result<(), AssembleError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| AssembleError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|source| {
        AssembleError::SetPermissions {
            path: dir.to_path_buf(),
            source,
        }
    })
}

/// A new random token (256 bits, in hex).
pub fn new_token() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    to_hex(&bytes)
}

/// The token, and a sentence saying where it comes from (never the token itself).
pub fn resolve_token(
    config: &Config,
    given: Option<String>,
    state_dir: &Path,
) -> Result<(String, String), AssembleError> {
    if let Some(token) = given {
        check_token(&token, "SANDBOXD_TOKEN")?;
        return Ok((
            token,
            "the token is the one in the SANDBOXD_TOKEN variable".into(),
        ));
    }
    match &config.token {
        TokenSource::Inline(token) => Ok((
            token.clone(),
            "the token is the one in the config file".into(),
        )),
        TokenSource::File(path) => {
            let token = std::fs::read_to_string(path)
                .map_err(|source| AssembleError::ReadTokenFile {
                    path: path.clone(),
                    source,
                })?
                .trim()
                .to_string();
            check_token(&token, "token_file")?;
            Ok((token, format!("the token is in {}", path.display())))
        }
        TokenSource::Generated => generated_token(&state_dir.join("token")),
    }
}

/// The token the service made at its first start, or a new one written to `path` now.
fn generated_token(path: &Path) -> Result<(String, String), AssembleError> {
    let origin = format!(
        "the token is in {} (read it with: cat {})",
        path.display(),
        path.display()
    );
    match std::fs::read_to_string(path) {
        Ok(token) => {
            let token = token.trim().to_string();
            check_token(&token, &path.display().to_string())?;
            Ok((token, origin))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = new_token();
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|source| AssembleError::Create {
                    path: path.to_path_buf(),
                    source,
                })?;
            writeln!(file, "{token}").map_err(|source| AssembleError::Write {
                path: path.to_path_buf(),
                source,
            })?;
            Ok((token, format!("{origin}; it was generated now")))
        }
        Err(source) => Err(AssembleError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// An id for this service's sandboxes, kept in the state directory so a restart finds them.
pub fn instance_id(state_dir: &Path) -> Result<String, AssembleError> {
    let path = state_dir.join("instance-id");
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => Ok(id.trim().to_string()),
        _ => {
            let bytes: [u8; 8] = rand::rng().random();
            let id = to_hex(&bytes);
            std::fs::write(&path, format!("{id}\n"))
                .map_err(|source| AssembleError::Write { path, source })?;
            Ok(id)
        }
    }
}

/// Copies the agent into the state directory, so the bind-mounted file never changes under a
/// running sandbox when the build output is replaced.
pub fn install_agent(explicit: Option<&Path>, state_dir: &Path) -> Result<PathBuf, AssembleError> {
    let source = match explicit {
        Some(path) => path.to_path_buf(),
        None => std::env::current_exe()
            .map_err(AssembleError::LocateProgram)?
            .with_file_name("sandboxd-agent"),
    };
    let is_static = is_static_elf(&source).map_err(|e| AssembleError::ReadAgent {
        path: source.clone(),
        source: e,
    })?;
    if !is_static {
        return Err(AssembleError::AgentNotStatic { path: source });
    }
    let dir = state_dir.join("agent");
    // The agent file itself is what containers mount, so its directory can be private.
    create_private_dir(&dir)?;
    let target = dir.join("sandboxd-agent");
    let staging = dir.join(format!(".sandboxd-agent.{}", std::process::id()));
    std::fs::copy(&source, &staging).map_err(|source| AssembleError::CopyAgent {
        path: staging.clone(),
        source,
    })?;
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o555)).map_err(
        |source| AssembleError::SetPermissions {
            path: staging.clone(),
            source,
        },
    )?;
    std::fs::rename(&staging, &target).map_err(|source| AssembleError::InstallAgent {
        path: target.clone(),
        source,
    })?;
    Ok(target)
}
