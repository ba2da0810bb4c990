//! The report: latency samples, the table rows and the targets they are checked against.

use anyhow::Result;
use std::time::{Duration, Instant};

pub(crate) const MIB: usize = 1 << 20;

/// Runs `op`, adding how long it took to `samples`.
pub(crate) async fn time<T>(
    samples: &mut Vec<Duration>,
    op: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let started = Instant::now();
    let value = op.await?;
    samples.push(started.elapsed());
    Ok(value)
}

/// Latencies of one operation.
pub(crate) struct Sample(pub(crate) Vec<Duration>);

impl Sample {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted.get(index).copied().unwrap_or_default()
    }

    pub(crate) fn p50(&self) -> Duration {
        self.percentile(0.5)
    }

    pub(crate) fn p99(&self) -> Duration {
        self.percentile(0.99)
    }
}

/// The figures the targets are stated in.
pub(crate) struct Figures {
    pub(crate) cold: Sample,
    pub(crate) raw_create: Sample,
    pub(crate) warm: Sample,
    pub(crate) exec_true: Sample,
    pub(crate) raw_exec_true: Sample,
    pub(crate) close: Sample,
    pub(crate) concurrent: Sample,
    /// `concurrent` without the service: see `measure::host_spawn_floor`.
    pub(crate) floor_concurrent: Sample,
    pub(crate) rss_bytes: u64,
}

impl Figures {
    /// Prints each target with the figures it is checked against, and whether it was met.
    pub(crate) fn print_targets(&self) {
        let single = self.exec_true.p50();
        let targets = [
            (
                "exec `true` p50 at most 1/10 of the raw API's",
                self.exec_true.p50() * 10 <= self.raw_exec_true.p50(),
                format!(
                    "{} vs {} / 10",
                    ms(self.exec_true.p50()),
                    ms(self.raw_exec_true.p50())
                ),
            ),
            (
                "create from a warm pool p50 under 10 ms",
                self.warm.p50() < Duration::from_millis(10),
                ms(self.warm.p50()),
            ),
            (
                "cold create p50 at most 1.1x raw create+start",
                self.cold.p50().as_secs_f64() <= 1.1 * self.raw_create.p50().as_secs_f64(),
                format!("{} vs {}", ms(self.cold.p50()), ms(self.raw_create.p50())),
            ),
            (
                "close p50 under 100 ms",
                self.close.p50() < Duration::from_millis(100),
                ms(self.close.p50()),
            ),
            (
                "20 x 50 concurrent p99 under 5x the single exec p50",
                self.concurrent.p99() < single * 5,
                format!(
                    "{} vs 5 x {}; without the service (host floor) the p99 is {}",
                    ms(self.concurrent.p99()),
                    ms(single),
                    ms(self.floor_concurrent.p99())
                ),
            ),
            (
                "service RSS with 20 open sessions under 64 MB",
                self.rss_bytes < 64 * MIB as u64,
                format!("{:.1} MB", self.rss_bytes as f64 / MIB as f64),
            ),
        ];
        println!("\ntargets");
        for (target, met, figures) in targets {
            let verdict = if met { "met" } else { "MISSED" };
            println!("  {verdict:<7} {target}: {figures}");
        }
    }
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

pub(crate) fn print_row(name: &str, ours: &Sample, raw: Option<&Sample>) {
    let (ours50, ours99) = (ours.percentile(0.5), ours.percentile(0.99));
    match raw {
        Some(raw) => {
            let (raw50, raw99) = (raw.percentile(0.5), raw.percentile(0.99));
            println!(
                "{name:<34} {:>11} {:>11} | {:>11} {:>11} | {:>6.3}x",
                ms(ours50),
                ms(ours99),
                ms(raw50),
                ms(raw99),
                ours50.as_secs_f64() / raw50.as_secs_f64()
            );
        }
        None => println!(
            "{name:<34} {:>11} {:>11} | {:>11} {:>11} |",
            ms(ours50),
            ms(ours99),
            "-",
            "-"
        ),
    }
}
