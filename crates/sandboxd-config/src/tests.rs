//! The config's own tests: parsing, the embedded default, and its errors.

use super::*;
use sandboxd_api::NetworkMode;

fn error_of(text: &str) -> String {
    Config::parse(text).unwrap_err().to_string()
}

const MINIMAL: &str = "[runtimes.sh]\nimage = \"sandboxd/busybox:local\"\n";

#[test]
fn embedded_default_matches_the_seed() {
    let config = Config::embedded().unwrap();
    assert_eq!(config.default_runtime, "python");
    assert_eq!(config.max_sessions, 20);
    assert_eq!(config.token, TokenSource::Generated);
    let python = config.runtime("python").unwrap();
    assert_eq!(python.limits.pids_limit, 512);
    assert_eq!(python.interpreter, vec!["python3"]);
    let datascience = config.runtime("datascience").unwrap();
    assert_eq!(datascience.recipe.as_deref(), Some("python-datascience"));
    assert_eq!(datascience.limits.mem_limit_bytes, 4 << 30);
    assert_eq!(datascience.limits.cpus, 2.0);
    assert_eq!(datascience.limits.network_mode, NetworkMode::None);
    let interpreter = config.runtime("interpreter").unwrap();
    assert_eq!(interpreter.recipe.as_deref(), Some("python-interpreter"));
    assert!(
        interpreter.kernels.contains_key("python"),
        "inherits the recipe's kernel"
    );
    assert!(python.kernels.is_empty());
    let scraping = config.runtime("scraping").unwrap();
    assert_eq!(scraping.limits.network_mode, NetworkMode::Bridge);
    assert_eq!(
        scraping.limits.mem_limit_bytes,
        1 << 30,
        "inherits the default"
    );
    assert_eq!(config.worst_case_memory_bytes(), 20 * (4 << 30));
    assert_eq!(config.e2b.templates["base"], "python");
    assert_eq!(
        config.e2b.templates["code-interpreter-v1"],
        "code-interpreter"
    );
    let code_interpreter = config.runtime("code-interpreter").unwrap();
    assert_eq!(code_interpreter.kernels.len(), 6, "E2B's six languages");
    // e2b-desktop's Sandbox.create() opens template "desktop": no operator step.
    assert_eq!(config.e2b.templates["desktop"], "desktop");
    let desktop = config.runtime("desktop").unwrap();
    assert_eq!(desktop.recipe.as_deref(), Some("desktop"));
    assert_eq!(desktop.limits.network_mode, NetworkMode::None);
    assert_eq!(desktop.limits.mem_limit_bytes, 2 << 30, "the recipe's");
}

#[test]
fn an_e2b_template_names_a_runtime() {
    let error = error_of(&format!("{MINIMAL}[e2b.templates]\nbase = \"nope\"\n"));
    assert!(error.contains("e2b.templates.base"), "{error}");
    assert!(error.contains("\"nope\""), "{error}");
    let config = Config::parse(&format!("{MINIMAL}[e2b.templates]\nbase = \"sh\"\n")).unwrap();
    assert_eq!(config.e2b.templates["base"], "sh");
}

#[test]
fn a_runtime_may_name_more_than_the_default() {
    let config = Config::parse(
        "default_runtime = \"big\"\nmem_limit = \"512m\"\n[runtimes.big]\nimage = \"x\"\nmem_limit = \"2g\"\n[runtimes.small]\nimage = \"y\"\n",
    )
    .unwrap();
    assert_eq!(
        config.runtime("big").unwrap().limits.mem_limit_bytes,
        2 << 30
    );
    assert_eq!(
        config.runtime("small").unwrap().limits.mem_limit_bytes,
        512 << 20
    );
}

#[test]
fn extra_allowed_origins_are_exact_origins() {
    assert!(Config::parse(MINIMAL)
        .unwrap()
        .extra_allowed_origins
        .is_empty());
    let config = Config::parse(&format!(
        "extra_allowed_origins = [\"http://localhost:6274\", \"HTTPS://Inspector.example\"]\n{MINIMAL}"
    ))
    .unwrap();
    assert_eq!(
        config.extra_allowed_origins,
        ["http://localhost:6274", "https://inspector.example"]
    );
    for bad in [
        "localhost:6274",
        "http://x/",
        "http://x/path",
        "ftp://x",
        "*",
        "http://u@x",
    ] {
        let error = error_of(&format!("extra_allowed_origins = [\"{bad}\"]\n{MINIMAL}"));
        assert!(error.contains("extra_allowed_origins"), "{bad}: {error}");
    }
    let policy = Config::parse(MINIMAL).unwrap().policy;
    assert_eq!(policy.mcp_output_bytes, 24 << 10);
}

#[test]
fn single_runtime_is_the_default() {
    assert_eq!(Config::parse(MINIMAL).unwrap().default_runtime, "sh");
}

#[test]
fn precise_errors() {
    let cases = [
        (format!("bogus = 1\n{MINIMAL}"), "unknown field `bogus`"),
        (
            "[runtimes.sh]\nimage = \"x\"\nprivileged = true\n".to_string(),
            "unknown field `privileged`",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\nmem_limit = \"lots\"\n".to_string(),
            "runtimes.sh.mem_limit",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\ncpus = 0\n".to_string(),
            "runtimes.sh.cpus: must be a number above 0",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\ncpus = -1.5\n".to_string(),
            "must be a number above 0",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\nnetwork_mode = \"host\"\n".to_string(),
            "unknown network mode \"host\"",
        ),
        (
            format!("default_runtime = \"nope\"\n{MINIMAL}"),
            "default_runtime: \"nope\" is not one of the configured runtimes (sh)",
        ),
        (
            "max_sessions = 3\n".to_string(),
            "no runtimes are configured",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\nruntime = \"y\"\n".to_string(),
            "not both",
        ),
        ("[runtimes.sh]\ncpus = 1.0\n".to_string(), "give `image`"),
        (
            format!("max_sessions = 0\n{MINIMAL}"),
            "max_sessions: must be at least 1",
        ),
        (
            format!("[policy]\ndefault_timeout_secs = 900\nmax_timeout_secs = 60\n{MINIMAL}"),
            "policy.default_timeout_secs",
        ),
        (
            format!("[policy]\nmax_connections = 0\n{MINIMAL}"),
            "policy.max_connections: must be above 0",
        ),
        (
            format!("[policy]\nreserved_connections = 1024\n{MINIMAL}"),
            "policy.reserved_connections: 1024 leaves none",
        ),
        (
            format!("[policy]\nmax_connections = 100\nreserved_connections = 10\nmax_requests_per_caller = 91\n{MINIMAL}"),
            "policy.max_requests_per_caller: 91 is above what tenants share",
        ),
        (format!("token = \"short\"\n{MINIMAL}"), "at least 16"),
        (
            format!("mem_limit = \"1k\"\n{MINIMAL}"),
            "below the minimum",
        ),
    ];
    for (text, expected) in cases {
        let message = error_of(&text);
        assert!(
            message.contains(expected),
            "config {text:?}\n  gave {message:?}\n  expected it to contain {expected:?}"
        );
    }
}

#[test]
fn view_redacts_the_token() {
    let config = Config::parse(&format!("token = \"0123456789abcdef-secret\"\n{MINIMAL}")).unwrap();
    let json = format!("{:?}", config.view());
    assert!(!json.contains("secret"));
    assert_eq!(config.view().token, "<redacted>");
}

#[test]
fn tmpfs_that_can_hold_all_memory_is_warned_of() {
    assert_eq!(
        Config::embedded().unwrap().memory_warnings(),
        Vec::<String>::new()
    );
    let config = Config::parse(&format!(
        "default_runtime = \"sh\"\n{MINIMAL}mem_limit = \"512m\"\ntmpfs_size = \"200m\"\n[runtimes.roomy]\nimage = \"x\"\nmem_limit = \"1g\"\n[runtimes.kernel-of-its-own]\nimage = \"x\"\nisolation = \"gvisor\"\n"
    ))
    .unwrap();
    let warnings = config.memory_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    for words in [
        "runtime \"sh\"",
        "tmpfs_size 200",
        "mem_limit of 512",
        "Lower tmpfs_size to at most 170m",
    ] {
        assert!(warnings[0].contains(words), "{words}: {}", warnings[0]);
    }
}

#[test]
fn e2b_sizes_default_and_are_read_as_sizes() {
    let config = Config::parse(MINIMAL).unwrap();
    assert_eq!(
        config.e2b.watcher_bytes,
        crate::WatcherBytes {
            per_watcher: 1 << 20,
            per_tenant: 16 << 20,
            in_all: 64 << 20
        }
    );
    let config = Config::parse(&format!(
        "{MINIMAL}[e2b]\nwatcher_bytes = \"64k\"\nwatcher_bytes_in_all = 1000000\n"
    ))
    .unwrap();
    assert_eq!(config.e2b.watcher_bytes.per_watcher, 64 << 10);
    assert_eq!(config.e2b.watcher_bytes.in_all, 1_000_000);
    assert_eq!(config.e2b.volume_size, 1 << 30, "the default volume size");
    let config = Config::parse(&format!("{MINIMAL}[e2b]\nvolume_size = \"64m\"\n")).unwrap();
    assert_eq!(config.e2b.volume_size, 64 << 20);
    let error = error_of(&format!("{MINIMAL}[e2b]\nwatcher_bytes_per_tenant = 0\n"));
    assert!(error.contains("e2b.watcher_bytes_per_tenant"), "{error}");
}

#[test]
fn a_runtime_describes_itself_or_inherits_its_recipes_description() {
    let text =
        "default_runtime = \"plain\"\n[recipes.tiny]\ndescription = \"a tiny recipe\"\nbase = \"sandboxd/busybox:local\"\n\
                [runtimes.inherits]\nruntime = \"tiny\"\n\
                [runtimes.own]\nruntime = \"tiny\"\ndescription = \"  the runtime's own words  \"\n\
                [runtimes.plain]\nimage = \"sandboxd/busybox:local\"\n";
    let config = Config::parse(text).unwrap();
    assert_eq!(
        config.runtime("inherits").unwrap().description,
        "a tiny recipe"
    );
    assert_eq!(
        config.runtime("own").unwrap().description,
        "the runtime's own words"
    );
    assert_eq!(config.runtime("plain").unwrap().description, "");
    let catalogued = Config::parse(
        "default_runtime = \"ds\"\n[runtimes.ds]\nruntime = \"python-datascience\"\n",
    )
    .unwrap();
    assert!(catalogued
        .runtime("ds")
        .unwrap()
        .description
        .contains("numpy"));
    for runtime in Config::embedded().unwrap().runtimes.values() {
        assert!(
            !runtime.description.is_empty(),
            "{} has a description",
            runtime.name
        );
    }
}

#[test]
fn a_description_is_one_bounded_line() {
    let long = "x".repeat(description::MAX_DESCRIPTION_CHARS + 1);
    let error = error_of(&format!("{MINIMAL}description = \"{long}\"\n"));
    assert!(error.contains("runtimes.sh.description"), "{error}");
    assert!(error.contains("at most 200"), "{error}");
    let error = error_of(&format!("{MINIMAL}description = \"two\\nlines\"\n"));
    assert!(error.contains("one line"), "{error}");
    let error = error_of(&format!(
        "[recipes.r]\nbase = \"b\"\ndescription = \"{long}\"\n{MINIMAL}"
    ));
    assert!(error.contains("recipes.r.description"), "{error}");
    let fits = "y".repeat(description::MAX_DESCRIPTION_CHARS);
    let config = Config::parse(&format!("{MINIMAL}description = \"{fits}\"\n")).unwrap();
    assert_eq!(config.runtime("sh").unwrap().description, fits);
}
