//! Recording a desktop session's screen to a video file in the sandbox: ffmpeg grabbing the
//! display (x11grab) into H.264 in fragmented MP4, which stays playable when cut short, started
//! detached and stopped with SIGINT (so it ends its file) by scripts run through the agent's
//! exec. One recording at a time per session; its pid and path are kept in the sandbox's
//! `/tmp`. Start and stop are activity entries (`computer_record_start` with the path,
//! `computer_record_stop` with the path and the file's size).

use crate::core::Core;
use crate::error::Error;
use crate::ops::computer::TEXT_OUTPUT_LIMIT;
use crate::state::activity::Caller;
use sandboxd_api::{Recording, RecordingRequest, MAX_RECORDING_FPS};
use sandboxd_backend::WORKDIR;
use time::OffsetDateTime;

const DEFAULT_FPS: u32 = 10;
/// The longest path a recording may be written to.
const MAX_PATH: usize = 1024;

/// Starts ffmpeg on the display unless a recording runs; prints `started` or `running`.
/// Arguments: the file, the frame rate. Fails at once (3) when no display answers.
const START_SCRIPT: &str = r#"out="$1"; fps="$2"; state=/tmp/sandboxd-recording
if [ -s "$state.pid" ] && kill -0 "$(cat "$state.pid")" 2>/dev/null; then echo running; exit 0; fi
size=$(xdpyinfo 2>/dev/null | sed -n 's/^ *dimensions: *\([0-9]*x[0-9]*\) .*/\1/p')
[ -n "$size" ] || exit 3
mkdir -p "$(dirname "$out")" || exit 1
rm -f "$state.pid"
printf '%s\n' "$out" >"$state.path"
setsid -f /bin/sh -c 'echo $$ >"$0.pid"; exec ffmpeg -nostdin -loglevel error -y -f x11grab -framerate "$2" -video_size "$3" -i "$DISPLAY" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -movflags frag_keyframe+empty_moov "$1" 2>"$0.log"' "$state" "$out" "$fps" "$size" </dev/null >/dev/null 2>&1
i=0
until [ -s "$state.pid" ]; do i=$((i + 1)); [ "$i" -gt 50 ] && exit 1; sleep 0.1; done
sleep 0.3
kill -0 "$(cat "$state.pid")" 2>/dev/null || { cat "$state.log" >&2; rm -f "$state.pid"; exit 1; }
echo started"#;

/// Stops the recording: SIGINT, then up to 10 s for ffmpeg to end its file (SIGKILL after).
/// Prints `none`, or `stopped`, the file's size and its path, a line each.
const STOP_SCRIPT: &str = r#"state=/tmp/sandboxd-recording
[ -s "$state.pid" ] || { echo none; exit 0; }
pid=$(cat "$state.pid"); path=$(cat "$state.path" 2>/dev/null)
rm -f "$state.pid"
alive() { [ -r "/proc/$pid/status" ] && ! grep -q '^State:.*Z' "/proc/$pid/status"; }
if kill -INT "$pid" 2>/dev/null; then
  i=0
  while alive; do i=$((i + 1)); if [ "$i" -gt 100 ]; then kill -KILL "$pid"; break; fi; sleep 0.1; done
fi
echo stopped
stat -c %s "$path" 2>/dev/null || echo 0
printf '%s\n' "$path""#;

impl Core {
    /// Starts recording the session's screen (starting the display if nothing draws it).
    pub async fn start_recording(
        &self,
        caller: &Caller,
        session_id: &str,
        request: RecordingRequest,
    ) -> Result<Recording, Error> {
        let (path, fps) = plan(request, OffsetDateTime::now_utc().unix_timestamp())?;
        let session = self.running_session(caller, session_id, "computer_record_start")?;
        let mut entry = self.entry(caller, &session, "computer_record_start", &path);
        let argv = [
            "/bin/sh",
            "-c",
            START_SCRIPT,
            "sandboxd-record",
            &path,
            &fps.to_string(),
        ]
        .map(String::from);
        let result = async {
            let said = self
                .run_on_screen(&session, &argv, 30, TEXT_OUTPUT_LIMIT)
                .await?;
            match String::from_utf8_lossy(&said).trim() {
                "started" => Ok(Recording { path, bytes: None }),
                "running" => Err(Error::Conflict {
                    code: "recording_running",
                    message: "the screen is being recorded already: stop that recording first (DELETE .../computer/recording)".into(),
                }),
                other => Err(unexpected(other)),
            }
        }
        .await;
        entry.finish(result)
    }

    /// Stops the session's recording and answers its file and size.
    pub async fn stop_recording(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<Recording, Error> {
        let session = self.running_session(caller, session_id, "computer_record_stop")?;
        let mut entry = self.entry(caller, &session, "computer_record_stop", "");
        let argv = ["/bin/sh", "-c", STOP_SCRIPT].map(String::from);
        let result = async {
            let ran = self.run(&session, &argv, 30, TEXT_OUTPUT_LIMIT).await?;
            if ran.report.exit_code != Some(0) {
                return Err(unexpected(&String::from_utf8_lossy(&ran.stderr)));
            }
            parse_stopped(&String::from_utf8_lossy(&ran.stdout))
        }
        .await;
        if let Ok(recording) = &result {
            entry.target.clone_from(&recording.path);
            entry.bytes = recording.bytes;
        }
        entry.finish(result)
    }
}

/// The file and frame rate a request asks for, checked; `now` names the default file.
fn plan(request: RecordingRequest, now: i64) -> Result<(String, u32), Error> {
    let fps = request.fps.unwrap_or(DEFAULT_FPS);
    if !(1..=MAX_RECORDING_FPS).contains(&fps) {
        return Err(Error::bad_request(
            "invalid_request",
            format!("`fps` is 1 to {MAX_RECORDING_FPS}, not {fps}"),
        ));
    }
    let path = request
        .path
        .unwrap_or_else(|| format!("{WORKDIR}/screen-{now}.mp4"));
    let fine = path.starts_with('/')
        && path.ends_with(".mp4")
        && path.len() <= MAX_PATH
        && !path.chars().any(char::is_control)
        && !path.split('/').any(|part| part == "..");
    if !fine {
        return Err(Error::bad_request(
            "invalid_request",
            format!("`path` is an absolute path in the sandbox ending in .mp4, at most {MAX_PATH} bytes, without `..` or control characters"),
        ));
    }
    Ok((path, fps))
}

/// The stop script's answer: `none`, or `stopped`, the size and the path.
fn parse_stopped(said: &str) -> Result<Recording, Error> {
    let mut lines = said.lines();
    match lines.next() {
        Some("none") => Err(Error::Conflict {
            code: "no_recording",
            message: "the screen is not being recorded: start a recording first (POST .../computer/recording)".into(),
        }),
        Some("stopped") => {
            let bytes = lines.next().and_then(|b| b.trim().parse::<u64>().ok());
            let path: String = lines.next().unwrap_or("").chars().take(MAX_PATH).collect();
            match (bytes, path.is_empty()) {
                (Some(bytes), false) => Ok(Recording {
                    path,
                    bytes: Some(bytes),
                }),
                _ => Err(unexpected(said)),
            }
        }
        _ => Err(unexpected(said)),
    }
}

fn unexpected(said: &str) -> Error {
    let head: String = said.trim().chars().take(300).collect();
    Error::Conflict {
        code: "computer_failed",
        message: format!("the recording's script answered {head:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_checked_and_defaults_filled() {
        let (path, fps) = plan(RecordingRequest::default(), 1_700_000_000).unwrap();
        assert_eq!(path, "/workspace/screen-1700000000.mp4");
        assert_eq!(fps, 10);
        for (path, fps) in [
            (Some("relative.mp4"), None),
            (Some("/tmp/a.webm"), None),
            (Some("/tmp/../etc/x.mp4"), None),
            (Some("/tmp/a\nb.mp4"), None),
            (None, Some(0)),
            (None, Some(31)),
        ] {
            let request = RecordingRequest {
                path: path.map(String::from),
                fps,
            };
            assert!(plan(request, 0).is_err(), "{path:?} {fps:?}");
        }
    }

    #[test]
    fn the_stop_scripts_answer_is_read() {
        let stopped = parse_stopped("stopped\n12345\n/tmp/a.mp4\n").unwrap();
        assert_eq!(stopped.path, "/tmp/a.mp4");
        assert_eq!(stopped.bytes, Some(12345));
        assert!(matches!(
            parse_stopped("none\n"),
            Err(Error::Conflict {
                code: "no_recording",
                ..
            })
        ));
        assert!(parse_stopped("stopped\nmany\n/tmp/a.mp4").is_err());
        assert!(parse_stopped("").is_err());
    }
}
