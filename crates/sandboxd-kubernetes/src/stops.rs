//! The API server's watch of this instance's pods, so the service lists its sandboxes on word
//! of a pod that stopped or went instead of every second (each listing is every pod of the
//! instance, which the API server reads and sends whole).

use crate::api_errors::is_status;
use crate::usage::{pod_state, PodState};
use futures_util::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::Api;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Whether the API server refused to let the service watch pods (its Role lacks `watch`): then
/// it is not asked again, and the service lists every second.
#[derive(Default, Clone)]
pub(crate) struct WatchRefused(Arc<AtomicBool>);

impl WatchRefused {
    pub(crate) fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Notes a refusal, saying so once.
    pub(crate) fn note(&self, e: &kube::Error) {
        if is_status(e, 403) && !self.0.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %e, "the service may not watch its pods, so it reads them again and again instead: grant `watch` on pods in its Role");
        }
    }
}

/// How long one watch request lasts before the API server ends it and the next one goes on
/// from where it stopped (under the API server's own limit of 30 minutes).
const WATCH_SECONDS: u32 = 290;

/// Watches the pods matching `selector` for those that stopped or went; see
/// `Backend::watch_stops`.
pub(crate) fn watch(pods: Api<Pod>, selector: String, refused: WatchRefused) -> mpsc::Receiver<()> {
    // One waiting word is enough: the listing it leads to sees every stop before it.
    let (sender, receiver) = mpsc::channel(1);
    tokio::spawn(async move {
        tokio::select! {
            () = follow(&pods, &selector, &sender, &refused) => {}
            () = sender.closed() => {}
        }
    });
    receiver
}

/// Sends a word for each stop until the watch breaks; returning closes the channel, and the
/// service lists every second until it watches anew.
async fn follow(
    pods: &Api<Pod>,
    selector: &str,
    sender: &mpsc::Sender<()>,
    refused: &WatchRefused,
) {
    let listed = pods
        .list_metadata(&ListParams::default().labels(selector).limit(1))
        .await;
    let mut version = match listed {
        Ok(list) => list.metadata.resource_version.unwrap_or_default(),
        Err(e) => {
            tracing::debug!(error = %e, "cannot start watching the pods");
            refused.note(&e);
            return;
        }
    };
    // A stop between the service's listing and this version is in no event: a listing after
    // it sees it.
    let _ = sender.try_send(());
    let params = WatchParams::default()
        .labels(selector)
        .timeout(WATCH_SECONDS)
        .disable_bookmarks();
    loop {
        let events = match pods.watch(&params, &version).await {
            Ok(events) => events,
            Err(e) => {
                tracing::debug!(error = %e, "the pods' watch broke");
                refused.note(&e);
                return;
            }
        };
        let mut events = events.boxed();
        loop {
            let (pod, deleted) = match events.try_next().await {
                Ok(Some(WatchEvent::Deleted(pod))) => (pod, true),
                Ok(Some(WatchEvent::Added(pod) | WatchEvent::Modified(pod))) => (pod, false),
                Ok(Some(WatchEvent::Bookmark(_))) => continue,
                // The version is too old (410) or the API server refused: list and watch anew.
                Ok(Some(WatchEvent::Error(status))) => {
                    tracing::debug!(status = ?status, "the pods' watch ended");
                    return;
                }
                // The API server ended this request at its timeout: on from the last version.
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(error = %e, "the pods' watch broke");
                    return;
                }
            };
            if let Some(seen) = &pod.metadata.resource_version {
                version.clone_from(seen);
            }
            let stopped = deleted || matches!(pod_state(&pod), PodState::Failed(_));
            if stopped {
                if let Err(mpsc::error::TrySendError::Closed(())) = sender.try_send(()) {
                    return;
                }
            }
        }
    }
}

/// The pod `name` read every `interval`, as the changes a watch would send (for credentials
/// that may not watch): each reading as a change, its absence as its deletion, then the end.
pub(crate) fn polled(
    pods: Api<Pod>,
    name: String,
    interval: std::time::Duration,
) -> impl Stream<Item = Result<WatchEvent<Pod>, kube::Error>> {
    futures_util::stream::unfold(Some(false), move |state| {
        let (pods, name) = (pods.clone(), name.clone());
        async move {
            let read_before = state?;
            if read_before {
                tokio::time::sleep(interval).await;
            }
            match pods.get_opt(&name).await {
                Ok(Some(pod)) => Some((Ok(WatchEvent::Modified(pod)), Some(true))),
                Ok(None) => Some((Ok(WatchEvent::Deleted(Pod::default())), None)),
                Err(e) => Some((Err(e), None)),
            }
        }
    })
}
