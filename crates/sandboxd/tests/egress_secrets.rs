//! Secrets through the egress proxy, against the real engine and test hosts of our own (a
//! network namespace with HTTPS servers under a test CA, a DNS server on loopback): the
//! sandbox holds a placeholder, the proxy puts the real value into the configured header
//! towards the secret's hosts only, refuses the placeholder anywhere else, and the value is
//! nowhere in the sandbox, the API's answers or the service's log. Needs root.

mod common;

#[path = "../../sandboxd-egress/tests/support/testnet.rs"]
mod testnet;

mod egress_world;

// What testnet notes its namespaces in.
use common::ledger;

use common::{base_config, TestService};
use egress_world::{python_open, World};
use std::collections::HashMap;
use testnet::{dns_server, serve_recording, test_ca, Received, TestNet};

struct Secrets {
    world: World,
    /// The real values, which only the test servers may see.
    api_value: String,
    second_value: String,
    tls: Received,
    plain: Received,
    _files: tempfile::TempDir,
}

async fn secrets_world() -> Secrets {
    let net = TestNet::create();
    let ca = test_ca();
    let tls = serve_recording(
        tokio::net::TcpListener::from_std(net.bind(443)).unwrap(),
        Some(ca.server_config_for(&["allowed.test", "secret.test", "second.test"])),
    );
    let plain = serve_recording(
        tokio::net::TcpListener::from_std(net.bind(80)).unwrap(),
        None,
    );
    let dns = dns_server(HashMap::from([
        ("allowed.test".to_string(), net.ns_ip),
        ("secret.test".to_string(), net.ns_ip),
        ("second.test".to_string(), net.ns_ip),
    ]))
    .await;
    let unique = format!(
        "{}{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let (api_value, second_value) = (format!("sk-real-{unique}"), format!("key2-real-{unique}"));
    let files = tempfile::tempdir().unwrap();
    let path = |name: &str, contents: &str| {
        let path = files.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    };
    let (api_file, second_file, ca_file) = (
        path("api", &format!("{api_value}\n")),
        path("second", &second_value),
        path("ca.pem", &ca.pem),
    );
    let extra = format!(
        "[runtimes.net]\nimage = \"{}\"\nmem_limit = \"256m\"\nnetwork_mode = \"egress\"\n\
         egress = [\"allowed.test\", \"secret.test\", \"second.test\"]\nsecrets = [\"api\", \"second\"]\n\n\
         [egress]\nupstream_dns = [\"{dns}\"]\nupstream_ca_certificates = [{ca_file:?}]\n\n\
         [secrets.api]\nvalue_file = {api_file:?}\nhosts = [\"secret.test\"]\nenv = \"API_KEY\"\n\n\
         [secrets.second]\nvalue_file = {second_file:?}\nhosts = [\"second.test\"]\nheader = \"X-Api-Key\"\nformat = \"{{}}\"\nenv = \"SECOND_KEY\"\n",
        common::python_image()
    );
    let service = TestService::start_logged(&base_config(4, &extra));
    Secrets {
        world: World::start(service, net).await,
        api_value,
        second_value,
        tls,
        plain,
        _files: files,
    }
}

/// A Python program in the sandbox sending `header: value` to `url` (the value may name the
/// sandbox's variables, as `{API_KEY}`), trusting what the sandbox trusts: prints the status
/// and body, or the error.
fn send(url: &str, header: &str, value: &str, use_proxy: bool) -> String {
    let request = format!(
        "urllib.request.Request('{url}', headers={{'{header}': '{value}'.format(**os.environ)}})"
    );
    python_open(&request, "", use_proxy)
}

/// The header `api`'s sandbox programs send, its placeholder from the environment.
const BEARER: &str = "Bearer {API_KEY}";

/// The values of `header` in every request a test server received, in order.
fn seen(received: &Received, header: &str) -> Vec<String> {
    received
        .lock()
        .unwrap()
        .iter()
        .filter_map(|headers| headers.get(header))
        .map(|v| v.to_str().unwrap().to_string())
        .collect()
}

impl Secrets {
    /// The secret's host called with its placeholder as the configured header.
    async fn call_secret_host(&self, use_proxy: bool) -> String {
        let call = send("https://secret.test/", "Authorization", BEARER, use_proxy);
        self.world.run(&call).await
    }

    async fn placeholder(&self, variable: &str) -> String {
        self.world.run(&format!("printenv {variable}")).await
    }

    /// Asserts `text` (named `what`) holds neither real value.
    fn assert_clean(&self, what: &str, text: &str) {
        for value in [&self.api_value, &self.second_value] {
            assert!(
                !text.contains(value.as_str()),
                "{what} holds a secret's value"
            );
        }
    }
}

#[tokio::test]
async fn a_placeholder_becomes_the_secret_only_towards_its_host() {
    let mut s = secrets_world().await;
    let placeholder = s.placeholder("API_KEY").await;
    assert!(
        placeholder.starts_with("sandboxd-placeholder-"),
        "{placeholder}"
    );
    let second = s.placeholder("SECOND_KEY").await;
    assert!(second.starts_with("sandboxd-placeholder-") && second != placeholder);

    // Towards its host, through the proxy (CONNECT) and redirected (TLS on 443): the real
    // value arrives in the configured header, and the answer is the host's.
    for use_proxy in [true, false] {
        assert_eq!(s.call_secret_host(use_proxy).await, "200 hello secret.test");
    }
    assert_eq!(
        seen(&s.tls, "authorization"),
        vec![format!("Bearer {}", s.api_value); 2]
    );
    let entry = s
        .world
        .entry("secret.test:443 secret api", "egress.secret")
        .await;
    assert_eq!(entry["status"], "ok");
    let answer = s
        .world
        .run(&send(
            "https://second.test/",
            "X-Api-Key",
            "{SECOND_KEY}",
            true,
        ))
        .await;
    assert_eq!(answer, "200 hello second.test");
    assert_eq!(seen(&s.tls, "x-api-key"), [s.second_value.clone()]);

    // Anywhere else, refused and logged: another allowed host over plain HTTP, the host of
    // another secret, its own host in plain HTTP or in another header.
    for (url, header, value, target) in [
        (
            "http://allowed.test/",
            "Authorization",
            BEARER,
            "allowed.test:80 secret api",
        ),
        (
            "https://second.test/",
            "Authorization",
            BEARER,
            "second.test:443 secret api",
        ),
        (
            "http://secret.test/",
            "Authorization",
            BEARER,
            "secret.test:80 secret api",
        ),
        (
            "https://secret.test/",
            "X-Echo",
            "{API_KEY}",
            "secret.test:443 secret api",
        ),
    ] {
        let answer = s.world.run(&send(url, header, value, true)).await;
        assert!(
            answer.starts_with(
                "403 refused by policy: the request carries the placeholder of secret \"api\""
            ),
            "{url}: {answer}"
        );
        let entry = s.world.entry(target, "egress.secret_refused").await;
        assert_eq!(entry["status"], "refused", "{entry}");
    }
    assert!(seen(&s.plain, "authorization").is_empty());
    assert_eq!(seen(&s.tls, "authorization").len(), 2);
    assert!(seen(&s.tls, "x-echo").is_empty());

    // A host passed through (not a secret's) is never decrypted: what it gets is the
    // placeholder, worthless anywhere but through the proxy to the secret's host.
    let answer = s
        .world
        .run(&send(
            "https://allowed.test/",
            "Authorization",
            BEARER,
            true,
        ))
        .await;
    assert_eq!(answer, "200 hello allowed.test");
    assert_eq!(
        seen(&s.tls, "authorization").last().unwrap(),
        &format!("Bearer {placeholder}")
    );

    // The value is nowhere in the sandbox: not in its files (searched whole, bar /proc and
    // /sys; the value is given to grep in two halves, so the command holds it nowhere), not in
    // its environment, not in what the engine keeps of it.
    let (first, rest) = s.api_value.split_at(8);
    let (second_first, second_rest) = s.second_value.split_at(6);
    let search = format!(
        "A={first}; B={rest}; C={second_first}; D={second_rest}; \
         grep -rlsF --exclude-dir=proc --exclude-dir=sys -e \"$A$B\" -e \"$C$D\" / ; echo searched"
    );
    assert_eq!(s.world.run(&search).await, "searched");
    let environment = s.world.run("env; cat /proc/1/environ").await;
    assert!(environment.contains(&placeholder), "{environment}");
    s.assert_clean("the sandbox's environment", &environment);
    let bundle = s
        .world
        .run("grep -c 'BEGIN CERTIFICATE' $SSL_CERT_FILE; grep -c 'PRIVATE KEY' $SSL_CERT_FILE")
        .await;
    assert!(bundle.ends_with("\n0"), "the bundle holds a key: {bundle}");
    let container = common::docker(&["inspect", &format!("sandboxd-{}", s.world.session)]);
    s.assert_clean("the container's inspection", &container);

    // Nor in the API's answers, nor in the service's log.
    let id = &s.world.session;
    for path in [
        "/v1/sessions".to_string(),
        format!("/v1/sessions/{id}"),
        format!("/v1/sessions/{id}/activity"),
        format!("/v1/sessions/{id}/network"),
        "/v1/runtimes".to_string(),
        "/v1/config".to_string(),
        "/v1/policy".to_string(),
        "/v1/audit".to_string(),
        "/v1/stats".to_string(),
    ] {
        let answer = s.world.service.get(&path).send().await.unwrap();
        assert!(answer.status().is_success(), "{path}: {}", answer.status());
        s.assert_clean(&path, &answer.text().await.unwrap());
    }
    let log = s.world.service.log();
    assert!(log.contains("egress secrets api, second"), "{log}");
    s.assert_clean("the service's log", &log);

    // The CA is kept: the same after a restart, its key private, and the resumed sandbox's
    // placeholder still works.
    let ca_dir = s.world.service.state_dir.path().join("egress-ca");
    let ca = std::fs::read_to_string(ca_dir.join("ca.pem")).unwrap();
    let key_mode = std::fs::metadata(ca_dir.join("ca-key.pem")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(key_mode.permissions().mode() & 0o777, 0o600);
    s.world.service.crash_and_restart();
    assert_eq!(std::fs::read_to_string(ca_dir.join("ca.pem")).unwrap(), ca);
    assert_eq!(s.call_secret_host(false).await, "200 hello secret.test");
    assert_eq!(seen(&s.tls, "authorization").len(), 4);
    s.assert_clean("the service's log", &s.world.service.log());
}

/// The CLI as a user's shell runs it: `sandboxd run` on the egress runtime opens a session
/// whose call to the secret's host carries the value, and nothing the CLI prints holds it.
/// (Threads: the test's hosts answer on the runtime while the CLI's run blocks one.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_s_session_sends_the_secret_and_prints_no_value() {
    let s = secrets_world().await;
    let cli = |args: &[&str]| {
        let output = std::process::Command::new(common::sandboxd_bin())
            .args(args)
            .env("SANDBOXD_URL", &s.world.service.url)
            .env("SANDBOXD_TOKEN", common::TOKEN)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        s.assert_clean(&format!("sandboxd {}", args.join(" ")), &printed);
        (output.status.success(), printed)
    };
    let call = send("https://secret.test/", "Authorization", BEARER, true);
    let (ran, printed) = cli(&["run", "--runtime", "net", "--", "sh", "-c", &call]);
    assert!(ran, "{printed}");
    assert_eq!(printed.trim(), "200 hello secret.test");
    assert_eq!(
        seen(&s.tls, "authorization"),
        [format!("Bearer {}", s.api_value)]
    );
    // What the CLI shows of the sessions, the runtimes and the world's session.
    let id = s.world.session.as_str();
    for args in [
        &["sessions", "--all"][..],
        &["runtimes"],
        &["activity", id],
        &["network", id],
        &["exec", id, "--", "env"],
    ] {
        let (ok, printed) = cli(args);
        assert!(ok, "sandboxd {}: {printed}", args.join(" "));
    }
}
