//! Who runs a server on this machine. Plain http to a loopback address (`127.0.0.1:11434`,
//! `localhost:8080`) has no certificate to say whose server answers: while the user's own
//! LLM or speech server is down, any local account may listen on its port and receive the
//! dictated text, the audio, an edit's selection and the API key, and answer whatever it
//! likes. So before a request goes to such a URL, [`check_server`] looks up, in
//! `/proc/net/tcp` and `/proc/net/tcp6`, the uid of every listening socket that would take the
//! connection: on the port, at the address or a wildcard one (a `::` listener serves
//! `127.0.0.1` too, as `::ffff:127.0.0.1`). It does not connect: a connection of its own would
//! be a request the server sees. [`judge`] lets through the user's own uid, root, and system
//! accounts (below `UID_MIN` of `/etc/login.defs`, e.g. the `ollama` service user); another
//! person's account is refused, and nothing is sent. [`server_uid`] reads the owner of an
//! established connection's server end, for callers that hold one.
//!
//! Known limit: the check and the request are two moments; a server that goes away between
//! them and is replaced within that millisecond is not seen.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// `UID_MIN` when `/etc/login.defs` does not say (the common default).
pub const DEFAULT_UID_MIN: u32 = 1000;
/// TCP state `LISTEN` in `/proc/net/tcp`.
const LISTEN: u8 = 0x0A;
/// TCP state `ESTABLISHED`.
const ESTABLISHED: u8 = 0x01;

/// One row of `/proc/net/tcp` or `/proc/net/tcp6`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketRow {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub state: u8,
    pub uid: u32,
}

/// The rows of a `/proc/net/tcp` (`v6` false) or `/proc/net/tcp6` (`v6` true) text; lines
/// that cannot be read are skipped. IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) come back
/// as IPv4, so one comparison fits both files.
pub fn parse_proc_net(text: &str, v6: bool) -> Vec<SocketRow> {
    text.lines()
        .skip(1)
        .filter_map(|l| parse_row(l, v6))
        .collect()
}

fn parse_row(line: &str, v6: bool) -> Option<SocketRow> {
    let mut f = line.split_whitespace();
    let _slot = f.next()?;
    let local = parse_addr(f.next()?, v6)?;
    let remote = parse_addr(f.next()?, v6)?;
    let state = u8::from_str_radix(f.next()?, 16).ok()?;
    let _queues = f.next()?;
    let _timer = f.next()?;
    let _retransmits = f.next()?;
    let uid = f.next()?.parse().ok()?;
    Some(SocketRow {
        local,
        remote,
        state,
        uid,
    })
}

/// `0100007F:1F90` → 127.0.0.1:8080. The kernel prints each 32-bit word of the address as
/// it sits in memory (network order bytes read as a host-order number).
fn parse_addr(text: &str, v6: bool) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = ip.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = if v6 {
        if ip.len() != 32 {
            return None;
        }
        let mut bytes = [0u8; 16];
        for i in 0..4 {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
        }
        canonical(IpAddr::V6(Ipv6Addr::from(bytes)))
    } else {
        if ip.len() != 8 {
            return None;
        }
        IpAddr::V4(Ipv4Addr::from(word(0)?))
    };
    Some(SocketAddr::new(ip, port))
}

/// IPv4-mapped IPv6 as IPv4; anything else as it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

fn canonical_addr(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(canonical(a.ip()), a.port())
}

/// The uid owning the server's end of the connection `ours` (our address) → `server`: the
/// established row whose local address is the server's and whose remote is ours; failing
/// that (the row already gone), the listening row on the server's port at its address or a
/// wildcard one.
pub fn server_uid(rows: &[SocketRow], server: SocketAddr, ours: SocketAddr) -> Option<u32> {
    let (server, ours) = (canonical_addr(server), canonical_addr(ours));
    if let Some(r) = rows
        .iter()
        .find(|r| r.local == server && r.remote == ours && r.state == ESTABLISHED)
    {
        return Some(r.uid);
    }
    let listening = |exact: bool| {
        rows.iter().find(|r| {
            r.state == LISTEN
                && r.local.port() == server.port()
                && if exact {
                    r.local.ip() == server.ip()
                } else {
                    r.local.ip().is_unspecified()
                }
        })
    };
    listening(true).or_else(|| listening(false)).map(|r| r.uid)
}

/// Who a server's uid belongs to, as far as sending it our words goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// This process's own user.
    Me,
    Root,
    /// An account below `UID_MIN`: a service the administrator installed (ollama).
    System(u32),
    /// Another person's account (or one this system cannot map, e.g. 65534 in a sandbox).
    Other(u32),
}

impl Owner {
    pub fn trusted(&self) -> bool {
        !matches!(self, Owner::Other(_))
    }
}

/// The rule: our own uid, root and system accounts (`uid < uid_min`) are trusted.
pub fn judge(uid: u32, me: u32, uid_min: u32) -> Owner {
    if uid == me {
        Owner::Me
    } else if uid == 0 {
        Owner::Root
    } else if uid < uid_min {
        Owner::System(uid)
    } else {
        Owner::Other(uid)
    }
}

/// `UID_MIN` from a `login.defs` text; [`DEFAULT_UID_MIN`] when it is not set or unreadable.
pub fn uid_min_from(login_defs: &str) -> u32 {
    login_defs
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            (f.next()? == "UID_MIN").then(|| f.next()?.parse().ok())?
        })
        .next_back()
        .unwrap_or(DEFAULT_UID_MIN)
}

fn uid_min() -> u32 {
    std::fs::read_to_string("/etc/login.defs")
        .map(|t| uid_min_from(&t))
        .unwrap_or(DEFAULT_UID_MIN)
}

fn my_uid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// The account name of `uid` from `/etc/passwd`, for the message.
fn user_name(uid: u32) -> Option<String> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        let _pw = f.next()?;
        (f.next()?.parse::<u32>().ok()? == uid).then(|| name.to_string())
    })
}

/// Checks the server of `url` (`what`: "LLM server", "speech server") before anything is
/// sent to it: a plain-http loopback URL must be served by this user, root or a system
/// account. Other URLs (https, other machines) pass here: TLS and the key rules cover them.
/// Err is one line for the user: whose server it is and what to do. A server that cannot be
/// reached passes (the request itself will say so, and carries nothing anyone receives).
pub fn check_server(url: &str, what: &str) -> Result<(), String> {
    let Ok(u) = reqwest::Url::parse(url.trim()) else {
        return Ok(());
    };
    if u.scheme() != "http" || !crate::net::is_loopback_url(u.as_str()) {
        return Ok(());
    }
    let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) else {
        return Ok(());
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let Ok(addrs) = (host, port).to_socket_addrs() else {
        return Ok(());
    };
    // The addresses the HTTP client would try, each on this machine: check every listener that
    // would take a connection to one of them (a name may resolve to both 127.0.0.1 and ::1,
    // served by different users). Read from /proc alone, without connecting: a connection of
    // our own would be a request the server sees (a one-request server would be spent on it).
    let rows = proc_net_rows()?;
    for addr in addrs.filter(|a| a.ip().is_loopback() || canonical(a.ip()).is_loopback()) {
        for uid in listener_uids(&rows, addr) {
            let verdict = judge(uid, my_uid(), uid_min());
            if !verdict.trusted() {
                let who = user_name(uid)
                    .map_or_else(|| format!("uid {uid}"), |n| format!("user {n} (uid {uid})"));
                return Err(format!(
                    "the {what} at {} is run by another account, {who}, not by you, root or a system service; Dictum sent it nothing. Stop that server and start your own on that port, or set a URL of yours",
                    u.origin().ascii_serialization()
                ));
            }
            tracing::debug!(?verdict, %addr, "{what} on this machine");
        }
    }
    Ok(())
}

/// The uids of every listening socket that would take a connection to `server`: on its port,
/// at its address or a wildcard one (a `::` listener serves `127.0.0.1` too). More than one
/// (SO_REUSEPORT) means the kernel picks: all of them must be trusted.
pub fn listener_uids(rows: &[SocketRow], server: SocketAddr) -> Vec<u32> {
    let server = canonical_addr(server);
    rows.iter()
        .filter(|r| {
            r.state == LISTEN
                && r.local.port() == server.port()
                && (r.local.ip() == server.ip() || r.local.ip().is_unspecified())
        })
        .map(|r| r.uid)
        .collect()
}

/// Every row of /proc/net/tcp and tcp6; an error when neither can be read (then who runs a
/// server cannot be known, and nothing is sent).
fn proc_net_rows() -> Result<Vec<SocketRow>, String> {
    let mut rows = Vec::new();
    let mut read_any = false;
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        if let Ok(text) = std::fs::read_to_string(file) {
            read_any = true;
            rows.extend(parse_proc_net(&text, v6));
        }
    }
    if read_any {
        Ok(rows)
    } else {
        Err("cannot tell who runs servers on this machine: /proc/net/tcp cannot be read; Dictum sent nothing".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real rows in this kernel's format (`cat /proc/net/tcp`, `/proc/net/tcp6`): a root
    /// listener on 0.0.0.0:2024, the user 1000's server on 127.0.0.1:11434 with a client
    /// connected from port 43210, a `::` listener of uid 1001 on 8080 and its connection
    /// from 127.0.0.1 (IPv4-mapped in tcp6), and ::1 rows.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1076 1 0000000041681940 100 0 0 10 0                      
   1: 0100007F:2CAA 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 20734 1 000000008c7b3b9c 100 0 0 10 0                     
   2: 0100007F:2CAA 0100007F:A8CA 01 00000000:00000000 00:00000000 00000000  1000        0 20810 1 00000000b1d9e3a4 20 4 30 10 -1                    
   3: 0100007F:A8CA 0100007F:2CAA 01 00000000:00000000 00:00000000 00000000     0        0 20809 1 00000000e2a1b0c3 20 4 0 10 -1                     
";
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 30001 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:B3F0 01 00000000:00000000 00:00000000 00000000  1001        0 30002 1 0000000000000000 20 4 30 10 -1
   2: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000   113        0 30003 1 0000000000000000 100 0 0 10 0
";

    fn sa(s: &str) -> SocketAddr {
        s.parse().expect("address")
    }

    #[test]
    fn proc_net_rows_are_read_as_the_kernel_writes_them() {
        let v4 = parse_proc_net(TCP, false);
        assert_eq!(v4.len(), 4);
        assert_eq!(
            v4[0],
            SocketRow {
                local: sa("0.0.0.0:2024"),
                remote: sa("0.0.0.0:0"),
                state: LISTEN,
                uid: 0
            }
        );
        assert_eq!(v4[2].local, sa("127.0.0.1:11434"));
        assert_eq!(v4[2].remote, sa("127.0.0.1:43210"));
        assert_eq!((v4[2].state, v4[2].uid), (ESTABLISHED, 1000));
        let v6 = parse_proc_net(TCP6, true);
        assert_eq!(v6.len(), 3);
        assert_eq!(v6[0].local, sa("[::]:8080"));
        // IPv4-mapped comes back as IPv4.
        assert_eq!(v6[1].local, sa("127.0.0.1:8080"));
        assert_eq!(v6[1].remote, sa("127.0.0.1:46064"));
        assert_eq!(v6[2].local, sa("[::1]:3000"));
        assert_eq!(v6[2].uid, 113);
        // Junk is skipped, not a panic.
        assert!(parse_proc_net("header\n  0: zz:1 00:0 0A x\n\n", false).is_empty());
        assert!(parse_proc_net("header\n 0: 0100007F:1F90", false).is_empty());
    }

    #[test]
    fn the_server_end_of_our_connection_decides() {
        let mut rows = parse_proc_net(TCP, false);
        rows.extend(parse_proc_net(TCP6, true));
        // Our client at 43210 → the server's established row (uid 1000), not our own row
        // (uid 0, local = our address).
        assert_eq!(
            server_uid(&rows, sa("127.0.0.1:11434"), sa("127.0.0.1:43210")),
            Some(1000)
        );
        // A `::` listener serving 127.0.0.1: the mapped row in tcp6 names uid 1001.
        assert_eq!(
            server_uid(&rows, sa("127.0.0.1:8080"), sa("127.0.0.1:46064")),
            Some(1001)
        );
        // No established row (already gone): the listener at that address, else a wildcard.
        assert_eq!(
            server_uid(&rows, sa("127.0.0.1:11434"), sa("127.0.0.1:1")),
            Some(1000)
        );
        assert_eq!(
            server_uid(&rows, sa("127.0.0.1:8080"), sa("127.0.0.1:2")),
            Some(1001)
        );
        assert_eq!(
            server_uid(&rows, sa("[::1]:3000"), sa("[::1]:5")),
            Some(113)
        );
        assert_eq!(
            server_uid(&rows, sa("127.0.0.1:9"), sa("127.0.0.1:5")),
            None
        );
    }

    /// What `check_server` judges: every listener that would take the connection, found
    /// without connecting (a one-request server must not be spent on the check).
    #[test]
    fn the_listeners_that_would_take_the_connection_decide() {
        let mut rows = parse_proc_net(TCP, false);
        rows.extend(parse_proc_net(TCP6, true));
        assert_eq!(listener_uids(&rows, sa("127.0.0.1:11434")), vec![1000]);
        // The `::` listener of uid 1001 serves 127.0.0.1 too.
        assert_eq!(listener_uids(&rows, sa("127.0.0.1:8080")), vec![1001]);
        assert_eq!(listener_uids(&rows, sa("[::1]:3000")), vec![113]);
        assert!(listener_uids(&rows, sa("127.0.0.1:9")).is_empty());
    }

    #[test]
    fn own_root_and_system_accounts_pass_other_people_do_not() {
        assert_eq!(judge(1000, 1000, 1000), Owner::Me);
        assert_eq!(judge(0, 1000, 1000), Owner::Root);
        assert_eq!(judge(0, 0, 1000), Owner::Me);
        assert_eq!(judge(113, 1000, 1000), Owner::System(113));
        assert_eq!(judge(999, 1000, 1000), Owner::System(999));
        assert!(!judge(1001, 1000, 1000).trusted());
        assert!(
            !judge(1000, 0, 1000).trusted(),
            "root's Dictum, a user's server"
        );
        assert!(
            !judge(65534, 1000, 1000).trusted(),
            "an unmapped uid is not known"
        );
        // UID_MIN from login.defs.
        assert_eq!(uid_min_from("UID_MIN\t\t\t 1000\n#UID_MIN 5\n"), 1000);
        assert_eq!(uid_min_from("UID_MIN 500\nSYS_UID_MIN 100\n"), 500);
        assert_eq!(uid_min_from("# nothing\n"), DEFAULT_UID_MIN);
        assert!(judge(600, 1000, 500) == Owner::Other(600));
    }

    #[test]
    fn this_machines_tables_parse_and_our_own_server_passes() {
        // A real server of ours on an ephemeral port, checked through the real /proc.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let url = format!("http://127.0.0.1:{port}/v1");
        assert_eq!(check_server(&url, "LLM server"), Ok(()));
        let rows = parse_proc_net(
            &std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp"),
            false,
        );
        assert!(
            rows.iter()
                .any(|r| r.local.port() == port && r.state == LISTEN && r.uid == my_uid()),
            "our listener in /proc/net/tcp: {rows:?}"
        );
        // Not loopback, not http, nothing listening: nothing to check here.
        drop(listener);
        assert_eq!(check_server(&url, "LLM server"), Ok(()));
        assert_eq!(check_server("https://127.0.0.1:1/", "x"), Ok(()));
        assert_eq!(check_server("http://192.0.2.1:1/", "x"), Ok(()));
    }
}
