//! What the Docker engine says about itself at start, checked against what the sandbox
//! profile relies on: the engine and API versions, the runc version against upstream's fixes
//! for known container escapes, user namespaces, seccomp, AppArmor and SELinux, the cgroup
//! version and driver.
//!
//! Distributions backport security fixes without changing the version (Debian's runc
//! `1.1.5+ds1-1+deb12u1` carries fixes made upstream in later releases), so an old version
//! is reported as "older than upstream's fix; check your distribution's advisories", never as
//! "vulnerable": this code cannot tell.

use bollard::models::{SystemInfo, SystemVersion};
use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

/// A container escape fixed in runc, and the first upstream release of each branch with the fix.
struct KnownFix {
    cve: &'static str,
    what: &'static str,
    fixed_in: &'static [&'static str],
}

/// Container escapes fixed in runc, oldest first. For CVE-2019-5736, Docker 18.09.2 shipped a
/// patched runc 1.0.0-rc6 build; the first upstream release with the fix is 1.0.0-rc7.
const RUNC_FIXES: &[KnownFix] = &[
    KnownFix {
        cve: "CVE-2019-5736",
        what: "a container could overwrite the host's runc binary through /proc/self/exe",
        fixed_in: &["1.0.0-rc7"],
    },
    KnownFix {
        cve: "CVE-2019-19921",
        what: "a mount race with a symlinked /proc let a container disable AppArmor",
        fixed_in: &["1.0.0-rc10"],
    },
    KnownFix {
        cve: "CVE-2021-30465",
        what: "a symlink-exchange race in mount destinations could mount host paths",
        fixed_in: &["1.0.0-rc95"],
    },
    KnownFix {
        cve: "CVE-2024-21626",
        what: "a leaked host file descriptor as working directory gave access to the host's filesystem",
        fixed_in: &["1.1.12"],
    },
    KnownFix {
        cve: "CVE-2025-31133",
        what: "a replaced /dev/null let masked paths be bind-mounted writable",
        fixed_in: &["1.2.8", "1.3.3", "1.4.0-rc.3"],
    },
    KnownFix {
        cve: "CVE-2025-52565",
        what: "a /dev/console bind-mount race could expose writable procfs files",
        fixed_in: &["1.2.8", "1.3.3", "1.4.0-rc.3"],
    },
    KnownFix {
        cve: "CVE-2025-52881",
        what: "redirected procfs writes could bypass LSM labels and write host procfs files",
        fixed_in: &["1.2.8", "1.3.3", "1.4.0-rc.3"],
    },
];

/// What the engine reported at connection, and what that means for the sandboxes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineReport {
    /// e.g. `20.10.24+dfsg1`.
    pub engine_version: Option<String>,
    /// The newest Engine API the engine speaks, e.g. `1.41`.
    pub api_version: Option<String>,
    /// The Engine API version this service negotiated and uses.
    pub negotiated_api_version: String,
    pub operating_system: Option<String>,
    pub kernel_version: Option<String>,
    /// The runc version, from the engine's version components (else its runc commit).
    pub runc_version: Option<String>,
    /// The runc commit or package version the engine reports, e.g. `1.1.5+ds1-1+deb12u1`.
    pub runc_commit: Option<String>,
    /// The OCI runtime containers use by default, and every runtime the engine knows
    /// (`runsc` means gVisor is available).
    pub default_runtime: Option<String>,
    pub runtimes: Vec<String>,
    /// `1` or `2`.
    pub cgroup_version: Option<String>,
    /// `cgroupfs` or `systemd`.
    pub cgroup_driver: Option<String>,
    pub user_namespaces: bool,
    /// The seccomp profile in force (`default` or a path), absent when seccomp is off.
    pub seccomp_profile: Option<String>,
    pub apparmor: bool,
    pub selinux: bool,
    pub rootless: bool,
    /// The runc version against each known container escape.
    pub runc_checks: Vec<CveCheck>,
    /// What an operator should know, most important first.
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CveCheck {
    pub cve: String,
    pub summary: String,
    /// The first upstream release of each branch with the fix.
    pub fixed_in: Vec<String>,
    pub status: FixStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FixStatus {
    /// The version is at or after upstream's fix.
    AtOrAfterFix,
    /// The version is older than upstream's fix; a distribution may have backported it.
    OlderThanFix,
    /// The runc version is unknown or unreadable.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub level: Level,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
}

impl EngineReport {
    /// Reads the engine's `info` and `version` answers.
    pub fn new(
        info: &SystemInfo,
        version: Option<&SystemVersion>,
        negotiated_api_version: String,
    ) -> EngineReport {
        let component = |name: &str| {
            version
                .and_then(|v| v.components.as_ref())
                .and_then(|components| {
                    components
                        .iter()
                        .find(|c| c.name.eq_ignore_ascii_case(name))
                })
                .map(|c| c.version.clone())
                .filter(|v| !v.is_empty())
        };
        let runc_commit = info
            .runc_commit
            .as_ref()
            .and_then(|c| c.id.clone())
            .filter(|id| !id.is_empty());
        let runc_version = component("runc").or_else(|| {
            runc_commit
                .as_ref()
                .filter(|id| Version::parse(id).is_some())
                .cloned()
        });
        let options: Vec<SecurityOption> = info
            .security_options
            .iter()
            .flatten()
            .map(|o| SecurityOption::parse(o))
            .collect();
        let option = |name: &str| options.iter().find(|o| o.name == name);
        let mut runtimes: Vec<String> = info
            .runtimes
            .as_ref()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default();
        runtimes.sort();
        let engine_version = version
            .and_then(|v| v.version.clone())
            .or_else(|| info.server_version.clone());
        let mut report = EngineReport {
            api_version: version.and_then(|v| v.api_version.clone()),
            negotiated_api_version,
            operating_system: info.operating_system.clone(),
            kernel_version: info.kernel_version.clone(),
            runc_checks: runc_checks(runc_version.as_deref()),
            runc_version,
            runc_commit,
            default_runtime: info.default_runtime.clone(),
            runtimes,
            cgroup_version: info
                .cgroup_version
                .map(|v| v.to_string())
                .filter(|v| !v.is_empty()),
            cgroup_driver: info
                .cgroup_driver
                .map(|d| d.to_string())
                .filter(|d| !d.is_empty()),
            user_namespaces: option("userns").is_some(),
            seccomp_profile: option("seccomp")
                .map(|o| o.value("profile").unwrap_or("default").to_string()),
            apparmor: option("apparmor").is_some(),
            selinux: option("selinux").is_some(),
            rootless: option("rootless").is_some(),
            engine_version,
            findings: Vec::new(),
        };
        report.findings = report.assess();
        report
    }

    fn assess(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        let warn = |message: String| Finding {
            level: Level::Warning,
            message,
        };
        let info = |message: String| Finding {
            level: Level::Info,
            message,
        };
        match &self.runc_version {
            None => findings.push(warn(
                "the engine does not say which runc it runs; check that runc is patched against CVE-2024-21626 (fixed upstream in 1.1.12) and CVE-2025-31133/52565/52881 (1.2.8, 1.3.3, 1.4.0-rc.3)".into(),
            )),
            Some(version) => {
                let older: Vec<String> = self
                    .runc_checks
                    .iter()
                    .filter(|c| c.status == FixStatus::OlderThanFix)
                    .map(|c| format!("{} ({})", c.cve, c.fixed_in.join(" / ")))
                    .collect();
                if !older.is_empty() {
                    let package = self
                        .runc_commit
                        .as_ref()
                        .filter(|commit| *commit != version)
                        .map(|commit| format!(", package {commit}"))
                        .unwrap_or_default();
                    findings.push(warn(format!(
                        "runc {version}{package} is older than upstream's fix for {}; distributions backport fixes without changing the version: check your distribution's advisories for these CVEs",
                        older.join(", ")
                    )));
                }
            }
        }
        if let Some(engine) = self.engine_version.as_deref().and_then(Version::parse) {
            if engine < Version::parse("18.09.2").expect("a valid version") {
                findings.push(warn(format!(
                    "Docker {} is older than 18.09.2, the first release that shipped runc patched for CVE-2019-5736; check your distribution's advisories",
                    self.engine_version.as_deref().unwrap_or_default()
                )));
            }
        }
        match self.seccomp_profile.as_deref() {
            None => findings.push(warn(
                "seccomp is off in the engine: sandboxes can make every system call the kernel offers (mount, unshare, bpf, keyctl...); enable it in the engine (the default profile)".into(),
            )),
            Some("unconfined") => findings.push(warn(
                "the engine's seccomp profile is `unconfined`: sandboxes can make every system call the kernel offers; use the default profile".into(),
            )),
            Some(_) => {}
        }
        if self.rootless {
            findings.push(info(
                "the engine runs rootless: a container escape lands as the engine's unprivileged user, not root".into(),
            ));
        }
        if self.user_namespaces {
            findings.push(info(
                "user namespaces are on (userns-remap): uids in sandboxes map to an unprivileged range on the host".into(),
            ));
        } else {
            findings.push(info(
                "user namespaces are off: uid 61000 in a sandbox is uid 61000 on the host (a uid that owns nothing there); userns-remap in the engine would add a layer".into(),
            ));
        }
        if !self.apparmor && !self.selinux {
            findings.push(info(
                "neither AppArmor nor SELinux confines containers on this engine; the sandbox profile does not rely on them, but they add a layer against escapes".into(),
            ));
        }
        if self.runtimes.iter().any(|r| r == "runsc") {
            findings.push(info(
                "gVisor (runsc) is installed: it can put a user-space kernel between a runtime's sandboxes and the host".into(),
            ));
        }
        findings
    }

    /// One line for the log: what the engine is.
    pub fn summary(&self) -> String {
        let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        format!(
            "Docker engine {} (API {}, using {}), runc {}, cgroup v{} ({}), seccomp {}, user namespaces {}, AppArmor {}, SELinux {}",
            or_unknown(&self.engine_version),
            or_unknown(&self.api_version),
            self.negotiated_api_version,
            or_unknown(&self.runc_version),
            or_unknown(&self.cgroup_version),
            or_unknown(&self.cgroup_driver),
            self.seccomp_profile.as_deref().unwrap_or("off"),
            on_off(self.user_namespaces),
            on_off(self.apparmor),
            on_off(self.selinux),
        )
    }

    /// Logs the summary at info level, then each finding at its level.
    pub fn log(&self) {
        tracing::info!("{}", self.summary());
        for finding in &self.findings {
            match finding.level {
                Level::Warning => tracing::warn!("{}", finding.message),
                Level::Info => tracing::info!("{}", finding.message),
            }
        }
    }
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

fn runc_checks(runc_version: Option<&str>) -> Vec<CveCheck> {
    let version = runc_version.and_then(Version::parse);
    RUNC_FIXES
        .iter()
        .map(|fix| {
            let fixed_in: Vec<Version> = fix
                .fixed_in
                .iter()
                .map(|v| Version::parse(v).expect("a valid version"))
                .collect();
            CveCheck {
                cve: fix.cve.into(),
                summary: fix.what.into(),
                fixed_in: fix.fixed_in.iter().map(|v| v.to_string()).collect(),
                status: match &version {
                    None => FixStatus::Unknown,
                    Some(v) if has_fix(v, &fixed_in) => FixStatus::AtOrAfterFix,
                    Some(_) => FixStatus::OlderThanFix,
                },
            }
        })
        .collect()
}

/// Whether `version` is at or after the fix: the fix of its own branch (same major.minor)
/// when there is one, else whether it is newer than every fixed release (a later branch).
fn has_fix(version: &Version, fixed_in: &[Version]) -> bool {
    match fixed_in
        .iter()
        .find(|f| (f.major, f.minor) == (version.major, version.minor))
    {
        Some(fix) => version >= fix,
        None => fixed_in.iter().all(|fix| version > fix),
    }
}

/// One entry of the engine's `SecurityOptions`, e.g. `name=seccomp,profile=default`.
struct SecurityOption {
    name: String,
    values: Vec<(String, String)>,
}

impl SecurityOption {
    fn parse(text: &str) -> SecurityOption {
        let mut name = String::new();
        let mut values = Vec::new();
        for part in text.split(',') {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            if key == "name" {
                name = value.to_string();
            } else {
                values.push((key.to_string(), value.to_string()));
            }
        }
        // Engines before 1.13 said just `seccomp` or `apparmor`.
        if name.is_empty() {
            name = text.to_string();
        }
        SecurityOption { name, values }
    }

    fn value(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A release version as runc, Docker and distributions write it: `1.1.12`, `v1.1.12`,
/// `1.0.0-rc6`, `1.4.0-rc.3`, `1.1.5+ds1-1+deb12u1` (Debian: `+` starts the packaging part),
/// `1.0.0~rc6+dfsg1` (Debian's pre-release), `v1.1.12-0-g51d5e94` (`git describe`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// A pre-release such as `rc6` or `rc.3`: its letters and its number.
    pub pre: Option<(String, u64)>,
}

impl Version {
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        // Build metadata and distribution packaging start at `+`.
        let text = text.split('+').next()?;
        let (core, suffix) = match text.find(['-', '~']) {
            Some(at) => (&text[..at], Some(&text[at + 1..])),
            None => (text, None),
        };
        let mut numbers = core.split('.');
        let mut next = || -> Option<u64> {
            match numbers.next() {
                None => Some(0),
                Some(n) => n.parse().ok(),
            }
        };
        let (major, minor, patch) = (next()?, next()?, next()?);
        if numbers.next().is_some() {
            return None;
        }
        let pre = suffix.and_then(|suffix| {
            let letters: String = suffix
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect();
            // `1.1.12-0-g51d5e94` (git describe) and `1.1.12-1` (a package revision) are
            // the release itself.
            if letters.is_empty() {
                return None;
            }
            let rest = suffix[letters.len()..].trim_start_matches('.');
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((letters.to_ascii_lowercase(), digits.parse().unwrap_or(0)))
        });
        Some(Version {
            major,
            minor,
            patch,
            pre,
        })
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (&self.pre, &other.pre) {
                (None, None) => Ordering::Equal,
                // A release comes after its pre-releases.
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(b),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some((letters, number)) = &self.pre {
            write!(f, "-{letters}.{number}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::{
        Commit, SystemInfoCgroupDriverEnum, SystemInfoCgroupVersionEnum, SystemVersionComponents,
    };

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap_or_else(|| panic!("{text} parses"))
    }

    #[test]
    fn parses_the_ways_versions_are_written() {
        assert_eq!(v("1.1.12"), v("v1.1.12"));
        assert_eq!(v("1.1.5+ds1-1+deb12u1"), v("1.1.5"));
        assert_eq!(v("v1.1.12-0-g51d5e94"), v("1.1.12"));
        assert_eq!(v("1.1.12-1"), v("1.1.12"));
        assert_eq!(v("1.0.0-rc6").pre, Some(("rc".into(), 6)));
        assert_eq!(v("1.4.0-rc.3").pre, Some(("rc".into(), 3)));
        assert_eq!(v("1.0.0~rc6+dfsg1-3"), v("1.0.0-rc6"));
        assert_eq!(v("1.0.0-rc93-0-g12644e61"), v("1.0.0-rc93"));
        assert_eq!(v("20.10.24+dfsg1"), v("20.10.24"));
        assert_eq!(v("25.0"), v("25.0.0"));
        assert_eq!(v("1.4.0-rc.3").to_string(), "1.4.0-rc.3");
        for bad in ["", "runc", "1.x.2", "1.2.3.4", "+ds1"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn orders_pre_releases_before_their_release() {
        assert!(v("1.0.0-rc6") < v("1.0.0-rc7"));
        assert!(v("1.0.0-rc9") < v("1.0.0-rc10"), "numerically, not as text");
        assert!(v("1.0.0-rc95") < v("1.0.0"));
        assert!(v("1.4.0-rc.2") < v("1.4.0-rc.3"));
        assert!(v("1.4.0-beta.9") < v("1.4.0-rc.1"));
        assert!(v("1.1.5+ds1-1+deb12u1") < v("1.1.12"));
        assert!(v("1.1.12") < v("1.2.0"));
        assert!(v("18.09.1") < v("18.09.2"));
    }

    fn status_of(runc: &str, cve: &str) -> FixStatus {
        runc_checks(Some(runc))
            .into_iter()
            .find(|c| c.cve == cve)
            .unwrap()
            .status
    }

    #[test]
    fn compares_runc_with_each_branch_of_a_fix() {
        use FixStatus::*;
        // One fixed release: anything after it, in any later branch, has the fix.
        assert_eq!(status_of("1.0.0-rc6", "CVE-2019-5736"), OlderThanFix);
        assert_eq!(status_of("1.0.0-rc7", "CVE-2019-5736"), AtOrAfterFix);
        assert_eq!(status_of("1.0.0", "CVE-2019-5736"), AtOrAfterFix);
        assert_eq!(status_of("0.1.1", "CVE-2019-5736"), OlderThanFix);
        assert_eq!(status_of("1.1.5+ds1", "CVE-2024-21626"), OlderThanFix);
        assert_eq!(status_of("1.1.11", "CVE-2024-21626"), OlderThanFix);
        assert_eq!(
            status_of("v1.1.12-0-g51d5e94", "CVE-2024-21626"),
            AtOrAfterFix
        );
        assert_eq!(status_of("1.2.0", "CVE-2024-21626"), AtOrAfterFix);
        assert_eq!(status_of("1.0.3", "CVE-2024-21626"), OlderThanFix);
        // Fixed in three branches at once.
        for cve in ["CVE-2025-31133", "CVE-2025-52565", "CVE-2025-52881"] {
            assert_eq!(status_of("1.1.15", cve), OlderThanFix, "no fix in 1.1");
            assert_eq!(status_of("1.2.7", cve), OlderThanFix);
            assert_eq!(status_of("1.2.8", cve), AtOrAfterFix);
            assert_eq!(status_of("1.3.2", cve), OlderThanFix);
            assert_eq!(status_of("1.3.3", cve), AtOrAfterFix);
            assert_eq!(status_of("1.4.0-rc.2", cve), OlderThanFix);
            assert_eq!(status_of("1.4.0-rc.3", cve), AtOrAfterFix);
            assert_eq!(status_of("1.4.0", cve), AtOrAfterFix);
            assert_eq!(status_of("1.5.0", cve), AtOrAfterFix);
        }
        assert!(runc_checks(None)
            .iter()
            .all(|c| c.status == FixStatus::Unknown));
        assert_eq!(runc_checks(Some("1.1.5")).len(), RUNC_FIXES.len());
    }

    fn engine_like_this_one() -> (SystemInfo, SystemVersion) {
        let info = SystemInfo {
            server_version: Some("20.10.24+dfsg1".into()),
            runc_commit: Some(Commit {
                id: Some("1.1.5+ds1-1+deb12u1".into()),
            }),
            security_options: Some(vec!["name=seccomp,profile=default".into()]),
            cgroup_version: Some(SystemInfoCgroupVersionEnum::_1),
            cgroup_driver: Some(SystemInfoCgroupDriverEnum::CGROUPFS),
            default_runtime: Some("runc".into()),
            kernel_version: Some("6.1.0".into()),
            ..Default::default()
        };
        let version = SystemVersion {
            version: Some("20.10.24+dfsg1".into()),
            api_version: Some("1.41".into()),
            components: Some(vec![
                SystemVersionComponents {
                    name: "Engine".into(),
                    version: "20.10.24+dfsg1".into(),
                    details: None,
                },
                SystemVersionComponents {
                    name: "runc".into(),
                    version: "1.1.5+ds1".into(),
                    details: None,
                },
            ]),
            ..Default::default()
        };
        (info, version)
    }

    #[test]
    fn reports_an_engine_like_this_one() {
        let (info, version) = engine_like_this_one();
        let report = EngineReport::new(&info, Some(&version), "1.41".into());
        assert_eq!(report.runc_version.as_deref(), Some("1.1.5+ds1"));
        assert_eq!(report.runc_commit.as_deref(), Some("1.1.5+ds1-1+deb12u1"));
        assert_eq!(report.cgroup_version.as_deref(), Some("1"));
        assert_eq!(report.cgroup_driver.as_deref(), Some("cgroupfs"));
        assert_eq!(report.seccomp_profile.as_deref(), Some("default"));
        assert!(!report.user_namespaces && !report.apparmor && !report.selinux);
        let warnings: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.level == Level::Warning)
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        assert!(warnings[0].starts_with("runc 1.1.5+ds1, package 1.1.5+ds1-1+deb12u1 is older than upstream's fix for CVE-2024-21626 (1.1.12), CVE-2025-31133"));
        assert!(warnings[0].contains("check your distribution's advisories"));
        assert!(!warnings[0].contains("CVE-2019-5736"));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["runc_checks"][3]["status"], "older_than_fix");
        assert_eq!(json["runc_checks"][0]["status"], "at_or_after_fix");
        assert_eq!(json["findings"][0]["level"], "warning");
        assert!(report
            .summary()
            .contains("runc 1.1.5+ds1, cgroup v1 (cgroupfs), seccomp default"));
    }

    #[test]
    fn reads_security_options_and_falls_back_to_the_runc_commit() {
        let (mut info, _) = engine_like_this_one();
        info.security_options = Some(vec![
            "name=apparmor".into(),
            "name=seccomp,profile=/etc/docker/seccomp.json".into(),
            "name=userns".into(),
            "name=rootless".into(),
        ]);
        info.runc_commit = Some(Commit {
            id: Some("v1.2.8-0-g3d3b9a0".into()),
        });
        let report = EngineReport::new(&info, None, "1.41".into());
        assert_eq!(report.runc_version.as_deref(), Some("v1.2.8-0-g3d3b9a0"));
        assert!(report
            .runc_checks
            .iter()
            .all(|c| c.status == FixStatus::AtOrAfterFix));
        assert_eq!(
            report.seccomp_profile.as_deref(),
            Some("/etc/docker/seccomp.json")
        );
        assert!(report.user_namespaces && report.apparmor && report.rootless);
        assert!(report.findings.iter().all(|f| f.level == Level::Info));

        // A commit hash alone says no version; seccomp off is a warning.
        info.runc_commit = Some(Commit {
            id: Some("51d5e94601ceffbbd85688df1c928ecccbfa4685".into()),
        });
        info.security_options = Some(vec![]);
        let report = EngineReport::new(&info, None, "1.41".into());
        assert_eq!(report.runc_version, None);
        assert!(report
            .runc_checks
            .iter()
            .all(|c| c.status == FixStatus::Unknown));
        let warnings: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.level == Level::Warning)
            .collect();
        assert_eq!(warnings.len(), 2, "{warnings:#?}");
        assert!(warnings[0].message.contains("does not say which runc"));
        assert!(warnings[1].message.contains("seccomp is off"));
    }
}
