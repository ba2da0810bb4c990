//! `sandboxd open`: opens a session and prints its id, after following the making of its
//! runtime's image on stderr when the platform does not have it yet.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use super::runtimes_recipes::follow_build;
use anyhow::{bail, Result};
use clap::Args;
use sandboxd_api::{CreateSession, ImageStatus, RuntimeBuildEvent};
use sandboxd_client::{Client, ClientError, Interface};

#[derive(Args)]
pub struct OpenArgs {
    /// The runtime to open (default: the service's default runtime; `sandboxd runtimes`
    /// lists them).
    #[arg(long)]
    runtime: Option<String>,
    /// A tenant to file the session under.
    #[arg(long)]
    tenant: Option<String>,
    /// A label for the session, as KEY=VALUE; repeat for more.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    labels: Vec<String>,
    /// Start from a snapshot: its files, runtime and labels (`sandboxd snapshot list`).
    #[arg(long)]
    snapshot: Option<String>,
    /// Mount a volume of yours at PATH (below /workspace, /home/user or /tmp), read-only with
    /// `:ro`; repeat for more (`sandboxd volumes list`).
    #[arg(long = "volume", value_name = "NAME:PATH[:ro]")]
    volumes: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: OpenArgs) -> Result<()> {
    let mut request = CreateSession {
        runtime: args.runtime,
        tenant: args.tenant,
        snapshot: args.snapshot,
        volumes: args
            .volumes
            .iter()
            .map(|v| super::volumes::parse_mount(v))
            .collect::<Result<_>>()?,
        ..CreateSession::default()
    };
    for label in &args.labels {
        let Some((key, value)) = label.split_once('=') else {
            bail!("--label {label:?} is not KEY=VALUE");
        };
        request.labels.insert(key.to_string(), value.to_string());
    }
    let client = args.service.client(Interface::Cli)?;
    let session = block_on(async {
        if request.snapshot.is_none() {
            show_image_build(&client, request.runtime.as_deref()).await?;
        }
        anyhow::Ok(client.create_session(&request).await?)
    })??;
    if args.output.json {
        return print_json(&session);
    }
    println!("{}", session.id);
    Ok(())
}

/// When the runtime's image is not on the platform yet, follows its making on stderr, so the
/// minutes a recipe build takes are not silent. A tenant token may not build: it is told why it
/// waits. A failed build stops here, with the service's reason (as the session's opening would
/// give it), rather than starting it again.
pub(super) async fn show_image_build(client: &Client, runtime: Option<&str>) -> Result<()> {
    let list = client.runtimes().await?;
    let name = runtime.unwrap_or(&list.default_runtime);
    let waits = list.runtimes.iter().any(|entry| {
        entry.runtime.name == name
            && matches!(
                entry.status,
                ImageStatus::NotBuilt | ImageStatus::Building { .. }
            )
    });
    if !waits {
        return Ok(());
    }
    eprintln!("{name}: its image is not on the platform yet; making it first (a recipe build can take minutes)");
    match follow_build(client, name, false).await {
        Ok(Some(RuntimeBuildEvent {
            status: ImageStatus::Failed { reason },
            ..
        })) => Err(ClientError::Api {
            status: 503,
            code: "runtime_unavailable".into(),
            message: reason,
            remedy: None,
        }
        .into()),
        Ok(_) => Ok(()),
        Err(e) if is_admin_only(&e) => {
            eprintln!("{name}: the session opens when the service has made the image");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn is_admin_only(error: &anyhow::Error) -> bool {
    matches!(
        error.downcast_ref::<ClientError>(),
        Some(ClientError::Api { code, .. }) if code == "admin_only"
    )
}
