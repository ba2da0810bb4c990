//! Files in a session, against a real service, its agent in a real sandbox and Docker: round
//! trips, listings, deletes, and every refusal, with the activity log checked for contents.

mod common;

use common::{base_config, TestService, TOKEN};
use rand::Rng;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A session's files through the API.
struct Files<'a> {
    service: &'a TestService,
    id: String,
}

impl<'a> Files<'a> {
    async fn open(service: &'a TestService, runtime: &str) -> Files<'a> {
        let id = service.open(runtime).await;
        Files { service, id }
    }

    /// `/v1/sessions/{id}/{route}?path=...`, the path percent-encoded.
    fn route(&self, route: &str, path: &str) -> String {
        format!("/v1/sessions/{}/{route}?path={}", self.id, encoded(path))
    }

    async fn write(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let response = self
            .service
            .put(&self.route("files/content", path))
            .body(body)
            .send()
            .await
            .unwrap();
        status_and_json(response).await
    }

    /// The status and the body: the file's bytes, or the error's JSON text.
    async fn read(&self, path: &str) -> (u16, Vec<u8>) {
        let response = self
            .service
            .get(&self.route("files/content", path))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.bytes().await.unwrap().to_vec())
    }

    async fn read_ok(&self, path: &str) -> Vec<u8> {
        let (status, body) = self.read(path).await;
        assert_eq!(
            status,
            200,
            "read {path}: {}",
            String::from_utf8_lossy(&body)
        );
        body
    }

    async fn list(&self, path: &str) -> (u16, Value) {
        let response = self
            .service
            .get(&self.route("files", path))
            .send()
            .await
            .unwrap();
        status_and_json(response).await
    }

    /// The names in a directory, hidden ones included, sorted.
    async fn names(&self, path: &str) -> Vec<String> {
        let (status, listing) = self.list(path).await;
        assert_eq!(status, 200, "list {path}: {listing}");
        listing["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    }

    async fn delete(&self, path: &str, recursive: bool) -> (u16, Value) {
        let mut route = self.route("files", path);
        if recursive {
            route.push_str("&recursive=true");
        }
        let response = self.service.delete(&route).send().await.unwrap();
        status_and_json(response).await
    }

    async fn sh(&self, command: &str) -> String {
        let result = self.service.sh(&self.id, command).await;
        assert_eq!(result["exit_code"], 0, "{command}: {result}");
        result["stdout"].as_str().unwrap().to_string()
    }

    async fn activity(&self) -> Value {
        let response = self
            .service
            .get(&format!("/v1/sessions/{}/activity", self.id))
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(status, 200, "{body}");
        body
    }
}

async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// Percent-encodes everything but unreserved characters and `/`.
fn encoded(path: &str) -> String {
    path.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn error_code(body: &[u8]) -> String {
    let error: Value = serde_json::from_slice(body).expect("an error body");
    error["error"]["code"].as_str().unwrap().to_string()
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut bytes = vec![0; len];
    rand::rng().fill(&mut bytes[..]);
    bytes
}

/// zlib's Adler-32, to compare with what Python computes inside the sandbox.
fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// Sends a PUT by hand, for what reqwest will not send: a Content-Length with no body (when
/// `chunks` is empty), or a chunked body. The body is written while the answer is read, since
/// the service may answer before taking all of it.
async fn raw_put(
    service: &TestService,
    route: &str,
    headers: &str,
    chunks: Vec<Vec<u8>>,
) -> (u16, Value) {
    let address = service.url.strip_prefix("http://").unwrap();
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let head = format!(
        "PUT {route} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n{headers}\r\n"
    );
    let sending = tokio::spawn(async move {
        let mut request = head.into_bytes();
        if !chunks.is_empty() {
            for chunk in chunks {
                request.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
                request.extend(chunk);
                request.extend(b"\r\n");
            }
            request.extend(b"0\r\n\r\n");
        }
        // The service may stop reading once it has answered.
        let _ = writer.write_all(&request).await;
        // Kept open: the service drops its answer to a client that half-closes.
        writer
    });
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), reader.read_to_end(&mut response))
        .await
        .expect("an answer within 60 s")
        .unwrap();
    drop(sending.await);
    let text = String::from_utf8_lossy(&response);
    let status = text[9..12].parse().unwrap();
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap())
}

#[tokio::test]
async fn text_and_ten_megabytes_of_random_bytes_round_trip() {
    let service = TestService::start(&base_config(2, ""));
    let files = Files::open(&service, "python").await;

    let text = "hello, wörld\nsecond line\n";
    let (status, written) = files.write("notes/deeper/hello.txt", text).await;
    assert_eq!(status, 200, "{written}");
    assert_eq!(written["path"], "/workspace/notes/deeper/hello.txt");
    assert_eq!(written["bytes"], text.len());
    assert_eq!(
        files.read_ok("notes/deeper/hello.txt").await,
        text.as_bytes()
    );
    assert_eq!(files.sh("cat notes/deeper/hello.txt").await, text);
    // Owned by the sandbox user, plain mode, in the working directory.
    assert_eq!(
        files
            .sh("stat -c '%a %u' /workspace/notes/deeper/hello.txt")
            .await,
        "644 61000\n"
    );

    let blob = random_bytes(10 << 20);
    let (status, written) = files.write("blob.bin", blob.clone()).await;
    assert_eq!(status, 200, "{written}");
    assert_eq!(written["bytes"], blob.len());
    let response = service
        .get(&files.route("files/content", "blob.bin"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/octet-stream"
    );
    assert_eq!(response.headers()["content-length"], "10485760");
    let downloaded = response.bytes().await.unwrap();
    assert!(downloaded == blob, "the download differs from the upload");
    let checksum = files
        .sh("python3 -c \"import zlib; print(zlib.adler32(open('blob.bin', 'rb').read()))\"")
        .await;
    assert_eq!(checksum.trim(), adler32(&blob).to_string());

    // Replacing a file leaves no temporary file behind.
    let (status, _) = files.write("blob.bin", "short").await;
    assert_eq!(status, 200);
    assert_eq!(files.read_ok("blob.bin").await, b"short");
    assert_eq!(files.names(".").await, ["blob.bin", "notes"]);
}

#[tokio::test]
async fn listing_gives_names_types_sizes_modes_and_times() {
    let service = TestService::start(&base_config(2, ""));
    let files = Files::open(&service, "sh").await;
    files
        .sh("mkdir -p d/sub && printf abc > d/a.txt && chmod 600 d/a.txt && ln -s a.txt d/link && touch d/.hidden")
        .await;

    let (status, relative) = files.list("d").await;
    assert_eq!(status, 200, "{relative}");
    assert_eq!(relative["path"], "/workspace/d");
    assert_eq!(relative["truncated"], false);
    let entries = relative["entries"].as_array().unwrap();
    let summary: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            (".hidden", "file"),
            ("a.txt", "file"),
            ("link", "symlink"),
            ("sub", "dir")
        ]
    );
    assert_eq!(entries[2]["target_type"], "file", "what the link leads to");
    assert_eq!(entries[1].get("target_type"), None);
    let file = &entries[1];
    assert_eq!(
        (file["size"].as_u64(), file["mode"].as_str()),
        (Some(3), Some("0600"))
    );
    let modified = file["modified"].as_str().unwrap();
    assert!(
        modified.len() >= 20 && modified.as_bytes()[10] == b'T',
        "RFC 3339: {modified}"
    );

    let (status, absolute) = files.list("/workspace/d").await;
    assert_eq!(status, 200);
    assert_eq!(absolute["entries"], relative["entries"]);
    // Without a path: the working directory.
    let response = service
        .get(&format!("/v1/sessions/{}/files", files.id))
        .send()
        .await
        .unwrap();
    let (status, listing) = status_and_json(response).await;
    assert_eq!(status, 200);
    assert_eq!(listing["entries"][0]["name"], "d");

    let (status, error) = files.list("d/a.txt").await;
    assert_eq!(
        (status, &error["error"]["code"]),
        (409, &Value::from("not_a_directory"))
    );
}

#[tokio::test]
async fn deleting_files_and_directories() {
    let service = TestService::start(&base_config(2, ""));
    let files = Files::open(&service, "sh").await;
    files
        .sh("mkdir -p tree/sub keep && echo x > tree/sub/f && echo y > file && echo z > keep/k && ln -s /workspace/keep tree/sub/link-to-keep && ln -s keep keeplink")
        .await;

    let (status, deleted) = files.delete("file", false).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["path"], "/workspace/file");
    assert_eq!(files.read("file").await.0, 404);

    let (status, refused) = files.delete("tree", false).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "is_directory");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("recursive=true"), "{message}");
    assert_eq!(files.read_ok("tree/sub/f").await, b"x\n");

    // Recursive, through a symlink to a directory that must survive.
    let (status, deleted) = files.delete("tree", true).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(files.names(".").await, ["keep", "keeplink"]);
    assert_eq!(files.read_ok("keep/k").await, b"z\n");

    // A symlink to a directory is removed itself, even with recursive.
    let (status, _) = files.delete("keeplink", true).await;
    assert_eq!(status, 200);
    assert_eq!(files.names(".").await, ["keep"]);
    assert_eq!(files.names("keep").await, ["k"]);

    // Nothing there is no error: what was asked for is so.
    let (status, missing) = files.delete("nothing-here", true).await;
    assert_eq!(status, 200, "{missing}");
    assert_eq!(missing["path"], "/workspace/nothing-here");
    for refused in [".", "/", "keep/.."] {
        let (status, body) = files.delete(refused, true).await;
        assert_eq!(status, 400, "{refused}: {body}");
    }
    assert_eq!(files.names(".").await, ["keep"]);
}

#[tokio::test]
async fn paths_resolve_inside_the_sandbox() {
    let service = TestService::start(&base_config(2, ""));
    let files = Files::open(&service, "sh").await;

    // `..` climbs the sandbox's own tree: its /etc/passwd, with the sandbox user.
    let passwd = String::from_utf8(files.read_ok("../../etc/passwd").await).unwrap();
    assert!(passwd.contains("sandbox:x:61000:"), "{passwd}");
    assert_ne!(passwd, std::fs::read_to_string("/etc/passwd").unwrap());
    let (status, refused) = files.write("../../etc/x", "nope").await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (403, &Value::from("read_only"))
    );

    // A symlink to / is the sandbox's root, not the host's.
    files.sh("ln -s / /workspace/root").await;
    assert_eq!(files.read_ok("root/etc/hostname").await, b"sandbox\n");
    assert_eq!(files.read_ok("/etc/hostname").await, b"sandbox\n");
    let root = files.names("root").await;
    // Where the agent is: bind-mounted on Docker, a volume of the pod on Kubernetes.
    let agent = if common::kubernetes().is_some() {
        ".sandboxd"
    } else {
        ".sandboxd-agent"
    };
    assert!(root.contains(&agent.to_string()), "{root:?}");
    let (status, refused) = files.write("root/etc/x", "nope").await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (403, &Value::from("read_only"))
    );
    let (status, refused) = files.write("/proc/x", "nope").await;
    assert!((400..500).contains(&status), "{status}: {refused}");
    // Writable places other than the working directory work.
    let (status, _) = files.write("/tmp/t.txt", "tmp").await;
    assert_eq!(status, 200);
    assert_eq!(files.sh("cat /tmp/t.txt").await, "tmp");
}

#[tokio::test]
async fn symlinks_are_followed_inside_and_special_files_refused() {
    let service = TestService::start(&base_config(2, ""));
    let files = Files::open(&service, "sh").await;
    files
        .sh("echo inside > a.txt && ln -s a.txt good && ln -s /dev/zero zero && ln -s /etc etc && mkfifo fifo && mkdir dir")
        .await;

    assert_eq!(files.read_ok("good").await, b"inside\n");
    let started = Instant::now();
    for (path, status, code) in [
        ("/dev/null", 409, "not_a_file"),
        ("zero", 409, "not_a_file"),
        ("fifo", 409, "not_a_file"),
        ("etc", 409, "is_directory"),
        ("dir", 409, "is_directory"),
        ("missing.txt", 404, "not_found"),
    ] {
        let (got, body) = files.read(path).await;
        assert_eq!((got, error_code(&body).as_str()), (status, code), "{path}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "a read blocked"
    );
    let (_, body) = files.read("missing.txt").await;
    let missing: Value = serde_json::from_slice(&body).unwrap();
    assert!(missing["error"]["message"]
        .as_str()
        .unwrap()
        .contains("missing.txt"));

    // A pseudo-file reports no size and is read for what it holds.
    let status = String::from_utf8(files.read_ok("/proc/self/status").await).unwrap();
    assert!(status.starts_with("Name:"), "{status}");

    // Writes refuse directories and special files, and go through a symlink to its file.
    let (status, refused) = files.write("dir", "x").await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (409, &Value::from("is_directory"))
    );
    let (status, refused) = files.write("fifo", "x").await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (409, &Value::from("not_a_file"))
    );
    let (status, refused) = files.write("/dev/null", "x").await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (409, &Value::from("not_a_file"))
    );
    let (status, _) = files.write("good", "replaced\n").await;
    assert_eq!(status, 200);
    assert_eq!(files.read_ok("a.txt").await, b"replaced\n");
    assert_eq!(files.sh("readlink good").await, "a.txt\n");
}

#[tokio::test]
async fn malformed_paths_and_queries_are_refused() {
    let service = TestService::start(&base_config(2, ""));
    let files = Files::open(&service, "sh").await;
    let session = format!("/v1/sessions/{}", files.id);

    for (route, method) in [
        ("files?path=a%00b", "GET"),
        ("files/content?path=a%00b", "GET"),
        ("files/content?path=a%00b", "PUT"),
        ("files?path=a%00b", "DELETE"),
        ("files/content", "GET"),
        ("files/content?path=", "GET"),
        ("files", "DELETE"),
    ] {
        let url = service.url(&format!("{session}/{route}"));
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let response = service
            .client
            .request(method.clone(), url)
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &Value::from("invalid_path")),
            "{method} {route}"
        );
    }
    for route in ["files?path=x&recursive=yes", "files?path=x&recursve=true"] {
        let response = service
            .delete(&format!("{session}/{route}"))
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &Value::from("invalid_request")),
            "{route}"
        );
    }
    let response = service
        .get("/v1/sessions/nosuchsession/files?path=x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    // Nothing reached the sandbox.
    assert!(files.names(".").await.is_empty());
}

#[tokio::test]
async fn uploads_over_the_cap_are_refused_and_leave_nothing() {
    let service = TestService::start(&base_config(2, "max_upload_bytes = \"1m\""));
    let files = Files::open(&service, "sh").await;
    let route = files.route("files/content", "up/deeper/big.bin");

    // Declared too large: refused from the header, before the agent hears of it.
    let (status, refused) =
        raw_put(&service, &route, "Content-Length: 2097152\r\n", Vec::new()).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (413, &Value::from("payload_too_large")),
        "{refused}"
    );

    // Streamed with no length: refused at the byte that crosses the cap. (One byte over, so
    // that the service reads the whole body and its answer is not lost to a reset.)
    let mut chunks: Vec<Vec<u8>> = (0..64).map(|_| random_bytes(16 << 10)).collect();
    chunks.push(b"!".to_vec());
    let (status, refused) =
        raw_put(&service, &route, "Transfer-Encoding: chunked\r\n", chunks).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (413, &Value::from("payload_too_large")),
        "{refused}"
    );
    assert!(
        files.names(".").await.is_empty(),
        "something was left behind"
    );
    assert_eq!(files.sh("ls -A /workspace").await, "");

    // Exactly the cap is allowed.
    let (status, written) = files.write("up/exact.bin", random_bytes(1 << 20)).await;
    assert_eq!(status, 200, "{written}");
    assert_eq!(files.names("up").await, ["exact.bin"]);
}

#[tokio::test]
async fn activity_names_file_operations_never_their_contents() {
    let service = TestService::start(&base_config(2, ""));
    let files = Files::open(&service, "sh").await;
    let secret = format!("TOPSECRET-{:x}", rand::rng().random::<u64>());

    let (status, _) = files.write("secret.txt", secret.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(files.read_ok("secret.txt").await, secret.as_bytes());
    assert_eq!(files.read("absent.txt").await.0, 404);
    assert_eq!(files.list(".").await.0, 200);
    assert_eq!(files.delete("secret.txt", false).await.0, 200);

    let activity = files.activity().await;
    let entries = activity["entries"].as_array().unwrap();
    let recent: Vec<(&str, &str, &str)> = entries
        .iter()
        .take(5)
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["target"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        recent,
        [
            ("delete_file", "/workspace/secret.txt", "ok"),
            ("list_files", "/workspace", "ok"),
            ("read_file", "/workspace/absent.txt", "error"),
            ("read_file", "/workspace/secret.txt", "ok"),
            ("write_file", "/workspace/secret.txt", "ok"),
        ]
    );
    assert_eq!(entries[3]["bytes"], secret.len());
    assert_eq!(entries[4]["bytes"], secret.len());
    let text = activity.to_string();
    assert!(
        !text.contains(&secret),
        "the activity log holds file contents: {text}"
    );
}

/// `sh` has `tmpfs_size = "16m"`; `roomy` is the same image with 64m.
fn sparse_config() -> String {
    let roomy = format!(
        "max_upload_bytes = \"32m\"\n[runtimes.roomy]\nimage = \"{}\"\ntmpfs_size = \"64m\"",
        common::busybox_image()
    );
    base_config(2, &roomy)
}

#[tokio::test]
async fn sparse_and_oversized_files_are_refused_at_once_and_others_served() {
    let service = TestService::start(&sparse_config());
    let files = Files::open(&service, "sh").await;
    files
        .sh("truncate -s 50G big && truncate -s 20M holes && truncate -s 8M small && head -c 1000000 /dev/urandom > dense")
        .await;
    // gVisor reports a sparse file's blocks as if written: only its size can refuse it there.
    let refused: &[(&str, &str)] = if common::on_gvisor() {
        &[("big", "is 53687091200 bytes")]
    } else {
        &[
            ("big", "is 53687091200 bytes (it is sparse"),
            ("holes", "more than 16777216 bytes of holes"),
        ]
    };
    for &(path, expected) in refused {
        let started = Instant::now();
        let (status, body) = files.read(path).await;
        let text = String::from_utf8_lossy(&body);
        assert_eq!(
            (status, error_code(&body)),
            (413, "payload_too_large".into()),
            "{text}"
        );
        assert!(
            text.contains(expected) && text.contains("tmpfs_size"),
            "{text}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{path}: {:?}",
            started.elapsed()
        );
    }
    assert!(String::from_utf8_lossy(&files.read("big").await.1).contains("limit of 33554432"));
    assert_eq!(files.read_ok("dense").await.len(), 1_000_000);
    let small = files.read_ok("small").await;
    assert!(small.len() == 8 << 20 && small.iter().all(|&b| b == 0));
}

#[tokio::test]
async fn cp_writes_a_sparse_file_sparse_on_the_host() {
    use std::os::unix::fs::MetadataExt;
    let service = TestService::start(&sparse_config());
    let files = Files::open(&service, "roomy").await;
    files
        .sh("truncate -s 20M sparse && echo tail >> sparse")
        .await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("copy");
    let output = std::process::Command::new(common::sandboxd_bin())
        .args(["cp", &format!("{}:sparse", files.id)])
        .arg(&target)
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let meta = std::fs::metadata(&target).unwrap();
    let size = (20 << 20) + 5;
    assert_eq!(meta.len(), size);
    assert!(
        meta.blocks() * 512 < 1 << 20,
        "{} bytes allocated",
        meta.blocks() * 512
    );
    let copy = std::fs::read(&target).unwrap();
    assert!(copy[..20 << 20].iter().all(|&b| b == 0));
    assert_eq!(&copy[20 << 20..], b"tail\n");
}
