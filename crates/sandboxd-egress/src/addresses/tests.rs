use super::*;

fn reason(text: &str) -> Option<&'static str> {
    denied_reason(text.parse().unwrap())
}

/// An address of `range`'s family from its bits (the low 32 for IPv4).
fn address_like(range: &Special, bits: u128) -> IpAddr {
    match range.prefix {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(u32::try_from(bits).unwrap())),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from(bits)),
    }
}

/// The first and last address of `range`, as bits.
fn bounds(range: &Special) -> (u128, u128) {
    let (bits, width) = match range.prefix {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    };
    let host_bits = u128::MAX
        .checked_shr(128 - (width - range.length))
        .unwrap_or(0);
    (bits & !host_bits, bits | host_bits)
}

#[test]
fn the_registries_ranges_are_all_in_the_table() {
    for text in [
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.31.196.0/24",
        "192.52.193.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "192.175.48.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "255.255.255.255/32",
        "169.254.169.254/32",
        "100.100.100.200/32",
        "::/128",
        "::1/128",
        "::ffff:0:0/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001::/32",
        "2001:2::/48",
        "2001:20::/28",
        "2001:db8::/32",
        "2002::/16",
        "2620:4f:8000::/48",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fd00:ec2::254/128",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    ] {
        let (prefix, length) = text.split_once('/').unwrap();
        let (prefix, length): (IpAddr, u32) = (prefix.parse().unwrap(), length.parse().unwrap());
        assert!(
            SPECIAL
                .iter()
                .any(|range| range.prefix == prefix && range.length == length),
            "{text} is not in the table"
        );
    }
}

#[test]
fn no_range_is_shadowed_by_an_earlier_one() {
    for (i, later) in SPECIAL.iter().enumerate() {
        let (first, last) = bounds(later);
        for earlier in &SPECIAL[..i] {
            let covers = earlier.length <= later.length
                && earlier.contains(address_like(later, first))
                && earlier.contains(address_like(later, last));
            assert!(!covers, "{earlier:?} hides {later:?}");
        }
    }
}

#[test]
fn each_ranges_first_and_last_address_is_denied_with_its_reason() {
    for (i, range) in SPECIAL.iter().enumerate() {
        let (first, last) = bounds(range);
        for address in [first, last].map(|bits| address_like(range, bits)) {
            let why = denied_reason(address).unwrap_or_else(|| panic!("{address} allowed"));
            // A smaller range listed before this one may hold the address, with its own reason.
            let decides = SPECIAL[..i]
                .iter()
                .find(|earlier| earlier.contains(address))
                .unwrap_or(range);
            let expected = match decides.judged {
                Judged::Denied(reason) => reason,
                Judged::AsEmbeddedV4 { at } => {
                    denied_reason(embedded_v4(address, at).into()).expect("embedded denied")
                }
            };
            assert_eq!(why, expected, "{address} in {range:?}");
        }
    }
}

#[test]
fn addresses_just_outside_each_range_pass() {
    let mut checked = 0;
    for range in SPECIAL {
        let (first, last) = bounds(range);
        let max = match range.prefix {
            IpAddr::V4(_) => u128::from(u32::MAX),
            IpAddr::V6(_) => u128::MAX,
        };
        let outside = [
            first.checked_sub(1),
            last.checked_add(1).filter(|b| *b <= max),
        ];
        for address in outside
            .into_iter()
            .flatten()
            .map(|b| address_like(range, b))
        {
            // A neighbour in another special range is that range's business.
            if SPECIAL.iter().any(|other| other.contains(address)) {
                continue;
            }
            assert_eq!(denied_reason(address), None, "{address} next to {range:?}");
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} neighbours were public");
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
        ("192.0.2.1", "documentation"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("192.88.99.1", "6to4 relay"),
        ("198.19.255.1", "benchmarking"),
        ("224.0.0.1", "multicast"),
        ("250.1.2.3", "reserved"),
        ("255.255.255.255", "broadcast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "metadata"),
        ("::ffff:192.0.2.1", "documentation"),
        ("::7f00:1", "IPv4-compatible"),
        ("64:ff9b::a9fe:a9fe", "metadata"),
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b:1::101:101", "NAT64"),
        ("2001::1", "Teredo"),
        ("2001:db8::1", "documentation"),
        ("2002:7f00:1::", "loopback"),
        ("2002:c000:201::1", "documentation"),
        ("3fff:fff::1", "documentation"),
        ("fd00:ec2::254", "metadata"),
        ("fd12::1", "unique local"),
        ("fe80::1", "link-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
    ] {
        let why = reason(address).unwrap_or_else(|| panic!("{address} allowed"));
        assert!(why.contains(says), "{address}: {why}");
    }
}

#[test]
fn public_addresses_pass() {
    for address in [
        "93.184.216.34",
        "1.1.1.1",
        "8.8.8.8",
        "172.32.0.1",
        "192.0.3.1",
        "2606:4700::1111",
        "2a00:1450:4001:80b::200e",
        // A mapped, 6to4 or NAT64 address of a public IPv4 host reaches that host.
        "::ffff:1.1.1.1",
        "2002:101:101::1",
        "64:ff9b::101:101",
    ] {
        assert_eq!(reason(address), None, "{address}");
    }
}

#[test]
fn the_hosts_own_addresses_are_denied() {
    // Loopback is an interface address on every host; a loopback address that is not on an
    // interface is denied as loopback anyway, so look at the list itself.
    assert!(is_host_address("127.0.0.1".parse().unwrap()));
    assert!(!is_host_address("198.51.100.254".parse().unwrap()));
}
