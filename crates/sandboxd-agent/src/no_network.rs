//! `--install DEST --no-network`: takes every interface of the pod's network namespace down but
//! the loopback, in the init container of a `network_mode = "none"` sandbox on Kubernetes
//! (the one that installs the agent: a second init container would cost the pod's start a
//! kubelet relist, about a second). Whatever the
//! cluster's network plugin gave the pod, and whether or not the cluster enforces the deny-all
//! NetworkPolicy, the sandbox then has no route anywhere; it cannot bring an interface back
//! up (no `CAP_NET_ADMIN`, and no way to gain it). The agent is still reached through the API
//! server's port-forward, which dials the pod's loopback.

use std::ffi::CStr;
use std::io::Error;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub fn take_interfaces_down() -> Result<(), String> {
    match interfaces().and_then(|names| {
        names
            .iter()
            .filter(|name| name.as_bytes() != b"lo")
            .try_for_each(|name| take_down(name))
    }) {
        Ok(()) => Ok(()),
        // gVisor's network stack has no interface flags to set: there the deny-all
        // NetworkPolicy alone holds the pod, as the operator book says.
        Err(Refused::Unsupported(message)) => {
            eprintln!(
                "sandboxd-agent: this kernel cannot take interfaces down ({message}); the pod's network is left to the NetworkPolicy"
            );
            Ok(())
        }
        Err(Refused::Failed(message)) => {
            Err(format!("cannot take the pod's network away: {message}"))
        }
    }
}

enum Refused {
    /// The kernel has no such request (gVisor's netstack answers ENOTTY).
    Unsupported(String),
    Failed(String),
}

/// The names of the namespace's interfaces.
fn interfaces() -> Result<Vec<std::ffi::CString>, Refused> {
    // SAFETY: if_nameindex returns an array ended by a zero entry, or null; it is read before
    // if_freenameindex frees it, and the names are copied out.
    unsafe {
        let list = libc::if_nameindex();
        if list.is_null() {
            return Err(Refused::Failed(format!(
                "cannot list the interfaces: {}",
                Error::last_os_error()
            )));
        }
        let mut names = Vec::new();
        let mut entry = list;
        while (*entry).if_index != 0 && !(*entry).if_name.is_null() {
            names.push(CStr::from_ptr((*entry).if_name).to_owned());
            entry = entry.add(1);
        }
        libc::if_freenameindex(list);
        Ok(names)
    }
}

/// Clears `IFF_UP` on the interface, and checks it stayed cleared.
fn take_down(name: &CStr) -> Result<(), Refused> {
    let shown = name.to_string_lossy();
    // SAFETY: a plain socket call; the descriptor is owned at once.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if socket < 0 {
        return Err(Refused::Failed(format!(
            "cannot open a socket: {}",
            Error::last_os_error()
        )));
    }
    // SAFETY: the descriptor was just opened and is owned by nothing else.
    let socket = unsafe { OwnedFd::from_raw_fd(socket) };
    let flags = |request, value: Option<libc::c_short>| -> Result<libc::c_short, Refused> {
        // SAFETY: ifreq is plain data; zeroed is a valid value.
        let mut ifreq: libc::ifreq = unsafe { std::mem::zeroed() };
        let bytes = name.to_bytes();
        if bytes.len() >= ifreq.ifr_name.len() {
            return Err(Refused::Failed(format!(
                "the interface name {shown:?} is too long"
            )));
        }
        for (slot, byte) in ifreq.ifr_name.iter_mut().zip(bytes) {
            *slot = *byte as libc::c_char;
        }
        if let Some(value) = value {
            ifreq.ifr_ifru.ifru_flags = value;
        }
        // SAFETY: the request reads or writes the ifreq, which lives for the call.
        if unsafe { libc::ioctl(socket.as_raw_fd(), request, &mut ifreq) } < 0 {
            let error = Error::last_os_error();
            let message = format!("{shown}: {error}");
            return Err(match error.raw_os_error() {
                Some(libc::ENOTTY) => Refused::Unsupported(message),
                _ => Refused::Failed(message),
            });
        }
        // SAFETY: the flags member is the one both requests use.
        Ok(unsafe { ifreq.ifr_ifru.ifru_flags })
    };
    let up = libc::c_short::try_from(libc::IFF_UP).expect("IFF_UP is 1");
    let now = flags(libc::SIOCGIFFLAGS, None)?;
    flags(libc::SIOCSIFFLAGS, Some(now & !up))?;
    if flags(libc::SIOCGIFFLAGS, None)? & up != 0 {
        return Err(Refused::Failed(format!("{shown} is still up")));
    }
    Ok(())
}
