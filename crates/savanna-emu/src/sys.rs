//! The few system calls the router needs: TUN devices (Linux `Documentation/networking/
//! tuntap.rst`: `/dev/net/tun`, `TUNSETIFF` with `IFF_TUN | IFF_NO_PI`, so each read or
//! write is one bare IP packet), the monotonic clock, a precise sleep-or-wait (`ppoll` with
//! a nanosecond timeout and a 1 ns timer slack) and the process's CPU time.

use std::io;

pub const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Open a TUN device named `name` (non-blocking); returns its file descriptor. The device
/// lives as long as the descriptor (it is not made persistent), so it vanishes with the
/// router, however the router ends.
pub fn open_tun(name: &str) -> io::Result<i32> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "device name too long"));
    }
    // SAFETY: plain libc calls on a path and a zeroed, correctly sized ifreq.
    unsafe {
        let fd = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        if libc::ioctl(fd, TUNSETIFF as _, &mut req as *mut IfReq) < 0 {
            let e = io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        Ok(fd)
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the clock Python's `time.monotonic_ns` reads).
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ask the kernel to wake us at the exact time we ask (the default timer slack is 50 us).
pub fn precise_timers() {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Wait until one of `fds` is readable or `timeout_ns` passed (None: no limit). Returns
/// the number of ready descriptors (0 on timeout or signal).
pub fn wait(fds: &mut [libc::pollfd], timeout_ns: Option<u64>) -> usize {
    let ts;
    let tp = match timeout_ns {
        Some(t) => {
            ts = libc::timespec { tv_sec: (t / 1_000_000_000) as _, tv_nsec: (t % 1_000_000_000) as _ };
            &ts as *const libc::timespec
        }
        None => std::ptr::null(),
    };
    // SAFETY: fds is a valid slice of pollfd; tp is null or points to a live timespec.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as _, tp, std::ptr::null()) };
    r.max(0) as usize
}

/// Read one packet; None when nothing is waiting.
#[inline]
pub fn read_pkt(fd: i32, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: buf is a valid writable buffer of the given length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    (n > 0).then_some(n as usize)
}

/// Write one packet; false if the kernel refused it.
#[inline]
pub fn write_pkt(fd: i32, buf: &[u8]) -> bool {
    // SAFETY: buf is a valid readable buffer of the given length.
    let n = unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, buf.len()) };
    n == buf.len() as isize
}

/// User + system CPU time of this process, ns.
pub fn cpu_ns() -> u64 {
    // SAFETY: getrusage fills the struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Set by SIGINT / SIGTERM; the main loop checks it.
pub static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Route SIGINT, SIGTERM and SIGHUP to `STOP` (the router then writes its records and exits),
/// and ask for SIGTERM when the parent process dies.
pub fn catch_signals() {
    // SAFETY: installing an async-signal-safe handler (one atomic store).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
        // The orchestrator's death (even by SIGKILL) stops the router too.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0);
    }
}

/// Run the router under SCHED_FIFO at `prio` so that it wakes on time on a busy machine
/// (the kernel's RT throttling still leaves 5% of each CPU to others). Returns false when
/// the kernel refused.
pub fn realtime(prio: i32) -> bool {
    let p = libc::sched_param { sched_priority: prio };
    // SAFETY: sched_setscheduler on this process with a valid param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}
