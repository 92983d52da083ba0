//! UDP socket buffers sized for the emulated path, and the kernel's count of what it dropped.
//!
//! Linux gives a UDP socket about 208 KiB of receive buffer by default. A peer that sends in
//! bursts (picoquic, a large pacing quantum, a 250 Mbit/s link) overflows that before the
//! relay's thread reads it, and the kernel drops the datagrams silently: they never reach the
//! path model, so no link counter sees them. Every emulator socket is therefore sized from
//! the path ([`buffer_bytes_for`]), the size the kernel actually granted is checked, and the
//! kernel's per-socket drop counter (the `drops` column of `/proc/net/udp`) is read back so
//! that every datagram is either delivered or counted.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

/// Smallest buffer asked for, bytes: far above the kernel default, enough for thousands of
/// full-size datagrams at once.
pub const MIN_SOCKET_BUFFER_BYTES: usize = 8 << 20;

/// Largest buffer asked for, bytes: memory per socket stays bounded whatever the path.
pub const MAX_SOCKET_BUFFER_BYTES: usize = 256 << 20;

/// Bandwidth-delay products of the fastest link a socket must hold while its reader is late.
pub const SOCKET_BUFFER_BDPS: u64 = 4;

/// The buffer for a socket on a path whose fastest link runs at `max_rate_bps` with round-trip
/// time `rtt`: [`SOCKET_BUFFER_BDPS`] BDPs, within [`MIN_SOCKET_BUFFER_BYTES`] and
/// [`MAX_SOCKET_BUFFER_BYTES`].
pub fn buffer_bytes_for(max_rate_bps: u64, rtt: Duration) -> usize {
    let bdp = netsim::bdp_bytes(max_rate_bps, rtt);
    let wanted = usize::try_from(bdp.saturating_mul(SOCKET_BUFFER_BDPS)).unwrap_or(usize::MAX);
    wanted.clamp(MIN_SOCKET_BUFFER_BYTES, MAX_SOCKET_BUFFER_BYTES)
}

/// What the kernel granted to one socket, bytes (as usable payload: Linux reports twice the
/// requested value to account for its bookkeeping, and that doubling is removed here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granted {
    /// Receive buffer.
    pub receive_bytes: usize,
    /// Send buffer.
    pub send_bytes: usize,
}

impl Granted {
    /// Whether both buffers are at least `bytes`.
    pub fn covers(&self, bytes: usize) -> bool {
        self.receive_bytes >= bytes && self.send_bytes >= bytes
    }
}

/// Asks for `bytes` of receive and send buffer on `socket`. The plain options are capped by
/// `net.core.rmem_max` / `wmem_max`; as root the FORCE variants lift the cap. Returns what
/// the kernel granted; the caller warns when it is less than asked.
pub fn size(socket: &UdpSocket, bytes: usize) -> io::Result<Granted> {
    let sock = socket2::SockRef::from(socket);
    sock.set_recv_buffer_size(bytes)?;
    sock.set_send_buffer_size(bytes)?;
    let mut granted = granted(socket)?;
    if !granted.covers(bytes) {
        let value = i32::try_from(bytes).unwrap_or(i32::MAX) as usize;
        // Fails without CAP_NET_ADMIN; the plain size stays then.
        let _ =
            nix::sys::socket::setsockopt(socket, nix::sys::socket::sockopt::RcvBufForce, &value);
        let _ =
            nix::sys::socket::setsockopt(socket, nix::sys::socket::sockopt::SndBufForce, &value);
        granted = granted_or(socket, granted);
    }
    Ok(granted)
}

fn granted(socket: &UdpSocket) -> io::Result<Granted> {
    let sock = socket2::SockRef::from(socket);
    Ok(Granted {
        receive_bytes: sock.recv_buffer_size()? / 2,
        send_bytes: sock.send_buffer_size()? / 2,
    })
}

fn granted_or(socket: &UdpSocket, fallback: Granted) -> Granted {
    granted(socket).unwrap_or(fallback)
}

/// Sizes `socket` for `bytes` and prints a warning naming `what` when the kernel granted less.
pub fn size_or_warn(socket: &UdpSocket, bytes: usize, what: &str) -> Granted {
    match size(socket, bytes) {
        Ok(granted) => {
            if !granted.covers(bytes) {
                eprintln!(
                    "warning: {what}: asked for {bytes} B of socket buffer, the kernel granted {} B receive / {} B send (raise net.core.rmem_max / wmem_max or run as root); bursts may be dropped by the kernel, and are counted",
                    granted.receive_bytes, granted.send_bytes
                );
            }
            granted
        }
        Err(e) => {
            eprintln!("warning: {what}: cannot size the socket buffers: {e}");
            Granted {
                receive_bytes: 0,
                send_bytes: 0,
            }
        }
    }
}

/// The socket's inode, which identifies it in `/proc/net/udp`.
fn inode(socket: &UdpSocket) -> io::Result<u64> {
    Ok(std::fs::metadata(format!("/proc/self/fd/{}", socket.as_raw_fd()))?.ino())
}

/// Datagrams the kernel dropped on arrival at `socket` because its receive buffer was full
/// (or for another reason the kernel counts per socket): the last column of its line in
/// `/proc/net/udp` or `/proc/net/udp6`. `None` where the kernel does not expose it.
pub fn kernel_drops(socket: &UdpSocket) -> Option<u64> {
    let inode = inode(socket).ok()?;
    ["/proc/net/udp", "/proc/net/udp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .find_map(|table| drops_of(&table, inode))
}

/// The `drops` of the line for `inode` in a `/proc/net/udp`-format table.
fn drops_of(table: &str, inode: u64) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl local rem st tx:rx tr:tm retrnsmt uid timeout inode ref pointer drops
        (fields.len() >= 13 && fields[9].parse::<u64>().ok() == Some(inode))
            .then(|| fields[12].parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_scale_with_the_path_within_bounds() {
        let ms = Duration::from_millis;
        // 10 Mbit/s × 600 ms = 750 kB; 4 BDPs = 3 MB → the 8 MiB floor.
        assert_eq!(
            buffer_bytes_for(10_000_000, ms(600)),
            MIN_SOCKET_BUFFER_BYTES
        );
        // 250 Mbit/s × 650 ms = 20.3 MB; 4 BDPs = 81.25 MB.
        assert_eq!(buffer_bytes_for(250_000_000, ms(650)), 81_250_000);
        // 10 Gbit/s × 600 ms → the cap.
        assert_eq!(
            buffer_bytes_for(10_000_000_000, ms(600)),
            MAX_SOCKET_BUFFER_BYTES
        );
    }

    #[test]
    fn the_drops_column_is_read_by_inode() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
   12: 0100007F:115C 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4242 2 0000000000000000 17\n\
   13: 0100007F:115D 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4343 2 0000000000000000 0\n";
        assert_eq!(drops_of(table, 4242), Some(17));
        assert_eq!(drops_of(table, 4343), Some(0));
        assert_eq!(drops_of(table, 1), None);
    }

    #[test]
    fn a_live_socket_is_found_and_sized() {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert_eq!(kernel_drops(&socket), Some(0));
        let granted = size(&socket, 1 << 20).unwrap();
        // Unprivileged hosts may cap it at rmem_max; never below the kernel's default.
        assert!(granted.receive_bytes >= 100_000, "{granted:?}");
    }
}
