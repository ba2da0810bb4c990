//! Runtimes built on first use, against the real engine: a recipe is built when its first
//! session needs it and never again while it is unchanged; a changed recipe is built again;
//! sessions asking at once share one build; images that cannot be had say why. Each test uses
//! recipes of its own and removes the images it built, also when it fails.

mod common;

use common::{base_config, busybox_image, docker, sandboxd_bin, TestService, TOKEN};
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

/// A recipe name no other test (or run) uses.
fn unique_recipe(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos:x}", std::process::id())
}

/// Removes every image built from a recipe, on drop. Declare it before the service, so the
/// service (and its sandboxes) goes first. Only recipe builds carry the hash label, so base
/// images are never matched whatever they are labelled.
struct RecipeImages(String);

impl RecipeImages {
    fn ids(&self) -> Vec<String> {
        let ids = docker(&[
            "images",
            "-q",
            "--no-trunc",
            "--filter",
            &format!("label=org.sandboxd.recipe={}", self.0),
            "--filter",
            "label=org.sandboxd.recipe-hash",
        ]);
        let mut ids: Vec<String> = ids.lines().map(str::to_string).collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

impl Drop for RecipeImages {
    fn drop(&mut self) {
        let ids = self.ids();
        if !ids.is_empty() {
            let mut args = vec!["rmi", "-f"];
            args.extend(ids.iter().map(String::as_str));
            docker(&args);
        }
    }
}

/// A tiny recipe on the busybox base, labelled as a test's.
fn tiny_recipe(name: &str, steps: &[&str]) -> String {
    let mut all: Vec<String> = steps.iter().map(|s| format!("{s:?}")).collect();
    all.push("\"LABEL org.sandboxd.test=true\"".into());
    format!(
        "[recipes.{name}]\nbase = \"{}\"\nsteps = [{}]\n",
        busybox_image(),
        all.join(", ")
    )
}

fn config_with_recipe(recipe_text: &str, recipe_name: &str) -> String {
    base_config(
        4,
        &format!("\n[runtimes.built]\nruntime = \"{recipe_name}\"\n\n{recipe_text}"),
    )
}

async fn runtime_entry(service: &TestService, name: &str) -> Value {
    let list: Value = service
        .get("/v1/runtimes")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    list["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .cloned()
        .unwrap()
}

async fn build_events(service: &TestService, runtime: &str) -> Vec<Value> {
    let response = service
        .post(&format!("/v1/runtimes/{runtime}/build"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

async fn create(service: &TestService, runtime: &str) -> (u16, Value) {
    let response = service
        .post("/v1/sessions")
        .json(&json!({"runtime": runtime}))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

fn image_id(image: &str) -> String {
    docker(&["image", "inspect", "--format", "{{.Id}}", image])
        .trim()
        .to_string()
}

#[tokio::test]
async fn a_recipe_is_built_on_first_use_and_never_again() {
    let name = unique_recipe("first-use");
    let images = RecipeImages(name.clone());
    let marker = format!("built-{name}");
    let recipe = tiny_recipe(&name, &[&format!("RUN echo {marker} > /etc/marker")]);
    let service = TestService::start(&config_with_recipe(&recipe, &name));

    let before = runtime_entry(&service, "built").await;
    assert_eq!(before["state"], "not_built", "{before}");
    let image = before["recipe_image"].as_str().unwrap().to_string();
    assert!(
        image.starts_with(&format!("sandboxd/recipe-{name}:")),
        "{image}"
    );

    let first = service.open("built").await;
    let output = service.sh(&first, "cat /etc/marker").await;
    assert_eq!(output["stdout"], format!("{marker}\n"));
    assert_eq!(runtime_entry(&service, "built").await["state"], "ready");
    let built = image_id(&image);
    let labels: Value = serde_json::from_str(&docker(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config.Labels}}",
        &image,
    ]))
    .unwrap();
    assert_eq!(labels["org.sandboxd.recipe"], name.as_str());
    let hash = labels["org.sandboxd.recipe-hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert!(image.ends_with(&hash[..12]), "the tag is the hash's start");

    // Used again: the same image, no build (no build step reported, no new image).
    let second = service.open("built").await;
    assert_eq!(
        service.sh(&second, "cat /etc/marker").await["stdout"],
        format!("{marker}\n")
    );
    let events = build_events(&service, "built").await;
    assert_eq!(events.last().unwrap()["state"], "ready", "{events:?}");
    assert!(
        events.iter().all(|e| e["progress"].get("step").is_none()),
        "nothing was built: {events:?}"
    );
    assert_eq!(image_id(&image), built);
    assert_eq!(images.ids().len(), 1, "one image for the recipe");

    // Nor after a restart of the service.
    drop(service);
    let service = TestService::start(&config_with_recipe(&recipe, &name));
    service.open("built").await;
    assert_eq!(image_id(&image), built);
    assert_eq!(images.ids().len(), 1);
}

#[tokio::test]
async fn a_changed_recipe_is_built_again() {
    let name = unique_recipe("changed");
    let images = RecipeImages(name.clone());
    let mut tags = Vec::new();
    for version in ["one", "two"] {
        let recipe = tiny_recipe(&name, &[&format!("RUN echo {version} > /etc/marker")]);
        let service = TestService::start(&config_with_recipe(&recipe, &name));
        let id = service.open("built").await;
        assert_eq!(
            service.sh(&id, "cat /etc/marker").await["stdout"],
            format!("{version}\n")
        );
        tags.push(
            runtime_entry(&service, "built").await["recipe_image"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_ne!(tags[0], tags[1], "a new hash, a new tag");
    assert_ne!(image_id(&tags[0]), image_id(&tags[1]));
    assert_eq!(images.ids().len(), 2);
}

#[tokio::test]
async fn sessions_asking_at_once_share_one_build() {
    let name = unique_recipe("shared");
    let images = RecipeImages(name.clone());
    // Slow enough to be seen building; the marker differs for every build that runs it.
    let recipe = tiny_recipe(
        &name,
        &["RUN sleep 3 && date +%s%N > /etc/marker && echo marked"],
    );
    let service = TestService::start(&config_with_recipe(&recipe, &name));

    // The listing shows the build while it runs (it takes at least the 3 s of its step).
    let watch_building = async {
        for _ in 0..100 {
            let entry = runtime_entry(&service, "built").await;
            if entry["state"] != "not_built" {
                return entry;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the build never showed in GET /v1/runtimes");
    };
    let ((status_a, a), (status_b, b), during) = tokio::join!(
        create(&service, "built"),
        create(&service, "built"),
        watch_building
    );
    assert_eq!((status_a, status_b), (201, 201), "{a} {b}");
    assert_eq!(during["state"], "building", "{during}");
    assert!(
        !during["progress"]["line"].as_str().unwrap().is_empty(),
        "{during}"
    );

    let marker_a = service
        .sh(a["id"].as_str().unwrap(), "cat /etc/marker")
        .await["stdout"]
        .clone();
    let marker_b = service
        .sh(b["id"].as_str().unwrap(), "cat /etc/marker")
        .await["stdout"]
        .clone();
    assert_eq!(marker_a, marker_b, "both sessions run the one image");
    assert_eq!(
        images.ids().len(),
        1,
        "a second build would have left a second image behind"
    );
}

#[tokio::test]
async fn images_that_cannot_be_had_say_why() {
    let name = unique_recipe("no-base");
    let _images = RecipeImages(name.clone());
    let extra = format!(
        "\n[runtimes.remote]\nimage = \"example.invalid/sandboxd-test/none:never\"\n\
         [runtimes.nobase]\nruntime = \"{name}\"\n\
         [recipes.{name}]\nbase = \"sandboxd/no-such-base:never\"\nsteps = [\"RUN true\"]\n"
    );
    let service = TestService::start(&base_config(4, &extra));

    // An image from a registry: pulled, which fails at once here (no registry), and says so.
    let started = Instant::now();
    let (status, error) = create(&service, "remote").await;
    assert!(started.elapsed() < Duration::from_secs(90), "bounded");
    assert_eq!(status, 503, "{error}");
    assert_eq!(error["error"]["code"], "image_missing");
    let message = error["error"]["message"].as_str().unwrap();
    for expected in [
        "example.invalid/sandboxd-test/none:never",
        "not on the engine",
        "pulling it failed",
        "docker pull",
    ] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }

    // One of ours: never pulled; made by scripts/build-images.sh.
    let (status, error) = create(&service, "ghost").await;
    assert_eq!(
        (status, &error["error"]["code"]),
        (503, &json!("image_missing"))
    );
    let message = error["error"]["message"].as_str().unwrap();
    for expected in [
        "sandboxd/does-not-exist:never",
        "never pulled",
        "build-images",
    ] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }

    // A recipe whose base is missing: the runtime is unavailable, and the message says which
    // base, of which recipe, and what to do.
    let (status, error) = create(&service, "nobase").await;
    assert_eq!(status, 503, "{error}");
    assert_eq!(error["error"]["code"], "runtime_unavailable");
    let message = error["error"]["message"].as_str().unwrap();
    for expected in [
        "runtime \"nobase\"",
        &format!("recipe \"{name}\""),
        "sandboxd/no-such-base:never",
        "not on the engine",
        "build-images",
        "change the recipe's `base`",
    ] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    let entry = runtime_entry(&service, "nobase").await;
    assert_eq!(entry["state"], "failed", "{entry}");
    assert!(entry["reason"]
        .as_str()
        .unwrap()
        .contains("sandboxd/no-such-base:never"));
    assert!(service.containers().is_empty());
}

#[tokio::test]
async fn a_failing_step_is_explained() {
    let name = unique_recipe("failing");
    let _images = RecipeImages(name.clone());
    let recipe = tiny_recipe(&name, &["RUN echo about to fail && false"]);
    let service = TestService::start(&config_with_recipe(&recipe, &name));
    let (status, error) = create(&service, "built").await;
    assert_eq!(status, 503, "{error}");
    assert_eq!(error["error"]["code"], "runtime_unavailable");
    let message = error["error"]["message"].as_str().unwrap();
    for expected in [
        "failed at step",
        "RUN echo about to fail && false",
        "non-zero code",
        "about to fail",
        "fix the recipe",
    ] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
}

#[tokio::test]
async fn the_cli_builds_ahead_of_time_and_prints_the_catalogue() {
    let name = unique_recipe("ahead");
    let _images = RecipeImages(name.clone());
    let recipe = tiny_recipe(&name, &["RUN echo ahead > /etc/marker"]);
    let service = TestService::start(&config_with_recipe(&recipe, &name));
    let cli = |args: &[&str]| {
        Command::new(sandboxd_bin())
            .args(args)
            .env("SANDBOXD_URL", &service.url)
            .env("SANDBOXD_TOKEN", TOKEN)
            .output()
            .unwrap()
    };

    let output = cli(&["runtimes", "build", "built"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("built: ready (sandboxd/recipe-"),
        "{stdout}"
    );
    assert!(stderr.contains("built: ["), "progress with steps: {stderr}");
    assert_eq!(runtime_entry(&service, "built").await["state"], "ready");

    let output = cli(&["runtimes", "build", "recipe"]);
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("recipe: failed: runtime \"recipe\""),
        "{stdout}"
    );

    let output = cli(&["runtimes", "suggested"]);
    let suggested = String::from_utf8_lossy(&output.stdout);
    for runtime in [
        "python",
        "python-datascience",
        "python-scraping",
        "node",
        "shell",
    ] {
        assert!(
            suggested.contains(&format!("[runtimes.{runtime}]\nruntime = \"{runtime}\"")),
            "{suggested}"
        );
    }
    let output = cli(&["runtimes", "suggested", "--recipes"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("[recipes.python-datascience]"));
}

/// The acceptance check on an offline host: the catalogue's python-datascience, built from
/// the local base image with the host's CA bundle for the downloads through the proxy. The
/// image is kept, as the service keeps it: its tag carries the recipe's hash, so only a
/// changed recipe is built again (minutes), and a kept one proves that recipe built here.
#[tokio::test]
async fn python_datascience_builds_from_the_offline_base() {
    let config = format!(
        r#"
token = "{TOKEN}"
[runtimes.datascience]
runtime = "python-datascience"
[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]
"#
    );
    let service = TestService::start(&config);
    let started = Instant::now();
    let response = service
        .client
        .post(service.url("/v1/sessions"))
        .bearer_auth(TOKEN)
        .timeout(Duration::from_secs(1800))
        .json(&json!({"runtime": "datascience"}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let session: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{session}");
    eprintln!(
        "python-datascience: built (or found by its recipe's hash) and started in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let output = service
        .sh(
            session["id"].as_str().unwrap(),
            "python3 -c 'import numpy, pandas; print(numpy.arange(3).sum())'",
        )
        .await;
    assert_eq!(output["stdout"], "3\n", "{output}");
}

#[tokio::test]
async fn open_shows_the_build_on_stderr_without_terminal_escapes() {
    let name = unique_recipe("open-shows");
    let _images = RecipeImages(name.clone());
    let recipe = tiny_recipe(&name, &[r"RUN printf '\033[31mcoloured\033[0m\n'"]);
    let service = TestService::start(&config_with_recipe(&recipe, &name));
    let open = || {
        Command::new(sandboxd_bin())
            .args(["open", "--runtime", "built", "--label", "suite=runtimes"])
            .env("SANDBOXD_URL", &service.url)
            .env("SANDBOXD_TOKEN", TOKEN)
            .output()
            .unwrap()
    };

    let first = open();
    let stdout = String::from_utf8_lossy(&first.stdout);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.trim().len() >= 8 && !stdout.trim().contains(char::is_whitespace),
        "stdout is the session id alone: {stdout}"
    );
    assert!(
        stderr.contains("built: its image is not on the platform yet"),
        "{stderr}"
    );
    assert!(stderr.contains("built: ["), "progress with steps: {stderr}");
    assert!(stderr.contains("coloured"), "the step's output: {stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no terminal escapes: {stderr:?}"
    );
    assert_eq!(runtime_entry(&service, "built").await["state"], "ready");

    let again = open();
    assert!(again.status.success());
    assert_eq!(
        String::from_utf8_lossy(&again.stderr),
        "",
        "nothing to build"
    );

    let missing = Command::new(sandboxd_bin())
        .args(["open", "--runtime", "ghost"])
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(5), "an API error: {stderr}");
    assert!(
        stderr.contains("ghost: its image is not on the platform yet"),
        "{stderr}"
    );
    assert!(stderr.contains("runtime_unavailable: "), "{stderr}");
    assert!(stderr.contains("sandboxd/does-not-exist:never"), "{stderr}");
}
