//! Runtime images, made available on first use: on the platform already, pulled, or built from
//! the runtime's recipe. However many sessions ask for an image meanwhile, one provisioning
//! runs at a time per image and they all wait for it. Where each runtime's image stands is
//! shown in `GET /v1/runtimes`; `POST /v1/runtimes/{name}/build` starts (or joins) one and
//! follows it. This is leaf state: the backend and config are handed in.

use crate::error::Error;
use futures_util::Stream;
use sandboxd_api::{BuildProgress, ImageStatus, RuntimeBuildEvent, RuntimeEntry, RuntimeInfo};
use sandboxd_backend::{Backend, BackendError, ImageBuild, ImageProgress, ImageRequest};
use sandboxd_config::Config;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Where one image's provisioning is.
#[derive(Clone)]
enum Provisioning {
    Working(BuildProgress),
    Done(Result<String, BackendError>),
}

/// Per image reference, the latest provisioning: under way, or how the last one ended.
#[derive(Default)]
pub struct Images {
    latest: Mutex<HashMap<String, watch::Receiver<Provisioning>>>,
}

impl Images {
    /// Joins the provisioning of the runtime's image that is under way, or starts one in the
    /// background (it goes on when the requests waiting for it leave). Returns the image.
    fn provision(
        &self,
        backend: &Arc<dyn Backend>,
        config: &Config,
        runtime: &RuntimeInfo,
    ) -> Result<(String, watch::Receiver<Provisioning>), Error> {
        let request = image_request(config, runtime)?;
        let image = request.image.clone();
        let mut latest = self.latest.lock().expect("images lock");
        if let Some(under_way) = latest
            .get(&image)
            .filter(|r| matches!(*r.borrow(), Provisioning::Working(_)))
        {
            return Ok((image, under_way.clone()));
        }
        let (sender, receiver) = watch::channel(Provisioning::Working(BuildProgress {
            step: None,
            steps: None,
            line: "looking for the image on the platform".into(),
        }));
        latest.insert(image.clone(), receiver.clone());
        drop(latest);

        let backend = backend.clone();
        let runtime_name = runtime.name.clone();
        tokio::spawn(async move {
            let image = request.image.clone();
            let worked = AtomicBool::new(false);
            let report = |progress: ImageProgress| {
                worked.store(true, Ordering::Relaxed);
                tracing::info!(runtime = %runtime_name, image = %image, "{}", progress.line);
                let (step, steps) = progress.step.unzip();
                sender.send_replace(Provisioning::Working(BuildProgress {
                    step,
                    steps,
                    line: progress.line,
                }));
            };
            let result = backend.ensure_image(&request, &report).await;
            match &result {
                Err(e) => {
                    tracing::warn!(runtime = %runtime_name, image = %image, error = %e, "the runtime's image is not available")
                }
                Ok(_) if worked.load(Ordering::Relaxed) => {
                    tracing::info!(runtime = %runtime_name, image = %image, "the runtime's image is ready")
                }
                Ok(_) => {}
            }
            sender.send_replace(Provisioning::Done(result));
        });
        Ok((image, receiver))
    }

    fn latest(&self, image: &str) -> Option<Provisioning> {
        let latest = self.latest.lock().expect("images lock");
        latest.get(image).map(|r| r.borrow().clone())
    }

    /// The image to start the runtime's sandboxes from, made available first when the platform
    /// does not have it.
    pub async fn ensure(
        &self,
        backend: &Arc<dyn Backend>,
        config: &Config,
        runtime: &RuntimeInfo,
    ) -> Result<String, Error> {
        let (image, mut receiver) = self.provision(backend, config, runtime)?;
        let mut outcome = None;
        // An error means the provisioning task ended without an outcome: `outcome` stays empty.
        let _ = receiver
            .wait_for(|p| match p {
                Provisioning::Done(result) => {
                    outcome = Some(result.clone());
                    true
                }
                Provisioning::Working(_) => false,
            })
            .await;
        match outcome {
            Some(Ok(image)) => Ok(image),
            Some(Err(e)) => Err(runtime_error(runtime, e)),
            None => Err(stopped(&image)),
        }
    }

    /// The runtime with where its image stands.
    pub async fn with_status(
        &self,
        backend: &dyn Backend,
        config: &Config,
        runtime: &RuntimeInfo,
    ) -> RuntimeEntry {
        let status = match image_request(config, runtime) {
            Ok(request) => self.status(backend, runtime, &request.image).await,
            Err(e) => ImageStatus::Failed {
                reason: e.to_string(),
            },
        };
        RuntimeEntry {
            runtime: runtime.clone(),
            status,
        }
    }

    async fn status(
        &self,
        backend: &dyn Backend,
        runtime: &RuntimeInfo,
        image: &str,
    ) -> ImageStatus {
        let latest = self.latest(image);
        if let Some(Provisioning::Working(progress)) = latest {
            return ImageStatus::Building { progress };
        }
        match backend.has_image(image).await {
            Ok(true) => ImageStatus::Ready,
            Ok(false) => match latest {
                Some(Provisioning::Done(Err(e))) => ImageStatus::Failed {
                    reason: runtime_error(runtime, e).to_string(),
                },
                _ => ImageStatus::NotBuilt,
            },
            Err(e) => ImageStatus::Failed {
                reason: format!("cannot ask the platform for the image: {e}"),
            },
        }
    }

    /// Makes the runtime's image available now, as its first session would, and follows it: one
    /// event per change, the last one `ready` or `failed`. The provisioning goes on when the
    /// follower leaves.
    pub fn follow(
        &self,
        backend: &Arc<dyn Backend>,
        config: &Config,
        runtime: RuntimeInfo,
    ) -> Result<impl Stream<Item = RuntimeBuildEvent> + Send + 'static, Error> {
        let (image, receiver) = self.provision(backend, config, &runtime)?;
        Ok(futures_util::stream::unfold(
            Some((receiver, true)),
            move |state| {
                let runtime = runtime.clone();
                let image = image.clone();
                async move {
                    let (mut receiver, first) = state?;
                    // An error means the provisioning task is gone: its last value is all there is.
                    let alive = first || receiver.changed().await.is_ok();
                    let current = receiver.borrow_and_update().clone();
                    let status = match current {
                        Provisioning::Working(_) if !alive => ImageStatus::Failed {
                            reason: stopped(&image).to_string(),
                        },
                        Provisioning::Working(progress) => ImageStatus::Building { progress },
                        Provisioning::Done(Ok(_)) => ImageStatus::Ready,
                        Provisioning::Done(Err(e)) => ImageStatus::Failed {
                            reason: runtime_error(&runtime, e).to_string(),
                        },
                    };
                    let next =
                        matches!(status, ImageStatus::Building { .. }).then_some((receiver, false));
                    let event = RuntimeBuildEvent {
                        runtime: runtime.name.clone(),
                        image,
                        status,
                    };
                    Some((event, next))
                }
            },
        ))
    }
}

/// What the platform is asked for: the runtime's image, and its recipe's build if it has one.
/// The image a runtime's sandboxes start from (a recipe's, whether built or not).
pub(crate) fn image_of(config: &Config, runtime: &RuntimeInfo) -> Option<String> {
    image_request(config, runtime)
        .ok()
        .map(|request| request.image)
}

fn image_request(config: &Config, runtime: &RuntimeInfo) -> Result<ImageRequest, Error> {
    let recipe = runtime
        .recipe
        .as_deref()
        .and_then(|name| config.recipe(name));
    match (&runtime.image, recipe) {
        (Some(image), _) => Ok(ImageRequest {
            image: image.clone(),
            build: None,
        }),
        (None, Some(recipe)) => Ok(ImageRequest {
            image: recipe.image.clone(),
            build: Some(ImageBuild {
                recipe: recipe.name.clone(),
                hash: recipe.hash.clone(),
                base: recipe.base.clone(),
                dockerfile: recipe.dockerfile.clone(),
                context: config
                    .build
                    .context
                    .iter()
                    .map(|file| (file.name.clone(), file.contents.clone()))
                    .collect(),
                timeout: config.build.timeout,
            }),
        }),
        (None, None) => Err(Error::RuntimeUnavailable(format!(
            "runtime \"{}\" names neither an image nor a known recipe",
            runtime.name
        ))),
    }
}

/// A recipe runtime whose image cannot be made is unavailable (whatever the cause, short of
/// the engine being down); an image runtime's error says the image is missing.
fn runtime_error(runtime: &RuntimeInfo, error: BackendError) -> Error {
    match (&runtime.recipe, error) {
        (_, e @ BackendError::EngineUnavailable(_)) | (None, e) => Error::Backend(e),
        (Some(recipe), e) => Error::RuntimeUnavailable(format!(
            "runtime \"{}\" is built from recipe \"{recipe}\", and its image cannot be made: {e}",
            runtime.name
        )),
    }
}

fn stopped(image: &str) -> Error {
    Error::RuntimeUnavailable(format!(
        "providing image {image} stopped without an outcome; the service log says why"
    ))
}
