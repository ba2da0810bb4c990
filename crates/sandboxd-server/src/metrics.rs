//! `/metrics`: the live figures as gauges, and requests per route as a counter and a latency
//! histogram (histograms, not summaries, so operators can aggregate them across hosts), in the
//! OpenMetrics text format by the `prometheus-client` crate.

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use sandboxd_api::Stats;
use std::sync::Arc;
use std::time::Instant;

/// What `/metrics` answers with.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A request's labels: its method, its route's template (never the raw path, which holds
/// ids) and, for the count, its status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

/// The gauges, set from the core's stats when scraped.
#[derive(Default)]
struct Live {
    sessions: Gauge,
    pooled: Gauge,
    max_sessions: Gauge,
    memory_bytes: Gauge,
    processes: Gauge,
    runtimes_allowed: Gauge,
}

struct Inner {
    registry: Registry,
    live: Live,
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram, fn() -> Histogram>,
}

#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("sandboxd");
        let live = Live::default();
        for (name, help, gauge) in [
            ("sessions", "Open sessions", &live.sessions),
            (
                "pooled",
                "Ready sandboxes of warm pools (they count against max_sessions)",
                &live.pooled,
            ),
            (
                "max_sessions",
                "The most sessions the service allows",
                &live.max_sessions,
            ),
            (
                "memory_bytes",
                "Memory in use across live sandboxes",
                &live.memory_bytes,
            ),
            (
                "processes",
                "Processes summed across sandboxes",
                &live.processes,
            ),
            (
                "runtimes_allowed",
                "Runtimes on the allowlist",
                &live.runtimes_allowed,
            ),
        ] {
            registry.register(name, help, gauge.clone());
        }
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route template and status",
            requests.clone(),
        );
        let durations: Family<RouteLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "http_request_duration_seconds",
            "Time spent answering HTTP requests, by method and route template",
            durations.clone(),
        );
        Metrics(Arc::new(Inner {
            registry,
            live,
            requests,
            durations,
        }))
    }
}

/// 0.5 ms to about 65 s, doubling: an exec answers in milliseconds, a recipe build in minutes.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 18))
}

impl Metrics {
    fn record(&self, method: String, route: String, status: u16, seconds: f64) {
        self.0
            .durations
            .get_or_create(&RouteLabels {
                method: method.clone(),
                route: route.clone(),
            })
            .observe(seconds);
        self.0
            .requests
            .get_or_create(&RequestLabels {
                method,
                route,
                status,
            })
            .inc();
    }

    /// The exposition, with the gauges at `stats`.
    pub fn render(&self, stats: &Stats) -> String {
        let live = &self.0.live;
        let wide = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        live.sessions.set(i64::from(stats.sessions));
        live.pooled.set(i64::from(stats.pooled));
        live.max_sessions.set(i64::from(stats.max_sessions));
        live.memory_bytes.set(wide(stats.memory_bytes));
        live.processes.set(wide(stats.processes));
        live.runtimes_allowed.set(i64::from(stats.runtimes_allowed));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.0.registry);
        out
    }
}

/// Records every request under its route template.
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
        method,
        route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_has_the_gauges_a_count_and_a_histogram_per_route() {
        let metrics = Metrics::default();
        metrics.record("POST".into(), "/v1/sessions/{id}/exec".into(), 200, 0.003);
        metrics.record("POST".into(), "/v1/sessions/{id}/exec".into(), 404, 0.001);
        let text = metrics.render(&stats());
        for line in [
            "sandboxd_sessions 2",
            "sandboxd_pooled 1",
            "sandboxd_memory_bytes 5368709120",
            "# TYPE sandboxd_http_requests counter",
            r#"sandboxd_http_requests_total{method="POST",route="/v1/sessions/{id}/exec",status="200"} 1"#,
            r#"sandboxd_http_requests_total{method="POST",route="/v1/sessions/{id}/exec",status="404"} 1"#,
            "# TYPE sandboxd_http_request_duration_seconds histogram",
            r#"sandboxd_http_request_duration_seconds_count{method="POST",route="/v1/sessions/{id}/exec"} 2"#,
            r#"sandboxd_http_request_duration_seconds_bucket{le="0.002",method="POST",route="/v1/sessions/{id}/exec"} 1"#,
            "# EOF",
        ] {
            assert!(text.contains(line), "{line} in:\n{text}");
        }
    }

    /// deploy/grafana/sandboxd.json queries only families this exposition has.
    #[test]
    fn the_grafana_dashboard_names_only_metrics_that_exist() {
        let metrics = Metrics::default();
        // A family is in the exposition once it has a sample.
        metrics.record("GET".into(), "/healthz".into(), 200, 0.001);
        let families: Vec<String> = metrics
            .render(&stats())
            .lines()
            .filter_map(|line| line.strip_prefix("# TYPE "))
            .filter_map(|rest| rest.split(' ').next())
            .map(str::to_string)
            .collect();
        let dashboard: serde_json::Value =
            serde_json::from_str(include_str!("../../../deploy/grafana/sandboxd.json")).unwrap();
        let mut exprs = Vec::new();
        collect_exprs(&dashboard, &mut exprs);
        assert!(exprs.len() >= 7, "{exprs:?}");
        for expr in exprs {
            for (at, _) in expr.match_indices("sandboxd_") {
                let name: String = expr[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let family = ["_total", "_bucket", "_sum", "_count"]
                    .iter()
                    .find_map(|suffix| name.strip_suffix(suffix))
                    .unwrap_or(&name);
                assert!(families.iter().any(|f| f == family), "{name} in {expr}");
            }
        }
    }

    fn stats() -> Stats {
        Stats {
            sessions: 2,
            pooled: 1,
            max_sessions: 20,
            memory_bytes: 5 << 30,
            processes: 7,
            runtimes_allowed: 4,
        }
    }

    fn collect_exprs(value: &serde_json::Value, into: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    match value.as_str() {
                        Some(expr) if key == "expr" => into.push(expr.to_string()),
                        _ => collect_exprs(value, into),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| collect_exprs(v, into)),
            _ => {}
        }
    }
}
