//! Clients for the code-context requests. The agent is untrusted: what it forwards is counted
//! against the run's output limit here too, and the exchange has a deadline.

use super::framing::{read_frame, write_json};
use crate::error::ProtoError;
use crate::frame::FrameKind;
use crate::message::kernel::{KernelError, KernelResult, KernelRunEnd, KernelRunRequest};
use crate::message::{Event, KernelEvent, KernelRequest, Request};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// One thing a run produced, in the order the kernel produced it.
#[derive(Debug, Clone, PartialEq)]
pub enum KernelItem {
    Stream {
        name: String,
        text: String,
    },
    Result(KernelResult),
    Error(KernelError),
    /// The last item of a run.
    End(KernelRunEnd),
}

/// A run in progress on an agent connection: [`KernelRun::next`] until [`KernelItem::End`].
pub struct KernelRun<S> {
    stream: S,
    budget: u64,
    /// Bytes over the budget the agent still sent, dropped here.
    dropped: u64,
    ended: bool,
}

/// Sends `request` on `stream`, a fresh agent connection it consumes.
pub async fn start_kernel_run<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    request: &KernelRunRequest,
) -> Result<KernelRun<S>, ProtoError> {
    write_json(
        &mut stream,
        &Request::Kernel(KernelRequest::KernelRun(request.clone())),
    )
    .await?;
    Ok(KernelRun {
        stream,
        budget: request.output_limit,
        dropped: 0,
        ended: false,
    })
}

impl<S: AsyncRead + AsyncWrite + Unpin> KernelRun<S> {
    /// The next item; `deadline` bounds the wait for it. After [`KernelItem::End`], `None`.
    pub async fn next(&mut self, deadline: Duration) -> Result<Option<KernelItem>, ProtoError> {
        if self.ended {
            return Ok(None);
        }
        loop {
            let frame = tokio::time::timeout(deadline, read_frame(&mut self.stream))
                .await
                .map_err(|_| ProtoError::Timeout(deadline))??;
            if frame.kind != FrameKind::Json {
                return Err(ProtoError::Unexpected(
                    "a data frame during a code run".into(),
                ));
            }
            let item = match frame.parse_json::<Event>()? {
                Event::Kernel(KernelEvent::KernelStream { name, text }) => {
                    KernelItem::Stream { name, text }
                }
                Event::Kernel(KernelEvent::KernelResult(result)) => KernelItem::Result(result),
                Event::Kernel(KernelEvent::KernelError(error)) => KernelItem::Error(error),
                Event::Kernel(KernelEvent::KernelEnd(mut end)) => {
                    self.ended = true;
                    end.dropped_bytes = end.dropped_bytes.saturating_add(self.dropped);
                    return Ok(Some(KernelItem::End(end)));
                }
                Event::Error { code, message } => return Err(ProtoError::Agent { code, message }),
                other => {
                    return Err(ProtoError::Unexpected(format!(
                        "{other:?} during a code run"
                    )))
                }
            };
            let size = item_size(&item);
            if let KernelItem::Error(_) = item {
                // How the run went always arrives (the agent bounds its traceback).
                self.budget = self.budget.saturating_sub(size);
                return Ok(Some(item));
            }
            if size > self.budget {
                self.dropped = self.dropped.saturating_add(size);
                continue;
            }
            self.budget -= size;
            return Ok(Some(item));
        }
    }
}

/// What an item counts against the output limit: its text, or its bundle's entries.
pub fn item_size(item: &KernelItem) -> u64 {
    match item {
        KernelItem::Stream { text, .. } => text.len() as u64,
        KernelItem::Result(result) => crate::message::kernel::bundle_size(&result.data),
        KernelItem::Error(error) => {
            (error.name.len()
                + error.value.len()
                + error.traceback.iter().map(String::len).sum::<usize>()) as u64
        }
        KernelItem::End(_) => 0,
    }
}

/// Stops the kernel of `context`: whether it had one.
pub async fn shutdown_kernel<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    context: &str,
    deadline: Duration,
) -> Result<bool, ProtoError> {
    let exchange = async {
        let request = Request::Kernel(KernelRequest::KernelShutdown {
            context: context.to_string(),
        });
        write_json(&mut stream, &request).await?;
        match read_frame(&mut stream).await?.parse_json::<Event>()? {
            Event::Kernel(KernelEvent::KernelStopped { existed }) => Ok(existed),
            Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
            other => Err(ProtoError::Unexpected(format!(
                "{other:?} instead of kernel_stopped"
            ))),
        }
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .map_err(|_| ProtoError::Timeout(deadline))?
}

/// The contexts the agent holds ([`KernelRequest::KernelList`]).
pub async fn list_kernels<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    deadline: Duration,
) -> Result<Vec<crate::message::kernel::KernelContext>, ProtoError> {
    kernels_answer(
        stream,
        &Request::Kernel(KernelRequest::KernelList),
        deadline,
    )
    .await
}

/// Has the agent keep `context` ([`KernelRequest::KernelDeclare`]): the contexts it holds then.
pub async fn declare_kernel<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    context: crate::message::kernel::KernelContext,
    deadline: Duration,
) -> Result<Vec<crate::message::kernel::KernelContext>, ProtoError> {
    kernels_answer(
        stream,
        &Request::Kernel(KernelRequest::KernelDeclare(context)),
        deadline,
    )
    .await
}

async fn kernels_answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    request: &Request,
    deadline: Duration,
) -> Result<Vec<crate::message::kernel::KernelContext>, ProtoError> {
    let exchange = async {
        write_json(&mut stream, request).await?;
        match read_frame(&mut stream).await?.parse_json::<Event>()? {
            Event::Kernel(KernelEvent::Kernels { kernels }) => Ok(kernels),
            Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
            other => Err(ProtoError::Unexpected(format!(
                "{other:?} instead of kernels"
            ))),
        }
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .map_err(|_| ProtoError::Timeout(deadline))?
}
