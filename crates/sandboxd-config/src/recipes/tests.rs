//! Recipes: the catalogue, resolution, build settings, step checks and content hashes.

use super::*;
use crate::config::Config;

#[test]
fn the_catalogue_has_the_suggested_runtimes() {
    let catalogue = catalogue();
    let names: Vec<&str> = catalogue.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "code-interpreter",
            "desktop",
            "node",
            "python",
            "python-datascience",
            "python-gvisor",
            "python-interpreter",
            "python-scraping",
            "shell"
        ]
    );
    let gvisor = catalogue
        .values()
        .filter(|r| r.limits.isolation == sandboxd_api::Isolation::Gvisor)
        .map(|r| r.name.as_str());
    assert!(
        gvisor.eq(["python-gvisor"]),
        "only python-gvisor has a kernel of its own"
    );
    for recipe in catalogue.values() {
        assert!(
            recipe.base.starts_with("sandboxd/"),
            "{} must build on a local base image",
            recipe.name
        );
        assert!(recipe.image.starts_with("sandboxd/recipe-"));
        assert!(!recipe.description.is_empty());
    }
    let scraping = &catalogue["python-scraping"];
    assert_eq!(scraping.limits.network_mode.as_str(), "bridge");
    let others_offline = catalogue
        .values()
        .filter(|r| r.name != "python-scraping")
        .all(|r| r.limits.network_mode.as_str() == "none");
    assert!(others_offline, "only python-scraping is given the network");
    assert!(catalogue["python-datascience"]
        .dockerfile
        .contains("pandas"));
    // What E2B's Desktop SDK runs, and noVNC where it looks for it.
    let desktop = &catalogue["desktop"].dockerfile;
    for tool in [
        "xvfb",
        "xfce4-session",
        "xfwm4",
        "xfdesktop4",
        "x11vnc",
        "novnc",
        "xdotool",
        "x11-xserver-utils",
        "scrot",
        "x11-utils",
        "net-tools",
        "xdg-utils",
        "libgtk-3-bin",
    ] {
        assert!(desktop.contains(&format!(" {tool} ")), "{tool}");
    }
    assert!(desktop.contains("ln -s /usr/share/novnc /opt/noVNC"));
    let interpreter = &catalogue["python-interpreter"];
    assert!(interpreter.dockerfile.contains("ipykernel=="));
    assert!(interpreter.kernels["python"].contains(&"{connection_file}".to_string()));
    assert!(catalogue["python"].kernels.is_empty());
    let languages: Vec<&str> = catalogue["code-interpreter"]
        .kernels
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        languages,
        ["bash", "java", "javascript", "python", "r", "typescript"],
        "the languages of E2B's SDK"
    );
    // The rich-results extension is one Dockerfile line (steps are one instruction each).
    let code_interpreter = &catalogue["code-interpreter"].dockerfile;
    let extension = code_interpreter
        .lines()
        .find(|l| l.contains("sandboxd_e2b_results.py"))
        .unwrap();
    assert!(extension.contains("def load_ipython_extension(shell):"));
}

#[test]
fn suggested_runtimes_paste_into_a_config() {
    let text = format!("default_runtime = \"python\"\n{}", suggested_runtimes());
    let config = Config::parse(&text).unwrap();
    assert_eq!(config.runtimes.len(), catalogue().len());
    let datascience = config.runtime("python-datascience").unwrap();
    assert_eq!(datascience.limits, catalogue()["python-datascience"].limits);
    assert_eq!(datascience.interpreter, ["python3"]);
    // The catalogue itself pastes under [recipes] too.
    let with_recipes = format!("{text}\n{CATALOGUE}");
    let config = Config::parse(&with_recipes).unwrap();
    assert_eq!(
        config.recipe("python").unwrap().hash,
        catalogue()["python"].hash,
        "a pasted copy of a recipe is the same recipe"
    );
}

#[test]
fn the_hash_follows_the_content() {
    let recipe = |steps: &str| {
        Config::parse(&format!(
            "[runtimes.t]\nruntime = \"t\"\n[recipes.t]\nbase = \"b\"\nsteps = [{steps}]\n"
        ))
        .unwrap()
        .recipe("t")
        .unwrap()
        .clone()
    };
    let a = recipe("\"RUN echo a\"");
    let a_again = recipe("\"  RUN echo a \"");
    let b = recipe("\"RUN echo b\"");
    assert_eq!(a.hash, a_again.hash, "surrounding spaces are not content");
    assert_ne!(a.hash, b.hash);
    assert_eq!(a.image, format!("sandboxd/recipe-t:{}", &a.hash[..12]));
    assert_eq!(a.dockerfile, "FROM b\nRUN echo a\n");
}

#[test]
fn a_ca_trusted_later_changes_every_recipe_tag() {
    let mut config = Config::parse("[runtimes.t]\nruntime = \"python\"\n").unwrap();
    let before = config.runtime("t").unwrap().recipe_image.clone().unwrap();
    let pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    config.trust_in_builds(pem);
    let recipe = config.recipe("python").unwrap();
    assert!(
        recipe.dockerfile.contains(EXTRA_CA_FILE),
        "{}",
        recipe.dockerfile
    );
    assert_ne!(recipe.image, before);
    assert_eq!(
        config.runtime("t").unwrap().recipe_image.as_ref(),
        Some(&recipe.image)
    );
    let file = &config.build.context[0];
    assert!(file.contents.ends_with(pem));
}

#[test]
fn extra_ca_certificates_go_into_the_build() {
    let dir = tempfile_dir();
    let ca = dir.join("proxy-ca.pem");
    std::fs::write(
        &ca,
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    )
    .unwrap();
    let text = format!(
        "[runtimes.t]\nruntime = \"python\"\n[build]\nextra_ca_certificates = [{:?}]\ntimeout_secs = 60\n",
        ca.display().to_string()
    );
    let config = Config::parse(&text).unwrap();
    assert_eq!(config.build.timeout, Duration::from_secs(60));
    assert_eq!(config.build.context.len(), 1);
    assert_eq!(config.build.context[0].name, EXTRA_CA_FILE);
    assert!(config.build.context[0].contents.ends_with(b"-----\n"));
    let python = config.recipe("python").unwrap();
    assert!(python
        .dockerfile
        .contains(&format!("COPY {EXTRA_CA_FILE} ")));
    assert!(python.dockerfile.contains("PIP_CERT="));
    assert_ne!(
        python.hash,
        catalogue()["python"].hash,
        "the CA is part of the build"
    );

    std::fs::write(&ca, "not a certificate").unwrap();
    let message = Config::parse(&text).unwrap_err().to_string();
    assert!(
        message.contains("build.extra_ca_certificates[0]") && message.contains("no PEM"),
        "{message}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "sandboxd-config-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn precise_recipe_errors() {
    let runtime = "[runtimes.t]\nruntime = \"t\"\n";
    let cases = [
        (
            "[runtimes.t]\nruntime = \"nope\"\n".to_string(),
            "runtimes.t.runtime: no recipe named \"nope\"",
        ),
        (
            format!("{runtime}[recipes.t]\nbase = \"b\"\nsteps = [\"FROM debian\"]\n"),
            "recipes.t.steps[0]: the build starts from the recipe's `base`",
        ),
        (
            format!("{runtime}[recipes.t]\nbase = \"b\"\nsteps = [\"RUN a\", \"apt-get install x\"]\n"),
            "recipes.t.steps[1]: \"apt-get\" is not a Dockerfile instruction",
        ),
        (
            format!("{runtime}[recipes.t]\nbase = \"b\"\nsteps = [\"RUN a\\nRUN b\"]\n"),
            "recipes.t.steps[0]: one Dockerfile instruction on one line",
        ),
        (
            format!("{runtime}[recipes.t]\nbase = \"\"\n"),
            "recipes.t.base: must be an image name",
        ),
        (
            format!("{runtime}[recipes.t]\nsteps = []\n"),
            "missing field `base`",
        ),
        (
            format!("{runtime}[recipes.t]\nbase = \"b\"\nprivileged = true\n"),
            "unknown field `privileged`",
        ),
        (
            format!("{runtime}[recipes.t]\nbase = \"b\"\ncpus = 0\n"),
            "recipes.t.cpus: must be a number above 0",
        ),
        (
            "[runtimes.t]\nruntime = \"Big_Name\"\n[recipes.Big_Name]\nbase = \"b\"\n"
                .to_string(),
            "recipes.Big_Name: a recipe name may only hold lowercase letters",
        ),
        (
            "[runtimes.t]\nruntime = \"python\"\n[build]\nextra_ca_certificates = [\"/nonexistent/ca.pem\"]\n".to_string(),
            "build.extra_ca_certificates[0]: cannot read /nonexistent/ca.pem",
        ),
        (
            "[runtimes.t]\nruntime = \"python\"\n[build]\ntimeout_secs = 0\n".to_string(),
            "build.timeout_secs: must be above 0",
        ),
    ];
    for (text, expected) in cases {
        let message = Config::parse(&text).unwrap_err().to_string();
        assert!(
            message.contains(expected),
            "config {text:?}\n  gave {message:?}\n  expected it to contain {expected:?}"
        );
    }
}

#[test]
fn unknown_recipe_lists_the_known_ones() {
    let message = Config::parse("[runtimes.t]\nruntime = \"nope\"\n[recipes.mine]\nbase = \"b\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(
            "desktop, node, python, python-datascience, python-gvisor, python-interpreter, python-scraping, shell"
        ) && message.contains("mine")
            && message.contains("[recipes.nope]"),
        "{message}"
    );
}

#[test]
fn a_runtime_inherits_the_recipe_then_overrides_it() {
    let config = Config::parse(
        "mem_limit = \"300m\"\ndefault_runtime = \"a\"\n\
         [runtimes.a]\nruntime = \"python-scraping\"\n\
         [runtimes.b]\nruntime = \"python-scraping\"\nnetwork_mode = \"none\"\nmem_limit = \"2g\"\ninterpreter = [\"python3\", \"-u\"]\n\
         [runtimes.c]\nruntime = \"mine\"\n\
         [recipes.mine]\nbase = \"b\"\n",
    )
    .unwrap();
    let a = config.runtime("a").unwrap();
    assert_eq!(a.limits.network_mode.as_str(), "bridge");
    assert_eq!(a.limits.mem_limit_bytes, 1 << 30, "the recipe's");
    assert_eq!(a.interpreter, ["python3"]);
    assert_eq!(
        a.recipe_image.as_deref(),
        Some(config.recipe("python-scraping").unwrap().image.as_str())
    );
    let b = config.runtime("b").unwrap();
    assert_eq!(b.limits.network_mode.as_str(), "none");
    assert_eq!(b.limits.mem_limit_bytes, 2 << 30);
    assert_eq!(b.interpreter, ["python3", "-u"]);
    let c = config.runtime("c").unwrap();
    assert_eq!(
        c.limits.mem_limit_bytes,
        300 << 20,
        "the service-wide default"
    );
    assert!(c.interpreter.is_empty());
}

#[test]
fn a_config_recipe_replaces_the_catalogue_one() {
    let config = Config::parse(
        "[runtimes.t]\nruntime = \"python\"\n[recipes.python]\nbase = \"sandboxd/python:3.11-bookworm\"\nsteps = [\"RUN true\"]\n",
    )
    .unwrap();
    let python = config.recipe("python").unwrap();
    assert!(python.dockerfile.ends_with("RUN true\n"));
    assert_ne!(python.hash, catalogue()["python"].hash);
    assert!(
        config.recipe("node").is_some(),
        "the rest of the catalogue stays"
    );
}
