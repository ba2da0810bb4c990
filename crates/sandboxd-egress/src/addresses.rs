//! Addresses no sandbox may reach, whatever its rules allow.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `address` is never reached through the proxy, or `None` when it may be.
pub fn denied_reason(address: IpAddr) -> Option<&'static str> {
    let reason = match address {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    };
    reason.or_else(|| is_host_address(address).then_some("an address of this host"))
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "the cloud metadata address",
        // Alibaba's metadata service sits in the CGNAT range.
        _ if ip == Ipv4Addr::new(100, 100, 100, 200) => "the cloud metadata address",
        (0, _) => "an unspecified address",
        (127, _) => "a loopback address",
        (10, _) | (192, 168) => "a private address",
        (172, 16..=31) => "a private address",
        (169, 254) => "a link-local address",
        (100, 64..=127) => "a shared (CGNAT) address",
        (192, 0) if c == 0 => "an IETF protocol address",
        (198, 18..=19) => "a benchmarking address",
        (224..=239, _) => "a multicast address",
        (240..=255, _) => "a reserved or broadcast address",
        _ => return None,
    })
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address that is reached in the end.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = segments[6].to_be_bytes();
        let [c, d] = segments[7].to_be_bytes();
        return v4_reason(Ipv4Addr::new(a, b, c, d));
    }
    if segments[0] == 0x2002 {
        let [a, b] = segments[1].to_be_bytes();
        let [c, d] = segments[2].to_be_bytes();
        return v4_reason(Ipv4Addr::new(a, b, c, d));
    }
    Some(match segments[0] {
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        // IPv4-compatible (deprecated) addresses: never a real host.
        _ if segments[..6] == [0; 6] => "an IPv4-compatible address",
        0xfc00..=0xfdff => "a private (unique local) address",
        0xfe80..=0xfebf => "a link-local address",
        0xfec0..=0xfeff => "a site-local address",
        0xff00..=0xffff => "a multicast address",
        // Teredo tunnels an IPv4 address too.
        0x2001 if segments[1] == 0 => "a Teredo address",
        _ => return None,
    })
}

/// Whether one of the host's own interfaces has this address (looked up at each check: an
/// address may come and go while the service runs).
fn is_host_address(address: IpAddr) -> bool {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list it allocates; it is read only while
    // it lives and freed once below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        // Unknown means refused: the check fails closed.
        return true;
    }
    let mut found = false;
    let mut entry = list;
    while !entry.is_null() {
        // SAFETY: `entry` is a node of the list getifaddrs returned, not yet freed.
        let ifaddr = unsafe { &*entry };
        if !ifaddr.ifa_addr.is_null() {
            // SAFETY: a non-null `ifa_addr` points to a sockaddr of the family it names.
            let family = i32::from(unsafe { (*ifaddr.ifa_addr).sa_family });
            let ip = match family {
                libc::AF_INET => {
                    let sin = unsafe { &*(ifaddr.ifa_addr as *const libc::sockaddr_in) };
                    Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                        sin.sin_addr.s_addr,
                    ))))
                }
                libc::AF_INET6 => {
                    let sin6 = unsafe { &*(ifaddr.ifa_addr as *const libc::sockaddr_in6) };
                    Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
                }
                _ => None,
            };
            found |= ip == Some(address);
        }
        entry = ifaddr.ifa_next;
    }
    // SAFETY: the list getifaddrs returned, freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> Option<&'static str> {
        denied_reason(text.parse().unwrap())
    }

    #[test]
    fn inner_and_special_addresses_are_denied() {
        for (address, says) in [
            ("127.0.0.1", "loopback"),
            ("127.8.9.10", "loopback"),
            ("10.1.2.3", "private"),
            ("172.20.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "metadata"),
            ("169.254.1.1", "link-local"),
            ("100.64.0.1", "CGNAT"),
            ("100.100.100.200", "metadata"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "broadcast"),
            ("0.0.0.0", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "metadata"),
            ("64:ff9b::a9fe:a9fe", "metadata"),
            ("2002:7f00:1::", "loopback"),
            ("fd00:ec2::254", "private"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
        ] {
            let why = reason(address).unwrap_or_else(|| panic!("{address} allowed"));
            assert!(why.contains(says), "{address}: {why}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "198.51.100.7",
            "93.184.216.34",
            "2606:4700::1111",
            "172.32.0.1",
        ] {
            assert_eq!(reason(address), None, "{address}");
        }
    }

    #[test]
    fn the_hosts_own_addresses_are_denied() {
        // Loopback is an interface address on every host; a loopback address that is not on
        // an interface is denied as loopback anyway, so look at the list itself.
        assert!(is_host_address("127.0.0.1".parse().unwrap()));
        assert!(!is_host_address("198.51.100.254".parse().unwrap()));
    }
}
