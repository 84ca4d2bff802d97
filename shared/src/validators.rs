//! Kubernetes and Cilium syntax, with the semantics of the Go code that
//! enforces it in the cluster: apimachinery's name, label and port-name
//! validators, Go's `netip` address and prefix parsers, `strconv.Atoi`, and
//! Go's case folding where it compares protocols and entity names. Offline
//! checks must give the verdict cozystack-api would give, edge cases
//! included (`"+80"` is port 80, `10.0.0.1/8` is a valid CIDR, `010.0.0.1`
//! is not).

/// A Kubernetes kind name as ApplicationDefinitions spell them: an ASCII
/// capital, then letters and digits, usable as a label value (at most 63).
pub fn is_kind_name(kind: &str) -> bool {
    kind.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && kind.chars().all(|c| c.is_ascii_alphanumeric())
        && kind.len() <= 63
}

/// Non-empty, every byte `inside`, alphanumeric at both ends: the shape of
/// apimachinery's name regexes, without their length limits.
fn edged(value: &str, inside: impl Fn(u8) -> bool, edge: impl Fn(u8) -> bool) -> bool {
    let bytes = value.as_bytes();
    bytes.iter().all(|&b| inside(b))
        && bytes.first().is_some_and(|&b| edge(b))
        && bytes.last().is_some_and(|&b| edge(b))
}

fn is_lower_alphanumeric(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_dns1123_label_shape(value: &str) -> bool {
    edged(
        value,
        |b| is_lower_alphanumeric(b) || b == b'-',
        is_lower_alphanumeric,
    )
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_name_part_shape(name: &str) -> bool {
    edged(
        name,
        |b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'),
        |b| b.is_ascii_alphanumeric(),
    )
}

/// RFC 1123 label: at most 63 lowercase alphanumerics or `-`, starting and
/// ending with an alphanumeric (namespaces, most object names).
pub fn is_dns1123_label(value: &str) -> bool {
    value.len() <= 63 && is_dns1123_label_shape(value)
}

/// apimachinery `IsDNS1123Subdomain`: dot-separated labels of the RFC 1123
/// shape, at most 253 characters in all (no per-label limit, as in Go).
pub fn is_dns1123_subdomain(value: &str) -> bool {
    value.len() <= 253 && value.split('.').all(is_dns1123_label_shape)
}

fn is_name_part(name: &str) -> bool {
    name.len() <= 63 && is_name_part_shape(name)
}

/// apimachinery's `RegexError` text for qualified names: the rule, Go's
/// three examples (spaced as Go joins them) and the regex.
const QUALIFIED_NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
     '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// apimachinery's `IsDNS1123Subdomain` messages (length, then shape).
fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    if !value.split('.').all(is_dns1123_label_shape) {
        errors.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_owned(),
        );
    }
    errors
}

/// apimachinery `IsQualifiedName`: an optional DNS subdomain prefix and `/`,
/// then a name of at most 63 characters, alphanumeric at both ends, with
/// `-`, `_` and `.` inside. Label keys and annotation keys have this shape.
/// The errors are apimachinery's, word for word and in its order (an empty
/// name gets two), since cozystack-api reports each as a field error.
pub fn check_qualified_name(value: &str) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let name = match value.split('/').collect::<Vec<_>>()[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|error| format!("prefix part {error}")),
                );
            }
            name
        }
        _ => {
            return Err(vec![format!(
                "a qualified name {QUALIFIED_NAME_RULE} with an optional DNS subdomain prefix \
                 and '/' (e.g. 'example.com/MyName')"
            )]);
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 characters".to_owned());
    }
    if !is_name_part_shape(name) {
        errors.push(format!("name part {QUALIFIED_NAME_RULE}"));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// apimachinery `IsValidLabelValue`: empty, or at most 63 characters,
/// alphanumeric at both ends, with `-`, `_` and `.` inside.
pub fn check_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    if value.len() > 63 {
        return Err("must be no more than 63 characters".to_owned());
    }
    if !is_name_part(value) {
        return Err(
            "a valid label must be an empty string or consist of alphanumeric characters, \
             '-', '_' or '.', and must start and end with an alphanumeric character"
                .to_owned(),
        );
    }
    Ok(())
}

/// The largest port number.
const MAX_PORT: i64 = 65535;

/// The message cozystack-api gives a numeric port outside 1–65535.
pub const PORT_RANGE_MESSAGE: &str = "port number must be between 1 and 65535";

/// Go's `strconv.Atoi` on a 64-bit platform: an optional sign, then ASCII
/// digits only (no spaces, no underscores), within `i64`. `"+80"` and
/// `"0080"` are 80; anything else is `None`.
pub fn go_atoi(value: &str) -> Option<i64> {
    let bytes = value.as_bytes();
    let (negative, digits) = match bytes.first() {
        Some(b'-') => (true, bytes.get(1..)?),
        Some(b'+') => (false, bytes.get(1..)?),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Accumulated negatively so that i64::MIN fits.
    let mut n: i64 = 0;
    for digit in digits {
        n = n.checked_mul(10)?.checked_sub(i64::from(digit - b'0'))?;
    }
    if negative { Some(n) } else { n.checked_neg() }
}

/// apimachinery `IsValidPortName`, every message it gives (empty when
/// valid): at most 15 characters of `[-a-z0-9]` with at least one letter,
/// no `--`, no `-` at either end. So ranges (`"80-90"` has no letter) fail.
pub fn port_name_errors(port: &str) -> Vec<&'static str> {
    let bytes = port.as_bytes();
    let mut errors = Vec::new();
    if bytes.len() > 15 {
        errors.push("must be no more than 15 characters");
    }
    if bytes.is_empty()
        || !bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    {
        errors.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !bytes.iter().any(u8::is_ascii_lowercase) {
        errors.push("must contain at least one letter (a-z)");
    }
    if port.contains("--") {
        errors.push("must not contain consecutive hyphens");
    }
    if bytes.first() == Some(&b'-') || bytes.last() == Some(&b'-') {
        errors.push("must not begin or end with a hyphen");
    }
    errors
}

/// A port as cozystack-api checks a SecurityGroup port (and as Cilium
/// reads it): empty means all ports; what Go's `strconv.Atoi` reads as a
/// number must lie in 1–65535; anything else must be a valid port name.
/// Returns every message (empty when valid).
pub fn port_errors(port: &str) -> Vec<&'static str> {
    if port.is_empty() {
        return Vec::new();
    }
    match go_atoi(port) {
        Some(n) if (1..=MAX_PORT).contains(&n) => Vec::new(),
        Some(_) => vec![PORT_RANGE_MESSAGE],
        None => port_name_errors(port),
    }
}

/// Go's `unicode.ToUpper` where it lands in ASCII: besides `a`–`z`, the
/// dotless `ı` and the long `ſ` map to `I` and `S`.
fn go_upper(c: char) -> char {
    match c {
        '\u{131}' => 'I',
        '\u{17f}' => 'S',
        c => c.to_ascii_uppercase(),
    }
}

/// Go's `unicode.ToLower` where it lands in ASCII: besides `A`–`Z`, the
/// dotted `İ` and the Kelvin sign map to `i` and `k`.
fn go_lower(c: char) -> char {
    match c {
        '\u{130}' => 'i',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    }
}

/// Whether Go's `strings.ToUpper(value)` equals the ASCII `upper`.
pub fn go_upper_equals(value: &str, upper: &str) -> bool {
    value.chars().map(go_upper).eq(upper.chars())
}

/// Whether Go's `strings.ToLower(value)` equals the ASCII `lower`.
pub fn go_lower_equals(value: &str, lower: &str) -> bool {
    value.chars().map(go_lower).eq(lower.chars())
}

/// The L4 protocols a Cilium port rule (and a Cozystack SecurityGroup)
/// accepts, in the order cozystack-api lists them.
pub const CILIUM_PROTOCOLS: [&str; 4] = ["TCP", "UDP", "SCTP", "ANY"];

/// Whether `protocol` is one of [`CILIUM_PROTOCOLS`] in any case, as
/// cozystack-api compares (`strings.ToUpper`). Empty means ANY and is not
/// this function's business.
pub fn is_cilium_protocol(protocol: &str) -> bool {
    CILIUM_PROTOCOLS
        .iter()
        .any(|known| go_upper_equals(protocol, known))
}

/// Cilium's reserved entity names, which cozystack-api refuses as the name
/// of an application or SecurityGroup a SecurityGroup refers to.
pub const RESERVED_CILIUM_ENTITIES: [&str; 9] = [
    "world",
    "cluster",
    "kube-apiserver",
    "host",
    "remote-node",
    "health",
    "init",
    "unmanaged",
    "all",
];

/// Whether `name` is a reserved Cilium entity in any case, as cozystack-api
/// compares (`strings.ToLower`).
pub fn is_reserved_cilium_entity(name: &str) -> bool {
    RESERVED_CILIUM_ENTITIES
        .iter()
        .any(|entity| go_lower_equals(name, entity))
}

/// What Go's `netip.ParseAddr` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GoAddr {
    ipv6: bool,
    zoned: bool,
}

/// Go's `parseIPv4Fields`: four decimal fields of at most 255, no leading
/// zeros, nothing else.
fn is_go_ipv4(bytes: &[u8]) -> bool {
    let mut value: u32 = 0;
    let mut digits = 0;
    let mut dots = 0;
    let mut previous = None;
    for (i, &byte) in bytes.iter().enumerate() {
        match byte {
            b'0'..=b'9' => {
                if digits == 1 && value == 0 {
                    return false;
                }
                value = value * 10 + u32::from(byte - b'0');
                digits += 1;
                if value > 255 {
                    return false;
                }
            }
            b'.' => {
                if i == 0 || i + 1 == bytes.len() || previous == Some(b'.') || dots == 3 {
                    return false;
                }
                dots += 1;
                value = 0;
                digits = 0;
            }
            _ => return false,
        }
        previous = Some(byte);
    }
    dots == 3
}

/// Go's `parseIPv6`: hex groups of at most four digits, one `::`, an
/// embedded IPv4 address in the last 32 bits, an optional non-empty
/// `%zone`. Returns whether a zone was given.
fn go_ipv6_zoned(input: &[u8]) -> Option<bool> {
    let (mut s, zoned) = match input.iter().position(|b| *b == b'%') {
        Some(at) => {
            if at + 1 == input.len() {
                return None;
            }
            (input.get(..at)?, true)
        }
        None => (input, false),
    };
    let mut ellipsis: Option<usize> = None;
    if s.starts_with(b"::") {
        ellipsis = Some(0);
        s = s.get(2..)?;
        if s.is_empty() {
            return Some(zoned);
        }
    }
    let mut i = 0;
    while i < 16 {
        let hex = s.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if hex == 0 || hex > 4 {
            return None;
        }
        if s.get(hex) == Some(&b'.') {
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 || !is_go_ipv4(s) {
                return None;
            }
            s = &[];
            i += 4;
            break;
        }
        i += 2;
        s = s.get(hex..)?;
        if s.is_empty() {
            break;
        }
        if s.first() != Some(&b':') || s.len() == 1 {
            return None;
        }
        s = s.get(1..)?;
        if s.first() == Some(&b':') {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(i);
            s = s.get(1..)?;
            if s.is_empty() {
                break;
            }
        }
    }
    let complete = if i < 16 {
        ellipsis.is_some()
    } else {
        ellipsis.is_none()
    };
    (s.is_empty() && complete).then_some(zoned)
}

/// Go's `netip.ParseAddr`: the first `.`, `:` or `%` decides the family.
fn go_parse_addr(value: &[u8]) -> Option<GoAddr> {
    match value.iter().find(|b| matches!(b, b'.' | b':' | b'%'))? {
        b'.' => is_go_ipv4(value).then_some(GoAddr {
            ipv6: false,
            zoned: false,
        }),
        b':' => go_ipv6_zoned(value).map(|zoned| GoAddr { ipv6: true, zoned }),
        _ => None,
    }
}

/// Whether Go's `netip.ParseAddr` accepts `value`: dotted IPv4 without
/// leading zeros, or IPv6 (embedded IPv4 and a zone allowed).
pub fn is_go_ip_addr(value: &str) -> bool {
    go_parse_addr(value.as_bytes()).is_some()
}

/// Whether Go's `netip.ParsePrefix` accepts `value`: an address without a
/// zone, `/`, and a decimal length without sign or leading zero, at most 32
/// (IPv4) or 128 (IPv6). Host bits may be set (`10.0.0.1/8` is accepted).
pub fn is_go_ip_prefix(value: &str) -> bool {
    let bytes = value.as_bytes();
    let Some(slash) = bytes.iter().rposition(|b| *b == b'/') else {
        return false;
    };
    let (Some(addr), Some(bits)) = (bytes.get(..slash), bytes.get(slash + 1..)) else {
        return false;
    };
    let Some(addr) = go_parse_addr(addr) else {
        return false;
    };
    if addr.zoned
        || bits.is_empty()
        || bits.len() > 3
        || !bits.iter().all(u8::is_ascii_digit)
        || (bits.len() > 1 && bits.first() == Some(&b'0'))
    {
        return false;
    }
    let length = bits
        .iter()
        .fold(0u32, |n, digit| n * 10 + u32::from(digit - b'0'));
    length <= if addr.ipv6 { 128 } else { 32 }
}

/// A Cilium CIDR as cozystack-api accepts it: a prefix, or a bare address
/// (a single host).
pub fn is_cidr_or_ip(value: &str) -> bool {
    is_go_ip_prefix(value) || is_go_ip_addr(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_labels() {
        for ok in ["a", "tenant-foo", "0abc", &"a".repeat(63)] {
            assert!(is_dns1123_label(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
    }

    #[test]
    fn qualified_names() {
        for ok in [
            "no-delete",
            "platform.cozystack.io/no-delete",
            "a_b.c",
            "x/Y",
        ] {
            assert_eq!(check_qualified_name(ok), Ok(()), "{ok}");
        }
        let rule = "must consist of alphanumeric characters, '-', '_' or '.', and must start \
             and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
             '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        assert_eq!(
            check_qualified_name(&"a".repeat(64)).unwrap_err(),
            ["name part must be no more than 63 characters"]
        );
        assert_eq!(
            check_qualified_name("/a").unwrap_err(),
            ["prefix part must be non-empty"]
        );
        // An empty name: apimachinery reports it empty and not matching.
        assert_eq!(
            check_qualified_name("").unwrap_err(),
            [
                "name part must be non-empty".to_owned(),
                format!("name part {rule}")
            ]
        );
        assert_eq!(
            check_qualified_name("Upper.io/-a").unwrap_err(),
            [
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case \
                 alphanumeric characters, '-' or '.', and must start and end with an \
                 alphanumeric character (e.g. 'example.com', regex used for validation is \
                 '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                    .to_owned(),
                format!("name part {rule}")
            ]
        );
        assert_eq!(
            check_qualified_name("a/b/c").unwrap_err(),
            [format!(
                "a qualified name {rule} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')"
            )]
        );
        for bad in ["a/", "-a", "a b", "a."] {
            assert!(check_qualified_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn label_values() {
        for ok in ["", "true", "a-b_c.d", &"a".repeat(63)] {
            assert_eq!(check_label_value(ok), Ok(()), "{ok}");
        }
        for bad in ["-a", "a b", "é", &"a".repeat(64)] {
            assert!(check_label_value(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn go_atoi_takes_signs_and_leading_zeros() {
        assert_eq!(go_atoi("80"), Some(80));
        assert_eq!(go_atoi("+80"), Some(80));
        assert_eq!(go_atoi("0080"), Some(80));
        assert_eq!(go_atoi("-1"), Some(-1));
        assert_eq!(go_atoi("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(go_atoi("9223372036854775807"), Some(i64::MAX));
        for bad in [
            "",
            "+",
            "-",
            " 80",
            "80 ",
            "8_0",
            "0x50",
            "9223372036854775808",
            "٨٠",
        ] {
            assert_eq!(go_atoi(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn port_names_give_every_apimachinery_message() {
        for ok in ["http", "https-alt", "a1", "x", &"a".repeat(15)] {
            assert!(port_name_errors(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            port_name_errors("80-90"),
            vec!["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name_errors("HTTP"),
            vec![
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must contain at least one letter (a-z)",
            ]
        );
        assert_eq!(
            port_name_errors("-a--"),
            vec![
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen"
            ]
        );
        assert_eq!(
            port_name_errors(&"a".repeat(16)),
            vec!["must be no more than 15 characters"]
        );
    }

    #[test]
    fn ports_are_numbers_in_range_or_names() {
        for ok in ["", "1", "443", "65535", "+80", "0443", "http", "dns-tcp"] {
            assert!(port_errors(ok).is_empty(), "{ok:?}");
        }
        for out_of_range in ["0", "65536", "70000", "-1", "-0", "9223372036854775807"] {
            assert_eq!(
                port_errors(out_of_range),
                vec![PORT_RANGE_MESSAGE],
                "{out_of_range}"
            );
        }
        assert!(!port_errors("80-90").is_empty());
        assert!(!port_errors("99999999999999999999").is_empty());
        assert!(!port_errors(" 80").is_empty());
    }

    #[test]
    fn protocols_and_entities_compare_like_go() {
        for ok in ["TCP", "tcp", "Udp", "sctp", "any", "\u{17f}ctp"] {
            assert!(is_cilium_protocol(ok), "{ok}");
        }
        for bad in ["", "ICMP", "tcp ", "TCPX", "\u{fb05}"] {
            assert!(!is_cilium_protocol(bad), "{bad}");
        }
        for reserved in [
            "world",
            "WORLD",
            "Kube-ApiServer",
            "remote-node",
            "\u{130}nit",
            "\u{212a}ube-apiserver",
            "all",
        ] {
            assert!(is_reserved_cilium_entity(reserved), "{reserved}");
        }
        for free in ["worlds", "db", "", "remote_node", "hos"] {
            assert!(!is_reserved_cilium_entity(free), "{free}");
        }
        assert!(go_upper_equals("\u{131}", "I"));
        assert!(go_lower_equals("ABC", "abc"));
        assert!(!go_lower_equals("ABC", "ab"));
    }

    #[test]
    fn addresses_follow_go_netip() {
        for ok in [
            "10.0.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::",
            "::1",
            "1::",
            "2001:db8::1",
            "2001:DB8:0:0:0:0:0:1",
            "1:2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7::",
            "::ffff:1.2.3.4",
            "::1.2.3.4",
            "1:2:3:4:5:6:1.2.3.4",
            "0001:02:3::",
            "fe80::1%eth0",
            "::%x",
        ] {
            assert!(is_go_ip_addr(ok), "{ok}");
        }
        for bad in [
            "",
            "10.0.0",
            "10.0.0.1.2",
            "10.0.0.256",
            "010.0.0.1",
            "10.00.0.1",
            "10..0.1",
            ".10.0.0",
            "10.0.0.",
            "10.0.0.1 ",
            "1.2.3.4%eth0",
            "%eth0",
            "fe80::1%",
            "1:2:3:4:5:6:7:8:9",
            "1:2:3:4:5:6:7:8::",
            "::1:2:3:4:5:6:7:8",
            "1::2::3",
            ":1",
            "1:",
            ":::",
            "12345::",
            "g::",
            "1:2:3:4:5:1.2.3.4",
            "1:2:3:4:5:6:7:1.2.3.4",
            "::1.2.3.04",
            "::a.2.3.4",
            "1:2:3:4:5:6:7",
            "localhost",
            "10.0.0.0/8",
        ] {
            assert!(!is_go_ip_addr(bad), "{bad}");
        }
    }

    #[test]
    fn prefixes_follow_go_netip() {
        for ok in [
            "10.0.0.0/8",
            "10.0.0.1/8",
            "0.0.0.0/0",
            "192.168.1.0/32",
            "2001:db8::/32",
            "::/0",
            "::ffff:1.2.3.4/128",
        ] {
            assert!(is_go_ip_prefix(ok), "{ok}");
            assert!(is_cidr_or_ip(ok), "{ok}");
        }
        for bad in [
            "10.0.0.0/33",
            "2001:db8::/129",
            "10.0.0.0/",
            "10.0.0.0/08",
            "10.0.0.0/+8",
            "10.0.0.0/-1",
            "10.0.0.0/8/8",
            "10.0.0.0/ 8",
            "fe80::1%eth0/64",
            "010.0.0.0/8",
            "10.0.0.0",
            "/8",
            "10.0.0.0/1000",
        ] {
            assert!(!is_go_ip_prefix(bad), "{bad}");
        }
        assert!(is_cidr_or_ip("10.0.0.1"));
        assert!(is_cidr_or_ip("2001:db8::1"));
        // Go reads this as an address with the zone "eth0/64".
        assert!(is_cidr_or_ip("fe80::1%eth0/64"));
        for bad in ["10.0.0.0/33", "10.0.0.1/8/8", "garbage", "", "10.0.0.010"] {
            assert!(!is_cidr_or_ip(bad), "{bad}");
        }
    }
}
