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
        // A whole number from 0 to len - 1 (p is a fraction); float casts saturate.
        #[allow(clippy::cast_possible_truncation)]
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
    /// `sh -c true`, as `command`.
    pub(crate) exec_true: Sample,
    /// `true`, as `argv`.
    pub(crate) exec_argv: Sample,
    pub(crate) raw_exec_true: Sample,
    /// `exec_true` without the service: see `floor::host_spawn`.
    pub(crate) floor_single: Sample,
    pub(crate) close: Sample,
    pub(crate) concurrent: Sample,
    /// `concurrent` without the service: see `floor::host_spawn_concurrent`.
    pub(crate) floor_concurrent: Sample,
    pub(crate) rss_bytes: u64,
}

impl Figures {
    /// The exec goals of the issue, each against its floor in this run.
    pub(crate) fn exec_goals(&self) -> Vec<Goal> {
        vec![
            Goal {
                name: "exec `sh -c true` p50 vs posix_spawn on the host".into(),
                figure: Figure::Latency(self.exec_true.p50()),
                floor: Some(Figure::Latency(self.floor_single.p50())),
                target: Target::AtMostTimes(1.5),
            },
            Goal {
                name: "exec argv [\"true\"] p50 vs the same as `command`".into(),
                figure: Figure::Latency(self.exec_argv.p50()),
                floor: Some(Figure::Latency(self.exec_true.p50())),
                target: Target::AtMostTimes(1.0),
            },
            Goal {
                name: "20 x 50 concurrent exec p99 vs the host's".into(),
                figure: Figure::Latency(self.concurrent.p99()),
                floor: Some(Figure::Latency(self.floor_concurrent.p99())),
                target: Target::AtMostTimes(2.0),
            },
        ]
    }

    /// The service's standing targets, each against its floor in this run.
    pub(crate) fn targets(&self) -> Vec<Goal> {
        let latency = |sample: &Sample| Figure::Latency(sample.p50());
        vec![
            Goal {
                name: "exec `true` p50 vs the raw API's".into(),
                figure: latency(&self.exec_true),
                floor: Some(latency(&self.raw_exec_true)),
                target: Target::AtMostTimes(0.1),
            },
            Goal {
                name: "create from a warm pool p50".into(),
                figure: latency(&self.warm),
                floor: None,
                target: Target::AtMost(Figure::Latency(Duration::from_millis(10))),
            },
            Goal {
                name: "cold create p50 vs raw create+start".into(),
                figure: latency(&self.cold),
                floor: Some(latency(&self.raw_create)),
                target: Target::AtMostTimes(1.1),
            },
            Goal {
                name: "close p50".into(),
                figure: latency(&self.close),
                floor: None,
                target: Target::AtMost(Figure::Latency(Duration::from_millis(100))),
            },
            Goal {
                name: "service RSS with 20 open sessions".into(),
                figure: Figure::Bytes(self.rss_bytes),
                floor: None,
                target: Target::AtMost(Figure::Bytes(64 * MIB as u64)),
            },
        ]
    }
}

/// A quantity a goal is stated in.
#[derive(Clone, Copy)]
pub(crate) enum Figure {
    Latency(Duration),
    Bytes(u64),
    /// Per second.
    Rate(f64),
}

impl Figure {
    fn value(self) -> f64 {
        match self {
            Figure::Latency(d) => d.as_secs_f64(),
            Figure::Bytes(b) => b as f64,
            Figure::Rate(r) => r,
        }
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Figure::Latency(d) => f.write_str(&ms(d)),
            Figure::Bytes(b) => write!(f, "{:.1} MB", b as f64 / MIB as f64),
            Figure::Rate(r) => write!(f, "{r:.1}/s"),
        }
    }
}

/// What a goal asks of its figure.
#[derive(Clone, Copy)]
pub(crate) enum Target {
    /// At most this many times the floor.
    AtMostTimes(f64),
    /// At least this many times the floor.
    NotBelowTimes(f64),
    /// At most this, whatever the floor (a budget).
    AtMost(Figure),
    /// At most this much over the floor, when the figure includes the floor's work (a budget
    /// for what comes on top of it).
    AtMostOver(Figure),
}

/// One goal of the issue: a figure of this run against the floor measured in the same run.
pub(crate) struct Goal {
    pub(crate) name: String,
    pub(crate) figure: Figure,
    /// What the figure is compared with (the host, the raw engine, the service with one
    /// session); `None` for a plain budget.
    pub(crate) floor: Option<Figure>,
    pub(crate) target: Target,
}

impl Goal {
    fn ratio(&self) -> Option<f64> {
        self.floor.map(|floor| self.figure.value() / floor.value())
    }

    fn met(&self) -> bool {
        match (self.target, self.ratio()) {
            (Target::AtMostTimes(times), Some(ratio)) => ratio <= times,
            (Target::NotBelowTimes(times), Some(ratio)) => ratio >= times,
            (Target::AtMost(budget), _) => self.figure.value() <= budget.value(),
            (Target::AtMostOver(budget), _) => self
                .floor
                .is_some_and(|floor| self.figure.value() <= floor.value() + budget.value()),
            // A ratio goal without its floor cannot be met.
            (_, None) => false,
        }
    }
}

/// Prints the goals as a table: figure, floor, ratio, target, and met or missed.
pub(crate) fn print_goals(title: &str, goals: &[Goal]) {
    println!("\n{title}");
    println!(
        "  {:<52} {:>11} {:>11} {:>7}  {:<12} verdict",
        "goal", "figure", "floor", "ratio", "target"
    );
    for goal in goals {
        let floor = goal.floor.map_or("-".into(), |floor| floor.to_string());
        let ratio = goal
            .ratio()
            .map_or("-".into(), |ratio| format!("{ratio:.2}x"));
        let target = match goal.target {
            Target::AtMostTimes(times) => format!("<= {times:.2}x"),
            Target::NotBelowTimes(times) => format!(">= {times:.2}x"),
            Target::AtMost(budget) => format!("<= {budget}"),
            Target::AtMostOver(budget) => format!("<= +{budget}"),
        };
        let verdict = if goal.met() { "met" } else { "MISSED" };
        println!(
            "  {:<52} {:>11} {:>11} {:>7}  {:<12} {verdict}",
            goal.name,
            goal.figure.to_string(),
            floor,
            ratio,
            target
        );
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

/// A measured byte count as a whole number (the cast of a rounded float saturates; a
/// measurement is never negative).
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn whole_bytes(bytes: f64) -> u64 {
    bytes.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(figure: Figure, floor: Option<Figure>, target: Target) -> Goal {
        Goal {
            name: "g".into(),
            figure,
            floor,
            target,
        }
    }

    #[test]
    fn a_goal_is_met_by_its_ratio_to_the_floor_or_its_budget() {
        let ms = |n| Figure::Latency(Duration::from_millis(n));
        assert!(goal(ms(15), Some(ms(10)), Target::AtMostTimes(1.5)).met());
        assert!(!goal(ms(16), Some(ms(10)), Target::AtMostTimes(1.5)).met());
        assert_eq!(
            goal(ms(15), Some(ms(10)), Target::AtMostTimes(1.5)).ratio(),
            Some(1.5)
        );
        assert!(
            !goal(ms(1), None, Target::AtMostTimes(1.5)).met(),
            "no floor, no ratio"
        );
        assert!(goal(Figure::Bytes(10), None, Target::AtMost(Figure::Bytes(10))).met());
        assert!(!goal(Figure::Bytes(11), None, Target::AtMost(Figure::Bytes(10))).met());
        assert!(goal(ms(12), Some(ms(10)), Target::AtMostOver(ms(2))).met());
        assert!(!goal(ms(13), Some(ms(10)), Target::AtMostOver(ms(2))).met());
        assert!(
            !goal(ms(1), None, Target::AtMostOver(ms(2))).met(),
            "no floor, nothing to add to"
        );
    }
}
