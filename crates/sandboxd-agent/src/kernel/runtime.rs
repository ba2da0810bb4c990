//! The async runtime of the kernel client, made on first use and kept for the agent's life.

use std::io;
use std::sync::OnceLock;

/// One worker is plenty: the kernels do the work, the client only moves messages.
const WORKER_THREADS: usize = 1;
const WORKER_STACK_SIZE: usize = 2 << 20;

pub fn get() -> io::Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .max_blocking_threads(1)
        .thread_stack_size(WORKER_STACK_SIZE)
        .thread_name("kernel-client")
        .enable_io()
        .enable_time()
        .build()?;
    // Two first uses at once: one runtime wins, the other is dropped unused.
    Ok(RUNTIME.get_or_init(|| runtime))
}
