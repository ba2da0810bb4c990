//! Request counts and latencies per route, rendered with the live figures in the Prometheus
//! text format.

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use sandboxd_api::Stats;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Default)]
struct RouteFigures {
    count: u64,
    seconds_sum: f64,
}

/// Method, route template and status code.
type RouteKey = (String, String, u16);

#[derive(Default, Clone)]
pub struct Metrics {
    routes: Arc<Mutex<BTreeMap<RouteKey, RouteFigures>>>,
}

impl Metrics {
    fn record(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut routes = self.routes.lock().expect("metrics lock");
        let figures = routes
            .entry((method.to_string(), route.to_string(), status))
            .or_default();
        figures.count += 1;
        figures.seconds_sum += seconds;
    }

    pub fn render(&self, stats: &Stats) -> String {
        let mut out = String::new();
        let gauges = [
            (
                "sandboxd_sessions",
                "Open sessions.",
                u64::from(stats.sessions),
            ),
            (
                "sandboxd_max_sessions",
                "The most sessions the service allows.",
                u64::from(stats.max_sessions),
            ),
            (
                "sandboxd_memory_bytes",
                "Memory in use across live sandboxes.",
                stats.memory_bytes,
            ),
            (
                "sandboxd_processes",
                "Processes summed across sandboxes.",
                stats.processes,
            ),
            (
                "sandboxd_runtimes_allowed",
                "Runtimes on the allowlist.",
                u64::from(stats.runtimes_allowed),
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        let routes = self.routes.lock().expect("metrics lock");
        let _ = writeln!(out, "# HELP sandboxd_http_requests_total HTTP requests answered.\n# TYPE sandboxd_http_requests_total counter");
        for ((method, route, status), figures) in routes.iter() {
            let _ = writeln!(
                out,
                "sandboxd_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {}",
                figures.count
            );
        }
        let _ = writeln!(out, "# HELP sandboxd_http_request_seconds Time spent answering HTTP requests.\n# TYPE sandboxd_http_request_seconds summary");
        for ((method, route, status), figures) in routes.iter() {
            let labels = format!("method=\"{method}\",route=\"{route}\",status=\"{status}\"");
            let _ = writeln!(
                out,
                "sandboxd_http_request_seconds_sum{{{labels}}} {:.6}",
                figures.seconds_sum
            );
            let _ = writeln!(
                out,
                "sandboxd_http_request_seconds_count{{{labels}}} {}",
                figures.count
            );
        }
        out
    }
}

/// Records every request under its route template (never the raw path, which holds ids).
pub async fn track(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let started = Instant::now();
    let response = next.run(request).await;
    metrics.record(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
