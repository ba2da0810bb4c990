//! Addresses no sandbox may reach, whatever its rules allow: the ranges of IANA's IPv4 and
//! IPv6 special-purpose address registries (and multicast), the clouds' metadata services,
//! and the host's own addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `address` is never reached through the proxy, or `None` when it may be.
pub fn denied_reason(address: IpAddr) -> Option<&'static str> {
    let reason = match SPECIAL.iter().find(|range| range.contains(address)) {
        Some(range) => match range.judged {
            Judged::Denied(reason) => Some(reason),
            Judged::AsEmbeddedV4 { at } => return denied_reason(embedded_v4(address, at).into()),
        },
        None => None,
    };
    reason.or_else(|| is_host_address(address).then_some("an address of this host"))
}

/// What the proxy makes of an address in a special-purpose range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    /// Never reached, for this reason.
    Denied(&'static str),
    /// Carries an IPv4 address (bits `at..at + 32`) that is what is reached in the end:
    /// judged as that address.
    AsEmbeddedV4 { at: u32 },
}

/// One range of the table: `prefix/length`.
#[derive(Debug)]
struct Special {
    prefix: IpAddr,
    length: u32,
    judged: Judged,
}

const fn v4(octets: [u8; 4], length: u32, reason: &'static str) -> Special {
    let [a, b, c, d] = octets;
    Special {
        prefix: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        length,
        judged: Judged::Denied(reason),
    }
}

const fn v6(segments: [u16; 8], length: u32, judged: Judged) -> Special {
    let [a, b, c, d, e, f, g, h] = segments;
    Special {
        prefix: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
        length,
        judged,
    }
}

const fn denied(reason: &'static str) -> Judged {
    Judged::Denied(reason)
}

const METADATA: &str = "the cloud metadata address";
const PRIVATE: &str = "a private address";
const DOCUMENTATION: &str = "a documentation address";
const AS112: &str = "an AS112 (reverse DNS sink) address";
const BENCHMARKING: &str = "a benchmarking address";
const NAT64: &str = "a NAT64 translation address";
const IETF: &str = "an IETF protocol address";

/// IANA's IPv4 and IPv6 special-purpose address registries (RFC 6890 and its updates), the
/// multicast ranges and the clouds' metadata addresses. The first range holding an address
/// decides, so a range inside another comes before it (a test checks none is shadowed).
const SPECIAL: &[Special] = &[
    v4([169, 254, 169, 254], 32, METADATA),
    // Alibaba's metadata service sits in the CGNAT range.
    v4([100, 100, 100, 200], 32, METADATA),
    v4([0, 0, 0, 0], 8, "an unspecified (\"this network\") address"),
    v4([10, 0, 0, 0], 8, PRIVATE),
    v4([100, 64, 0, 0], 10, "a shared (CGNAT) address"),
    v4([127, 0, 0, 0], 8, "a loopback address"),
    v4([169, 254, 0, 0], 16, "a link-local address"),
    v4([172, 16, 0, 0], 12, PRIVATE),
    v4([192, 0, 0, 0], 24, IETF),
    v4([192, 0, 2, 0], 24, DOCUMENTATION),
    v4([192, 31, 196, 0], 24, AS112),
    v4([192, 52, 193, 0], 24, "an AMT relay address"),
    v4([192, 88, 99, 0], 24, "a 6to4 relay anycast address"),
    v4([192, 168, 0, 0], 16, PRIVATE),
    v4([192, 175, 48, 0], 24, AS112),
    v4([198, 18, 0, 0], 15, BENCHMARKING),
    v4([198, 51, 100, 0], 24, DOCUMENTATION),
    v4([203, 0, 113, 0], 24, DOCUMENTATION),
    v4([224, 0, 0, 0], 4, "a multicast address"),
    v4([255, 255, 255, 255], 32, "the broadcast address"),
    v4([240, 0, 0, 0], 4, "a reserved address"),
    // AWS's metadata service over IPv6 sits in the unique local range.
    v6([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254], 128, denied(METADATA)),
    v6([0; 8], 128, denied("an unspecified address")),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, denied("a loopback address")),
    // An IPv4 address an IPv6 socket reaches: the IPv4 address is what is reached.
    v6(
        [0, 0, 0, 0, 0, 0xffff, 0, 0],
        96,
        Judged::AsEmbeddedV4 { at: 96 },
    ),
    // Deprecated, never a real host.
    v6([0; 8], 96, denied("an IPv4-compatible address")),
    // NAT64's well-known prefix (globally reachable in the registry): the IPv4 address in its
    // last 32 bits is what is reached, so it is judged; the local-use prefix is refused.
    v6(
        [0x64, 0xff9b, 0, 0, 0, 0, 0, 0],
        96,
        Judged::AsEmbeddedV4 { at: 96 },
    ),
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, denied(NAT64)),
    v6(
        [0x100, 0, 0, 0, 0, 0, 0, 0],
        64,
        denied("a discard-only address"),
    ),
    v6([0x100, 0, 0, 1, 0, 0, 0, 0], 64, denied("a dummy address")),
    // Teredo tunnels an IPv4 address.
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        32,
        denied("a Teredo address"),
    ),
    v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48, denied(BENCHMARKING)),
    v6(
        [0x2001, 0x10, 0, 0, 0, 0, 0, 0],
        28,
        denied("an ORCHID address"),
    ),
    v6(
        [0x2001, 0x20, 0, 0, 0, 0, 0, 0],
        28,
        denied("an ORCHID address"),
    ),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, denied(IETF)),
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, denied(DOCUMENTATION)),
    // 6to4: the IPv4 address in bits 16..48 is reached through a relay.
    v6(
        [0x2002, 0, 0, 0, 0, 0, 0, 0],
        16,
        Judged::AsEmbeddedV4 { at: 16 },
    ),
    v6([0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0], 48, denied(AS112)),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, denied(DOCUMENTATION)),
    v6(
        [0x5f00, 0, 0, 0, 0, 0, 0, 0],
        16,
        denied("an SRv6 segment address"),
    ),
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        denied("a private (unique local) address"),
    ),
    v6(
        [0xfe80, 0, 0, 0, 0, 0, 0, 0],
        10,
        denied("a link-local address"),
    ),
    v6(
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        denied("a site-local address"),
    ),
    v6(
        [0xff00, 0, 0, 0, 0, 0, 0, 0],
        8,
        denied("a multicast address"),
    ),
];

impl Special {
    /// Whether `address` is in the range (an IPv4 range holds no IPv6 address, nor the
    /// reverse: mapped addresses have a range of their own).
    fn contains(&self, address: IpAddr) -> bool {
        let masked = |bits: u128, width: u32| {
            let mask = u128::MAX.checked_shl(width - self.length).unwrap_or(0);
            bits & mask
        };
        match (self.prefix, address) {
            (IpAddr::V4(prefix), IpAddr::V4(address)) => {
                masked(u32::from(prefix).into(), 32) == masked(u32::from(address).into(), 32)
            }
            (IpAddr::V6(prefix), IpAddr::V6(address)) => {
                masked(prefix.into(), 128) == masked(address.into(), 128)
            }
            _ => false,
        }
    }
}

fn embedded_v4(address: IpAddr, at: u32) -> Ipv4Addr {
    let IpAddr::V6(v6) = address else {
        unreachable!("only IPv6 ranges carry an IPv4 address")
    };
    // The 32 bits after the prefix: the lowest four bytes once shifted down.
    let [.., a, b, c, d] = (u128::from(v6) >> (96 - at)).to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
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
                    // SAFETY: an AF_INET address is a sockaddr_in.
                    let sin = unsafe { &*(ifaddr.ifa_addr as *const libc::sockaddr_in) };
                    Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                        sin.sin_addr.s_addr,
                    ))))
                }
                libc::AF_INET6 => {
                    // SAFETY: an AF_INET6 address is a sockaddr_in6.
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
mod tests;
