//! Escapes through files, devices and the kernel's interfaces.

use crate::common::{
    agent_path, base_config, docker_only, on_gvisor, on_kubernetes, TestService, TOKEN,
};
use crate::harness::{bounded, report, Host, OUTPUT_CAP};
use crate::sandbox_helpers::{answers_within, download, encoded, error_code, stdout, upload};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

#[tokio::test]
async fn paths_never_resolve_on_the_host() {
    let attack = "path escapes through the files API (.., absolute, symlinks to /, NUL)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        // A file only the host has, and the service's own config (it holds the token).
        let secret = format!("host-only-{}-{:?}", std::process::id(), Instant::now());
        let marker = tempfile::Builder::new()
            .prefix("sandboxd-adversarial-marker")
            .tempfile_in("/tmp")
            .unwrap();
        std::fs::write(marker.path(), &secret).unwrap();
        let marker_path = marker.path().to_str().unwrap().to_string();
        let config_path = service
            .state_dir
            .path()
            .join("config.toml")
            .to_str()
            .unwrap()
            .to_string();
        service
            .sh(
                &id,
                "ln -s / /workspace/root && ln -s /proc/1/root /workspace/initroot && ln -s .. /workspace/up",
            )
            .await;
        let relative_up = format!("../../../../../../..{marker_path}");
        let mut tries = vec![
            marker_path.clone(),
            relative_up.clone(),
            format!("/workspace/../../../..{marker_path}"),
            format!("root{marker_path}"),
            format!("root/../../..{marker_path}"),
            format!("initroot{marker_path}"),
            format!("up/up/up{marker_path}"),
            format!("/proc/self/root{marker_path}"),
            format!("/proc/1/cwd/../../..{marker_path}"),
            format!("/.sandboxd/../../../..{marker_path}"),
            config_path.clone(),
            format!("root{config_path}"),
            "/var/lib/sandboxd/token".to_string(),
        ];
        tries.dedup();
        let mut statuses = Vec::new();
        for path in &tries {
            let (status, body) = download(&service, &id, path).await;
            assert!(
                !String::from_utf8_lossy(&body).contains(&secret)
                    && !String::from_utf8_lossy(&body).contains(TOKEN),
                "{path} read a host file"
            );
            assert_ne!(status, 200, "{path} was readable: {}", String::from_utf8_lossy(&body));
            statuses.push(status);
        }
        // Writes through the same paths land inside the sandbox, never on the host.
        let escape_name = format!(
            "/tmp/sandboxd-adversarial-escape-{}",
            std::process::id()
        );
        let mut writes = Vec::new();
        for path in [
            escape_name.clone(),
            format!("../../../..{escape_name}"),
            format!("root{escape_name}"),
            format!("up/up{escape_name}"),
        ] {
            let (status, _) = upload(&service, &id, &path, "escaped?").await;
            writes.push(status);
        }
        assert!(
            !Path::new(&escape_name).exists(),
            "a write reached the host's {escape_name}"
        );
        let inside = service.sh(&id, &format!("cat {escape_name}")).await;
        assert_eq!(stdout(&inside), "escaped?", "the writes landed in the sandbox's /tmp");
        // NUL and other malformed paths are refused before the agent sees them.
        let nul = service
            .get(&format!("/v1/sessions/{id}/files/content?path=a%00{}", encoded(&marker_path)))
            .send()
            .await
            .unwrap();
        let nul_status = nul.status().as_u16();
        assert_eq!(nul_status, 400);
        assert_eq!(error_code(&nul.bytes().await.unwrap()), "invalid_path");
        // Listing / shows the sandbox's root, not the host's.
        let root = service.get_json(&format!("/v1/sessions/{id}/files?path=/")).await;
        let names: Vec<&str> = root["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        let agent_entry = agent_path()[1..].split('/').next().unwrap();
        assert!(names.contains(&"workspace") && names.contains(&agent_entry), "{names:?}");
        assert!(!names.contains(&"work"), "the host's root was listed: {names:?}");
        format!(
            "{} read attempts (marker, service config, token) -> {:?}, never the host's bytes; 4 writes -> {:?}, all inside the sandbox's /tmp; NUL -> {nul_status} invalid_path; / lists the sandbox's root",
            tries.len(),
            statuses,
            writes
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn uploads_carry_no_privilege_and_devices_cannot_be_made() {
    let attack = "setuid and device files (uploads, chmod u+s, mknod, setuid-root binaries)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("python").await;
        let (status, body) = upload(&service, &id, "up.bin", vec![0x7fu8; 4096]).await;
        assert_eq!(status, 200, "{body}");
        let stat = service.sh(&id, "stat -c '%a %u %g %F' up.bin").await;
        assert_eq!(stdout(&stat), "644 61000 61000 regular file\n");
        // The sandbox may set the bits on its own file; replacing it by upload clears them.
        let chmod = service.sh(&id, "chmod 6755 up.bin && stat -c %a up.bin").await;
        let (status, _) = upload(&service, &id, "up.bin", vec![1u8; 16]).await;
        assert_eq!(status, 200);
        let restat = service.sh(&id, "stat -c '%a %u' up.bin").await;
        assert_eq!(stdout(&restat), "644 61000\n", "an upload resets the mode");
        let chown = service.sh(&id, "chown 0:0 up.bin").await;
        assert_ne!(chown["exit_code"], 0, "the sandbox cannot give a file to root");

        let mknod = service
            .sh(
                &id,
                "mknod /tmp/mem c 1 1; echo tmp=$?; mknod /workspace/sda b 8 0; echo ws=$?; mknod /dev/shm/null c 1 3; echo shm=$?",
            )
            .await;
        assert_eq!(stdout(&mknod), "tmp=1\nws=1\nshm=1\n", "{mknod}");
        // Reading a device through the files API never streams it endlessly.
        let (zero_status, zero) = download(&service, &id, "/dev/zero").await;
        assert!(
            zero_status != 200 || zero.len() <= OUTPUT_CAP,
            "/dev/zero streamed {} bytes",
            zero.len()
        );

        // The image's setuid-root programs run without privilege (no-new-privileges).
        let setuid = service
            .sh(
                &id,
                "ls -l /usr/bin/mount | cut -c1-10; mkdir -p /tmp/m; /usr/bin/mount -t tmpfs none /tmp/m; echo mount=$?; cp /usr/bin/su /tmp/su && stat -c '%a %u' /tmp/su; grep NoNewPrivs /proc/self/status",
            )
            .await;
        let out = stdout(&setuid);
        assert!(out.starts_with("-rwsr-xr-x"), "the image has a setuid-root mount: {setuid}");
        assert!(out.contains("mount=32") || out.contains("mount=1"), "{setuid}");
        assert!(
            setuid["stderr"].as_str().unwrap().contains("must be superuser"),
            "mount ran without root's uid: {setuid}"
        );
        assert!(out.contains("755 61000"), "a copy is the sandbox's, without setuid: {setuid}");
        assert!(out.contains("NoNewPrivs:\t1"), "{setuid}");
        format!(
            "upload -> 0644 uid 61000 (after chmod {}: upload again -> 0644); chown to root refused; mknod refused in /tmp, /workspace, /dev/shm; GET /dev/zero -> {zero_status} ({} bytes); setuid-root mount runs as uid 61000 ('must be superuser'), copied su is 0755 uid 61000",
            stdout(&chmod).trim(),
            zero.len()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn host_proc_sys_and_kernel_files_are_out_of_reach() {
    let attack = "host /proc, /sys and kernel files";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let probe = service
            .sh(
                &id,
                r#"
for f in /proc/kcore /proc/sysrq-trigger /proc/keys /proc/timer_list /proc/sched_debug; do
  if [ -e $f ]; then echo "$f exists, reads $(head -c 64 $f 2>/dev/null | wc -c) bytes"; else echo "$f absent"; fi
done
echo b > /proc/sysrq-trigger 2>/dev/null && echo "sysrq WRITTEN" || echo "sysrq write refused"
echo 1 > /sys/kernel/profiling 2>/dev/null && echo "sys WRITTEN" || echo "sys write refused"
echo x > /proc/sys/kernel/hostname 2>/dev/null && echo "proc sys WRITTEN" || echo "proc sys write refused"
echo 1 > /sys/fs/cgroup/pids/pids.max 2>/dev/null && echo "cgroup WRITTEN" || echo "cgroup write refused"
dmesg >/dev/null 2>&1 && echo "dmesg READ" || echo "dmesg refused"
echo "dmesg-log: $(dmesg 2>/dev/null | tr '\n' ' ' | head -c 2000)"
echo "kernel: $(cat /proc/version)"
echo "init: $(tr '\0' ' ' < /proc/1/cmdline)"
echo "pids: $(ls /proc | grep -c '^[0-9]*$')"
echo "comms: $(cat /proc/[0-9]*/comm 2>/dev/null | sort -u | tr '\n' ' ')"
cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline > /tmp/environs 2>/dev/null
echo "host-paths: $(grep -c /var/lib/docker /proc/self/mountinfo) mountinfo lines name /var/lib/docker"
"#,
            )
            .await;
        let out = stdout(&probe).to_string();
        // No process in the sandbox carries the service's token in its environment or
        // arguments (read back through the files API, so the search itself is not in them).
        let (status, environs) = download(&service, &id, "/tmp/environs").await;
        assert_eq!(status, 200);
        let environs = String::from_utf8_lossy(&environs);
        assert!(
            !environs.contains(TOKEN) && !environs.contains("SANDBOXD_"),
            "a sandbox process knows the token or the service's variables"
        );
        for refused in [
            "sysrq write refused",
            "sys write refused",
            "proc sys write refused",
            "cgroup write refused",
        ] {
            assert!(out.contains(refused), "expected `{refused}`: {out}");
        }
        if on_gvisor() {
            // dmesg reads gVisor's kernel's own log, which holds nothing of the host's.
            let log = out.lines().find_map(|l| l.strip_prefix("dmesg-log: ")).unwrap();
            assert!(log.contains("Starting gVisor"), "gVisor's log: {out}");
            let host_kernel = std::fs::read_to_string("/proc/version").unwrap();
            let host_release = host_kernel.split_whitespace().nth(2).unwrap();
            assert!(
                !log.contains(host_release) && !log.contains("Linux version"),
                "the sandbox reads the host kernel's log: {log}"
            );
        } else {
            assert!(out.contains("dmesg refused"), "expected `dmesg refused`: {out}");
        }
        for line in out.lines().filter(|l| l.contains(" exists, reads ")) {
            assert!(
                line.ends_with("reads 0 bytes"),
                "a masked kernel file gives content: {line}"
            );
        }
        // PID 1 is the agent itself (its own init), no engine init beside it.
        let init = if on_kubernetes() {
            format!("init: {}", agent_path())
        } else {
            "init: /.sandboxd-agent --connect".to_string()
        };
        assert!(out.contains(&init), "{out}");
        let pids: usize = out
            .lines()
            .find_map(|l| l.strip_prefix("pids: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(pids < 12, "the sandbox sees {pids} processes");
        let comms = out.lines().find_map(|l| l.strip_prefix("comms: ")).unwrap();
        for host_process in ["dockerd", "containerd", "sandboxd ", "cargo", "rustc", "systemd"] {
            assert!(
                !comms.split(' ').any(|c| c == host_process.trim()),
                "the sandbox sees the host's {host_process}: {comms}"
            );
        }
        let host_processes = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_str().unwrap().parse::<u32>().is_ok())
            .count();
        let summary: Vec<&str> = out
            .lines()
            .filter(|l| !l.starts_with("comms") && !l.starts_with("init"))
            .filter(|l| !l.starts_with("dmesg-log"))
            .collect();
        format!(
            "{}; no process holds the token; sees {pids} processes (its own: {}) against {host_processes} on the host",
            summary.join("; "),
            comms.trim()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn no_network_egress_with_network_none() {
    let attack = "network egress with network none";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let port = service.url.rsplit(':').next().unwrap().to_string();
        // Only attempts that fail inside the sandbox's own network namespace: its loopback,
        // and addresses it has no route to.
        let probe = service
            .sh(
                &id,
                &format!(
                    r#"
echo "links: $(ip -o link | awk -F': ' '{{print $2}}' | tr '\n' ' ')"
echo "routes: $(ip route | wc -l)"
echo "default routes: $(ip route | grep -c ^default)"
for target in "127.0.0.1 {port}" "10.0.0.1 80" "172.17.0.1 2375" "169.254.169.254 80"; do
  set -- $target
  r=$(nc -w 2 $1 $2 </dev/null 2>&1); echo "$1:$2 rc=$? $r"
done
ls /var/run/docker.sock /run/docker.sock 2>&1 | grep -c 'No such file'
"#
                ),
            )
            .await;
        let out = stdout(&probe).to_string();
        if docker_only(
            "only a loopback link",
            "a pod's network namespace keeps the eth0 its CNI plugin made, taken down before the sandbox starts",
        ) {
            assert!(out.contains("links: lo \n"), "only loopback: {out}");
        }
        assert!(out.contains("routes: 0\n"), "{out}");
        assert!(out.contains("default routes: 0"), "{out}");
        for line in out.lines().filter(|l| l.contains(" rc=")) {
            assert!(!line.contains(" rc=0"), "a connection worked: {line}");
            assert!(
                line.contains("Network is unreachable") || line.contains("Connection refused"),
                "failed locally: {line}"
            );
        }
        assert!(
            out.trim_end().ends_with('2'),
            "no engine socket inside: {out}"
        );
        let attempts: Vec<String> = out
            .lines()
            .filter(|l| l.contains(" rc="))
            .map(|l| {
                let (target, rest) = l.split_once(' ').unwrap();
                let why = if rest.contains("unreachable") {
                    "unreachable"
                } else {
                    "refused"
                };
                format!("{target} {why}")
            })
            .collect();
        let links = if on_kubernetes() {
            "no default route"
        } else {
            "interfaces: lo only, no route"
        };
        format!(
            "{links}; {}; no Docker socket inside",
            attempts.join(", ")
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn privilege_escalation_attempts_fail() {
    let attack = "privilege escalation (su, unshare, mount, nsenter, dangerous syscalls, ptrace)";
    let host = Host::before();
    let service = TestService::start(&base_config(3, ""));
    let outcome = bounded(60, attack, async {
        let sh = service.open("sh").await;
        let tools = service
            .sh(
                &sh,
                r#"
su -c id root </dev/null >/dev/null 2>&1; echo "su=$?"
unshare -U true 2>/dev/null; echo "unshare-U=$?"
unshare -m true 2>/dev/null; echo "unshare-m=$?"
unshare -r true 2>/dev/null; echo "unshare-r=$?"
unshare -n true 2>/dev/null; echo "unshare-n=$?"
mkdir -p /tmp/m; mount -t tmpfs none /tmp/m 2>/dev/null; echo "mount=$?"
nsenter -t 1 -m true 2>/dev/null; echo "nsenter=$?"
chroot / true 2>/dev/null; echo "chroot=$?"
echo "in-new-userns: $(unshare -r cat /proc/version 2>&1)"
grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\t' ' '
"#,
            )
            .await;
        let out = stdout(&tools).to_string();
        // On gVisor a user namespace is one of its kernel's (its root is root of nothing on
        // the host): allowed there, and what runs in it still sees gVisor's kernel.
        let own_namespaces: &[&str] = if on_gvisor() {
            assert!(
                out.lines().any(|l| l.starts_with("in-new-userns: ") && l.contains("gvisor")),
                "a new user namespace on gVisor is gVisor's: {out}"
            );
            &["unshare-U", "unshare-r"]
        } else {
            &[]
        };
        for tool in [
            "su", "unshare-U", "unshare-m", "unshare-r", "unshare-n", "mount", "nsenter", "chroot",
        ] {
            assert!(
                own_namespaces.contains(&tool) || !out.contains(&format!("{tool}=0")),
                "{tool} worked: {out}"
            );
        }
        for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert!(
                out.contains(&format!("{cap}: 0000000000000000")),
                "{cap}: {out}"
            );
        }
        assert!(out.contains("NoNewPrivs: 1") && out.contains("Seccomp: 2"), "{out}");

        // Syscalls that have led out of containers before, through python's ctypes.
        let python = service.open("python").await;
        let probe = &r#"
import ctypes, glob, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(256)
a = ctypes.addressof(buf)
calls = {
    "bpf": (321, 0, a, 128), "perf_event_open": (298, a, 0, -1, -1, 0),
    "keyctl": (250, 0, 0, 0, 0, 0), "add_key": (248, 0, 0, 0, 0, 0),
    "userfaultfd": (323, 0), "unshare(CLONE_NEWUSER)": (272, 0x10000000),
    "unshare(CLONE_NEWNS)": (272, 0x20000), "mount": (165, 0, 0, 0, 0, 0),
    "pivot_root": (155, 0, 0), "open_by_handle_at": (304, 0, a, 0),
    "kexec_load": (246, 0, 0, 0, 0), "init_module": (175, 0, 0, 0),
    "setns": (308, 0, 0), "iopl": (172, 3), "syslog": (103, 3, a, 10),
    "io_uring_setup": (425, 1, a),
}
for name, args in calls.items():
    ctypes.set_errno(0)
    r = libc.syscall(*[ctypes.c_long(x) for x in args])
    print(f"{name}={'ok' if r >= 0 else os.strerror(ctypes.get_errno())}")
# ptrace of the agent: same uid, but the agent is non-dumpable, so the kernel refuses.
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
agent = next(int(p[6:]) for p in glob.glob('/proc/[0-9]*')
             if open(p + '/cmdline', 'rb').read().startswith(b'AGENT_PATH'))
ctypes.set_errno(0)
r = libc.ptrace(16, agent, None, None)
print(f"ptrace-agent={'attached' if r == 0 else os.strerror(ctypes.get_errno())}")
if r == 0:
    os.waitpid(agent, 0x40000000)
    libc.ptrace(17, agent, None, None)
status = open(f'/proc/{agent}/status').read()
print("agent-uid=" + next(l.split()[1] for l in status.splitlines() if l.startswith('Uid:')))
print("agent-capeff=" + next(l.split()[1] for l in status.splitlines() if l.startswith('CapEff:')))
"#
        .replace("AGENT_PATH", agent_path());
        let (status, result) = service
            .exec(&python, json!({"argv": ["python3", "-c", probe], "timeout_secs": 30}))
            .await;
        assert_eq!(status, 200, "{result}");
        let syscalls = stdout(&result).to_string();
        let mut allowed = Vec::new();
        for line in syscalls.lines() {
            let (name, verdict) = line.split_once('=').unwrap();
            match name {
                // Observed, not a boundary: see the report.
                // The agent's own seccomp filter: ENOSYS, as on a kernel without io_uring.
                "io_uring_setup" => assert_eq!(verdict, "Function not implemented", "{line}"),
                // The agent makes itself non-dumpable, so same-uid processes cannot trace it.
                "ptrace-agent" => assert_eq!(verdict, "Operation not permitted", "{line}"),
                "agent-uid" | "agent-capeff" => {
                    allowed.push(format!("{name}: {verdict}"))
                }
                // gVisor's kernel answers these itself: namespaces of its own (the user
                // namespace made first lets the rest be asked in it), its own log; the rest
                // it refuses or does not implement, never reaching the host.
                "unshare(CLONE_NEWUSER)" | "unshare(CLONE_NEWNS)" | "mount" | "pivot_root"
                | "setns" | "syslog"
                    if on_gvisor() && verdict == "ok" =>
                {
                    allowed.push(format!("{name}: gVisor's own"))
                }
                _ if on_gvisor() => assert_ne!(verdict, "ok", "{line}"),
                _ => assert_eq!(verdict, "Operation not permitted", "{line}"),
            }
        }
        // On gVisor the probe is by then in the user namespace it made, where the agent's uid
        // has no mapping and shows as the overflow uid: still not root.
        let agent_uid = if on_gvisor() { "65534" } else { "61000" };
        assert!(
            syscalls.contains(&format!("agent-uid={agent_uid}")),
            "{syscalls}"
        );
        assert!(syscalls.contains("agent-capeff=0000000000000000"), "{syscalls}");
        // Whatever ptrace did, it touched only this session: it and the other one answer.
        assert!(answers_within(&service, &python, Duration::from_secs(10)).await.is_some());
        assert!(answers_within(&service, &sh, Duration::from_secs(10)).await.is_some());
        let refused = syscalls
            .lines()
            .filter(|l| l.ends_with("Operation not permitted"))
            .count();
        format!(
            "su, unshare -U/-m/-r/-n, mount, nsenter, chroot all fail; no capabilities, NoNewPrivs 1, seccomp filter on; {refused} dangerous syscalls EPERM (bpf, perf_event_open, keyctl, userfaultfd, unshare, mount, pivot_root, open_by_handle_at, kexec_load, init_module, setns, iopl, syslog); io_uring_setup ENOSYS (the agent's filter); ptrace of the agent EPERM (it is non-dumpable); observed: {} (the agent has uid 61000 and no capabilities: nothing to gain)",
            allowed.join(", ")
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}
