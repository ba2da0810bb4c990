use super::*;
use crate::files::test_support::{error_code, event, names_in, start};
use sandboxd_agent_proto::{write_frame, ErrorCode, FilesEvent, FILE_CHUNK_LEN};
use std::fs::Permissions;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn header(kind: tar::EntryType, size: u64, mode: u32) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(mode);
    header.set_mtime(1_000_000_000);
    header
}

/// A header whose name is written as is, past the checks the tar crate makes.
fn raw(kind: tar::EntryType, name: &str, size: u64) -> tar::Header {
    let mut header = header(kind, size, 0o644);
    header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    header.set_cksum();
    header
}

/// Sends `tar` to an extraction into `target`; returns the agent's answer and the names in
/// `watched` as it came, so that what the agent removes after answering counts as left.
fn upload(target: &Path, tar: &[u8], max_bytes: u64, watched: &Path) -> (Event, Vec<String>) {
    let path = target.to_str().unwrap().to_string();
    let (mut service, agent) = start(move |c| write_archive(c, &path, max_bytes));
    let ready = event(&mut service);
    if ready != Event::WriteReady {
        let seen = names_in(watched);
        agent.join().unwrap().unwrap();
        return (ready, seen);
    }
    for chunk in tar.chunks(FILE_CHUNK_LEN) {
        // An early refusal stops the agent reading; the rest is not needed.
        if write_frame(&mut service, FrameKind::Stdin, chunk).is_err() {
            break;
        }
    }
    let _ = write_frame(&mut service, FrameKind::Stdin, &[]);
    let answer = event(&mut service);
    let seen = names_in(watched);
    agent.join().unwrap().unwrap();
    (answer, seen)
}

#[test]
fn an_archive_is_extracted_with_plain_modes_and_symlinks_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut builder = tar::Builder::new(Vec::new());
    builder
        .append_data(
            &mut header(tar::EntryType::Directory, 0, 0o555),
            "ro",
            io::empty(),
        )
        .unwrap();
    let data: Vec<u8> = (0..150_000u32).map(|i| (i % 249) as u8).collect();
    let mut file = header(tar::EntryType::Regular, data.len() as u64, 0o4755);
    builder
        .append_data(&mut file, "ro/tool", data.as_slice())
        .unwrap();
    // A parent the archive does not list is made.
    let mut nested = header(tar::EntryType::Regular, 2, 0o640);
    builder
        .append_data(&mut nested, "a/b/c.txt", &b"hi"[..])
        .unwrap();
    let mut link = header(tar::EntryType::Symlink, 0, 0o777);
    builder
        .append_link(&mut link, "a/to-etc", "/etc/passwd")
        .unwrap();
    let tar = builder.into_inner().unwrap();
    let target = dir.path().join("new/target");

    let (answer, seen) = upload(&target, &tar, 1 << 20, &target);
    let expected = ArchiveSummary {
        files: 2,
        dirs: 1,
        symlinks: 1,
        bytes: data.len() as u64 + 2,
        skipped: 0,
    };
    assert_eq!(answer, Event::Files(FilesEvent::ArchiveWritten(expected)));
    assert_eq!(seen, ["a", "ro"], "no work directory left");
    assert_eq!(fs::read(target.join("ro/tool")).unwrap(), data);
    let mode = |p: &str| fs::symlink_metadata(target.join(p)).unwrap().mode() & 0o7777;
    assert_eq!(mode("ro/tool"), 0o755, "setuid cleared");
    assert_eq!(mode("ro"), 0o555);
    assert_eq!(mode("a/b/c.txt"), 0o640);
    let mtime = fs::metadata(target.join("a/b/c.txt")).unwrap().mtime();
    assert_eq!(mtime, 1_000_000_000);
    assert_eq!(
        fs::read_link(target.join("a/to-etc")).unwrap(),
        Path::new("/etc/passwd")
    );
    // Writable again so the temporary directory can be removed.
    fs::set_permissions(target.join("ro"), Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn escapes_links_devices_and_oversize_are_refused_and_leave_nothing() {
    let through_symlink = {
        let mut builder = tar::Builder::new(Vec::new());
        let outside = tempfile::tempdir().unwrap();
        let mut link = header(tar::EntryType::Symlink, 0, 0o777);
        builder
            .append_link(&mut link, "escape", outside.path())
            .unwrap();
        let planted = raw(tar::EntryType::Regular, "escape/planted", 1);
        builder.append(&planted, &b"x"[..]).unwrap();
        (builder.into_inner().unwrap(), outside)
    };
    let single = |h: tar::Header, data: &[u8]| {
        let mut builder = tar::Builder::new(Vec::new());
        builder.append(&h, data).unwrap();
        builder.into_inner().unwrap()
    };
    let hard_link = {
        let mut h = raw(tar::EntryType::Link, "hard", 0);
        h.set_link_name("/etc/shadow").unwrap();
        h.set_cksum();
        single(h, b"")
    };
    let mut big = tar::Builder::new(Vec::new());
    for name in ["one", "two"] {
        let mut h = header(tar::EntryType::Regular, 600, 0o644);
        big.append_data(&mut h, name, &[1u8; 600][..]).unwrap();
    }
    let big = big.into_inner().unwrap();
    let cut = big[..1200].to_vec();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "dotdot",
            single(raw(tar::EntryType::Regular, "../up", 1), b"x"),
            "`..`",
        ),
        (
            "deep dotdot",
            single(raw(tar::EntryType::Regular, "a/../../up", 1), b"x"),
            "`..`",
        ),
        (
            "absolute",
            single(raw(tar::EntryType::Regular, "/abs", 1), b"x"),
            "absolute",
        ),
        ("through a symlink", through_symlink.0.clone(), "symlink"),
        ("hard link", hard_link, "hard link"),
        (
            "device",
            single(raw(tar::EntryType::Char, "null", 0), b""),
            "device",
        ),
        (
            "fifo",
            single(raw(tar::EntryType::Fifo, "pipe", 0), b""),
            "FIFO",
        ),
        ("over the cap", big, "limit"),
        ("cut short", cut, "end"),
    ];
    for (case, tar, said) in cases {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        let (answer, seen) = upload(&target, &tar, 1000, dir.path());
        match answer {
            Event::Error { message, .. } => assert!(message.contains(said), "{case}: {message}"),
            other => panic!("{case}: {other:?}"),
        }
        assert!(seen.is_empty(), "{case}: something was left: {seen:?}");
    }
    assert!(names_in(through_symlink.1.path()).is_empty());
}

#[test]
fn an_existing_name_is_refused_and_what_moved_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("taken"), b"mine").unwrap();
    let mut builder = tar::Builder::new(Vec::new());
    for name in ["free", "taken"] {
        let mut h = header(tar::EntryType::Regular, 3, 0o644);
        builder.append_data(&mut h, name, &b"new"[..]).unwrap();
    }
    let (answer, seen) = upload(dir.path(), &builder.into_inner().unwrap(), 1000, dir.path());
    assert_eq!(error_code(answer), ErrorCode::Busy);
    assert_eq!(seen, ["taken"]);
    assert_eq!(fs::read(dir.path().join("taken")).unwrap(), b"mine");
}

#[test]
fn a_cancelled_or_broken_upload_leaves_nothing() {
    let mut builder = tar::Builder::new(Vec::new());
    let mut h = header(tar::EntryType::Regular, 100_000, 0o644);
    builder
        .append_data(&mut h, "f", &[5u8; 100_000][..])
        .unwrap();
    let tar = builder.into_inner().unwrap();
    for cancel in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t").to_str().unwrap().to_string();
        let (mut service, agent) = start(move |c| write_archive(c, &path, 1 << 20));
        assert_eq!(event(&mut service), Event::WriteReady);
        write_frame(&mut service, FrameKind::Stdin, &tar[..FILE_CHUNK_LEN]).unwrap();
        if cancel {
            write_json(&mut service, &Request::Cancel).unwrap();
            assert_eq!(error_code(event(&mut service)), ErrorCode::Cancelled);
            assert!(names_in(dir.path()).is_empty(), "left at the answer");
            agent.join().unwrap().unwrap();
        } else {
            drop(service);
            assert!(agent.join().unwrap().is_err());
        }
        assert!(names_in(dir.path()).is_empty(), "cancel: {cancel}");
    }
}
