"""``savanna emulate``: real Linux TCP through Savanna's own queue disciplines.

Every host of the scenario gets a network namespace and a TUN device; the userspace router
``savanna-router`` (crates/savanna-emu, Rust) owns the other end of every device and carries
packets over the scenario's links with the core's disciplines, classifiers, rates and
delays. This module orchestrates a run: it checks the host, maps ``[tcp]`` onto kernel
settings of each namespace (per-route ``initcwnd``/``rto_min``/``quickack``, per-namespace
sysctls, per-socket ``TCP_CONGESTION``/``TCP_WINDOW_CLAMP``), opens real sockets at each
flow's start (one event loop; sockets are created inside a host's namespace with
``setns``), reads ``TCP_INFO``, writes ``flows.parquet``/``queues.parquet``/``summary.json``
with the simulator's columns, and tears everything down on exit, error and Ctrl-C.
docs/emulate.md has the mapping table and the limits.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import heapq
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from savanna._core import ScenarioError

PORT = 5001
CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/var/run/netns")
NS_PREFIX = "sve"
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
# Any cap but ~0 marks the socket as needing pacing (sk_pacing_status), so TCP paces itself
# at its own rate (tcp_update_pacing_rate: 2 or 1.2 x cwnd / srtt) without an fq qdisc;
# 0xfffffffe bytes/s (34 Gb/s) never binds.
PACING_CAP = struct.pack("I", 0xFFFFFFFE)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
CHUNK = 1 << 16
_ZEROS = memoryview(bytes(CHUNK))
# Writes are whole multiples of the MSS, so that every data packet is full size, as in the
# simulator (a 64 KiB write would end in a short segment every 44 packets).

# Kernel TCP settings every namespace gets, whatever the scenario: fresh metrics for every
# connection (no cached ssthresh/RTT between flows, as in the simulator) and IPv6 off (no
# router solicitations on the emulated links).
BASE_SYSCTLS = {
    "net/ipv4/tcp_no_metrics_save": "1",
    "net/ipv6/conf/all/disable_ipv6": "1",
    "net/ipv6/conf/default/disable_ipv6": "1",
}


def _err(field: str, msg: str) -> ScenarioError:
    return ScenarioError(f"{field}: {msg}" if field else msg)


# ---------------------------------------------------------------------------------------
# Host checks, the router binary


def check_host() -> None:
    """Clear errors (exit 2) when emulation cannot run here."""
    if os.geteuid() != 0:
        raise _err("", "savanna emulate needs root (network namespaces and TUN devices)")
    if not os.path.exists("/dev/net/tun"):
        raise _err("", "savanna emulate needs TUN devices: /dev/net/tun is missing (modprobe tun)")
    if not os.path.exists("/proc/self/ns/net"):
        raise _err("", "savanna emulate needs network namespaces (kernel without CONFIG_NET_NS)")
    if shutil.which("ip") is None:
        raise _err("", "savanna emulate needs the 'ip' command (iproute2)")


def router_binary() -> Path:
    """The router: $SAVANNA_ROUTER, the repository's target/release build (built on demand
    with cargo), or savanna-router on PATH."""
    env = os.environ.get("SAVANNA_ROUTER")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    built = repo / "target" / "release" / "savanna-router"
    if (repo / "crates" / "savanna-emu").is_dir() and shutil.which("cargo"):
        r = subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "savanna-emu"], cwd=repo, capture_output=True, text=True
        )
        if r.returncode != 0:
            raise RuntimeError(f"building savanna-router failed:\n{r.stderr[-2000:]}")
    if built.is_file():
        return built
    on_path = shutil.which("savanna-router")
    if on_path:
        return Path(on_path)
    raise RuntimeError("savanna-router not found: run `make build` or set SAVANNA_ROUTER")


def _router_cmd(router: Path, scen: Path, base_dir: Path, fmt: str, seed, duration_s) -> list[str]:
    cmd = [str(router), "?", str(scen), "--base-dir", str(base_dir), "--format", fmt]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if duration_s is not None:
        cmd += ["--duration", repr(float(duration_s))]
    return cmd


def load_plan(router: Path, scen: Path, base_dir: Path, fmt: str, seed=None, duration_s=None) -> dict:
    cmd = _router_cmd(router, scen, base_dir, fmt, seed, duration_s)
    cmd[1] = "plan"
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 2:
        raise ScenarioError(r.stderr.strip().removeprefix("error: "))
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)


# ---------------------------------------------------------------------------------------
# [tcp] -> kernel


@dataclass
class KernelSettings:
    """What the scenario's TCP settings become in the kernel."""

    sysctls: dict[str, str]
    route_opts: list[str]
    cc: str
    window_clamp: int
    request_payload: int
    approximations: list[str] = field(default_factory=list)
    # Senders ask for Linux's internal pacing (SO_MAX_PACING_RATE; there is no fq qdisc).
    pacing: bool = False

    def table(self) -> dict:
        return {
            "sysctls": self.sysctls,
            "route": " ".join(self.route_opts),
            "congestion_control": self.cc,
            "window_clamp_bytes": self.window_clamp,
            "approximations": self.approximations,
            "pacing": self.pacing,
        }


# Keys every block must agree on: they are set per namespace or per route.
_NS_KEYS = (
    "variant",
    "handshake",
    "ito_s",
    "min_rto_s",
    "max_rto_s",
    "init_cwnd",
    "max_window",
    "init_ssthresh",
    "delayed_ack",
    "delack_timeout_s",
    "ecn",
    "dupack_threshold",
    "rtt_sampling",
    "restart_rto_on_fast_retransmit",
    "request_bytes",
    "sack",
    "dsack",
    "recovery_rate",
    "tick_s",
    "rack",
    "handshake_ack",
    "ect1",
    "pacing",
    "pacing_burst",
    "pacing_autosize",
    "slow_start_increase",
    "abc_limit",
    "partial_ack_timer",
    "nosack_recovery_rate",
)


def kernel_settings(plan: dict, *, cc: str | None = None, sack: bool = False, approx: bool = False) -> KernelSettings:
    """Map ``[tcp]`` onto Linux; raise ScenarioError naming the field for what Linux cannot
    honour (or, with ``approx``, record the approximation instead)."""
    cfgs = plan["tcp"]
    blocks = plan["blocks"]
    used = sorted({b["tcp"] for b in blocks}) or [0]
    base = cfgs[used[0]]

    def where(key: str, cfg_index: int) -> str:
        for i, b in enumerate(blocks):
            if b["tcp"] == cfg_index and cfg_index != 0:
                return f"traffic[{i}].tcp.{key}"
        return f"tcp.{key}"

    for ci in used[1:]:
        for k in _NS_KEYS:
            if cfgs[ci][k] != base[k]:
                raise _err(
                    where(k, ci),
                    "emulate sets this per namespace or per route, so every traffic block must use the same value",
                )
    field0 = used[0]
    approximations: list[str] = []

    def cannot(key: str, msg: str) -> None:
        if approx:
            approximations.append(f"{where(key, field0)}: {msg}")
        else:
            raise _err(where(key, field0), msg + " (pass --approx to run with Linux's behaviour instead)")

    hdr, pkt = plan["header_bytes"], plan["packet_bytes"]
    mss = pkt - hdr
    sysctls = dict(BASE_SYSCTLS)
    if hdr == 40:
        sysctls["net/ipv4/tcp_timestamps"] = "0"
    elif hdr == 52:
        sysctls["net/ipv4/tcp_timestamps"] = "1"
    else:
        raise _err(
            "header_bytes",
            f"emulate needs 40 (IPv4 + TCP, timestamps off) or 52 (timestamps on); "
            f"Linux cannot make {hdr}-byte headers",
        )
    if not 576 <= pkt <= 2000:
        raise _err("packet_bytes", f"emulate sets it as the devices' MTU: 576 to 2000, not {pkt}")
    # The scenario's `sack` (or the caller's `sack`, to run Linux with SACK against a
    # simulation without); with SACK Linux recovers at PRR's rate, always.
    sack = sack or base["sack"]
    sysctls["net/ipv4/tcp_sack"] = "1" if sack else "0"
    sysctls["net/ipv4/tcp_dsack"] = "1" if sack and (base["dsack"] or not base["sack"]) else "0"
    if base["sack"] and base["recovery_rate"] != "prr":
        cannot("recovery_rate", "Linux recovers at PRR's rate (RFC 6937) with SACK; RFC 6675's rate is not offered")
    if base["handshake"] and not base["handshake_ack"]:
        cannot("handshake_ack", "Linux's client always sends the pure ACK that completes the handshake")
    if base["ect1"]:
        cannot("ect1", "this kernel's TCP senders mark ECT(0); it has no L4S (ECT(1)) sender")
    if base["tick_s"] > 0:
        cannot("tick_s", "Linux measures RTTs in microseconds; it has no coarse clock tick")
    # Without SACK Linux runs NewReno-style recovery (with PRR); RACK, tail loss probes and
    # F-RTO are switched off so recovery is the RFC 6582 kind the simulator models.
    if not sack:
        sysctls["net/ipv4/tcp_recovery"] = "0"
        sysctls["net/ipv4/tcp_early_retrans"] = "0"
        sysctls["net/ipv4/tcp_frto"] = "0"
    elif base["sack"] and not base["rack"]:
        # RFC 6675 recovery without RACK-TLP (the `rfc` profile): Linux's RACK and tail
        # loss probes off, DupThresh detection as the simulator's.
        sysctls["net/ipv4/tcp_recovery"] = "0"
        sysctls["net/ipv4/tcp_early_retrans"] = "0"
    if not sack and base["partial_ack_timer"] == "first":
        approximations.append(
            "tcp.partial_ack_timer: Linux re-arms the RTO on every ACK of new data (RFC 6582's "
            'Slow-but-Steady, partial_ack_timer = "every"); the scenario resets it on the first partial ACK only'
        )
    if not sack and base.get("nosack_recovery_rate", "inflation") == "inflation":
        approximations.append(
            "tcp.nosack_recovery_rate: Linux recovers without SACK at PRR's rate (RFC 6937, duplicate ACKs "
            'counted as delivered, nosack_recovery_rate = "prr"); the scenario inflates the window as RFC 6582'
        )
    # Slow start: Linux's tcp_slow_start adds every segment an ACK covers, up to ssthresh
    # (RFC 3465 without a limit), slow_start_increase = "acked" with no abc_limit. RFC 5681's
    # one segment per ACK, or a limit L, differ from it whenever an ACK covers more segments:
    # under delayed ACKs, and with an ACK per segment after a retransmission fills a hole
    # (the cumulative ACK covers what the receiver held; docs/emulate.md, traced).
    limit = base["abc_limit"]
    if base["slow_start_increase"] != "acked" or limit is not None:
        approximations.append(
            "tcp.slow_start_increase: Linux's slow start adds every segment an ACK covers "
            '(tcp_slow_start, slow_start_increase = "acked" without abc_limit); the scenario counts '
            + ("one per ACK" if limit is None else f"at most {limit} per ACK")
        )
    # Paced chunks: Linux sizes each paced chunk as tcp_tso_autosize does, at least
    # tcp_min_tso_segs segments (per namespace): pacing_burst sets that minimum.
    if base["pacing"]:
        sysctls["net/ipv4/tcp_min_tso_segs"] = str(base["pacing_burst"])
        if not base["pacing_autosize"]:
            approximations.append(
                "tcp.pacing_autosize: Linux grows its paced chunks with the rate (tcp_tso_autosize, "
                "about 1 ms of data); the scenario keeps them at pacing_burst packets"
            )
    sysctls["net/ipv4/tcp_ecn"] = "1" if base["ecn"] else "0"
    sysctls["net/ipv4/tcp_reordering"] = str(base["dupack_threshold"])
    max_rto_ms = round(base["max_rto_s"] * 1000)
    if not 1000 <= max_rto_ms <= 120000:
        cannot("max_rto_s", "Linux's tcp_rto_max_ms takes 1 to 120 s")
    else:
        sysctls["net/ipv4/tcp_rto_max_ms"] = str(max_rto_ms)

    variant = base["variant"]
    if cc is None and variant in ("cubic", "dctcp"):
        # The simulator's cc = "cubic" / "dctcp" are Linux's modules of the same names.
        cc = variant
    if cc is None:
        if variant != "newreno":
            cannot(
                "variant", f"Linux has no '{variant}' loss recovery; its 'reno' is NewReno (use variant = 'newreno')"
            )
        cc = "reno"
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    if cc not in available:
        raise _err("--cc", f"the kernel offers {', '.join(available)}; not '{cc}'")
    if not base["handshake"]:
        cannot("handshake", "Linux TCP always opens with a handshake")
    if abs(base["ito_s"] - 1.0) > 1e-9:
        cannot("ito_s", f"Linux's initial RTO is fixed at 1 s (TCP_TIMEOUT_INIT); cannot use {base['ito_s']} s")
    if base["rtt_sampling"] != "every_ack":
        cannot("rtt_sampling", "Linux samples the RTT on every ACK")
    if not base["restart_rto_on_fast_retransmit"]:
        cannot("restart_rto_on_fast_retransmit", "Linux restarts the RTO timer on a fast retransmit")
    if base["init_ssthresh"] < base["max_window"]:
        cannot("init_ssthresh", "Linux starts with an unbounded ssthresh; only init_ssthresh >= max_window matches it")
    min_rto_ms = base["min_rto_s"] * 1000
    if min_rto_ms < 1 or abs(min_rto_ms - round(min_rto_ms)) > 1e-6:
        cannot("min_rto_s", "the route's rto_min is whole milliseconds, at least 1 ms")
    route = [
        "initcwnd",
        str(base["init_cwnd"]),
        "initrwnd",
        str(max(base["max_window"], base["init_cwnd"])),
        "rto_min",
        f"{max(1, round(min_rto_ms))}ms",
    ]
    if base["delayed_ack"]:
        # Linux's timer adapts between TCP_DELACK_MIN (40 ms) and TCP_DELACK_MAX (200 ms);
        # a scenario asking for either end gets Linux's adaptive timer.
        if min(abs(base["delack_timeout_s"] - 0.2), abs(base["delack_timeout_s"] - 0.04)) > 1e-9:
            cannot(
                "delack_timeout_s",
                "Linux's delayed-ACK timer adapts between 40 and 200 ms; it cannot be set (0.04 or 0.2 map onto it)",
            )
        approximations.append(
            f"tcp.delayed_ack: Linux's delayed ACKs (quick-ack at connection start, timer 40-200 ms) "
            f"stand for the scenario's ({base['delack_timeout_s'] * 1000:g} ms timer)"
        )
    else:
        route += ["quickack", "1"]
    approximations.append("tcp.granularity_s: Linux computes the RTO with its own clock (microseconds) and rules")
    approximations.append(f"tcp.max_window: TCP_WINDOW_CLAMP of {base['max_window']} x {mss} bytes on data receivers")
    # The simulator's sender always has the rest of its flow to send. Linux's keeps what the
    # application wrote in the send buffer until it is acknowledged, out-of-order data
    # included; autotuned from cwnd (tcp_sndbuf_expand, not grown while cwnd-limited), the
    # buffer fills during a long NewReno recovery and new data stops (docs/emulate.md, "The
    # two reno gaps, traced"). Every socket starts with a buffer holding twice the window
    # cap at 4 KB a segment (skb truesize), at least Linux's 4 MB maximum, at most 256 MB.
    snd = min(max(4 << 20, 2 * base["max_window"] * 4096), 256 << 20)
    sysctls["net/ipv4/tcp_wmem"] = f"4096 {snd} {snd}"
    req = base["request_bytes"] - hdr
    return KernelSettings(
        sysctls=sysctls,
        route_opts=route,
        cc=cc,
        window_clamp=base["max_window"] * mss,
        request_payload=max(1, req),
        approximations=approximations,
        pacing=bool(base["pacing"]),
    )


# ---------------------------------------------------------------------------------------
# Namespaces


_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"setns: {os.strerror(e)}")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


def list_netns() -> list[str]:
    r = _ip("netns", "list", check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def cleanup_stale() -> list[str]:
    """Delete namespaces left by emulation runs whose process is gone (a SIGKILLed run)."""
    gone = []
    for ns in list_netns():
        if ns.startswith(NS_PREFIX) and "-" in ns:
            pid = ns[len(NS_PREFIX) :].split("-")[0]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                _ip("netns", "del", ns, check=False)
                gone.append(ns)
    return gone


class Namespaces:
    """The run's namespaces: one for the router, one per host. Deleted by ``close``."""

    def __init__(self, hosts: list[dict]):
        self.prefix = f"{NS_PREFIX}{os.getpid()}-"
        self.router = self.prefix + "r"
        self.host_ns = {h["name"]: f"{self.prefix}{i}" for i, h in enumerate(hosts)}
        self.created: list[str] = []
        self.fds: dict[str, int] = {}
        self.home = os.open("/proc/self/ns/net", os.O_RDONLY)

    def create(self) -> None:
        for ns in [self.router, *self.host_ns.values()]:
            _ip("netns", "add", ns)
            self.created.append(ns)
            self.fds[ns] = os.open(NETNS_DIR / ns, os.O_RDONLY)

    def enter(self, ns: str) -> None:
        _setns(self.fds[ns])

    def leave(self) -> None:
        _setns(self.home)

    def write_sysctls(self, ns: str, values: dict[str, str]) -> None:
        # /proc/sys/net is the namespace of the process that opens the file.
        self.enter(ns)
        try:
            for k, v in values.items():
                p = Path("/proc/sys") / k
                if p.exists():
                    p.write_text(v)
        finally:
            self.leave()

    def read_sysctl(self, ns: str, key: str) -> str:
        self.enter(ns)
        try:
            return (Path("/proc/sys") / key).read_text().strip()
        finally:
            self.leave()

    def tcp_counters(self) -> dict[str, int]:
        """The kernel's TCP counters (``/proc/net/snmp`` Tcp, ``/proc/net/netstat`` TcpExt:
        HyStart exits, loss probes, recoveries, timeouts, ...) summed over the host
        namespaces; zeros left out. Each namespace starts at zero, so these are the run's."""
        total: dict[str, int] = {}
        for h in self.host_ns.values():
            self.enter(h)
            try:
                for name in ("snmp", "netstat"):
                    lines = Path(f"/proc/thread-self/net/{name}").read_text().splitlines()
                    for keys, vals in zip(lines[::2], lines[1::2]):
                        kind, *ks = keys.split()
                        if kind not in ("Tcp:", "TcpExt:"):
                            continue
                        for k, v in zip(ks, vals.split()[1:]):
                            if k not in ("RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn", "CurrEstab"):
                                total[kind[:-1] + k] = total.get(kind[:-1] + k, 0) + int(v)
            finally:
                self.leave()
        return {k: v for k, v in sorted(total.items()) if v}

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.leave()
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()
        for ns in self.created:
            _ip("netns", "del", ns, check=False)
        self.created.clear()
        os.close(self.home)
        self.home = -1


# ---------------------------------------------------------------------------------------
# Traffic


@dataclass
class Flow:
    fid: int
    block: int
    src: str
    dst: str
    size_pkts: int | None
    base_rtt: float
    mode: str
    session: tuple[int, int] | None = None  # (session index, connection number)
    t_syn: int = 0
    t_write: int | None = None  # the data sender's first write
    t_end: int | None = None
    got: int = 0
    req_got: int = 0
    sent: int = 0
    key: tuple[str, int] | None = None
    info: dict = field(default_factory=dict)
    socks: list = field(default_factory=list)


def receiver_window(sock: socket.socket, clamp: int) -> None:
    """Cap the window a data receiver advertises at ``clamp`` bytes (the scenario's
    max_window). A fixed receive buffer (4 x clamp, set as root past rmem_max) stops the
    kernel's autotuning, which would otherwise raise the clamp; set before listen/connect
    so the window scale fits. The kernel still overwrites the clamp once, on the first
    full-sized segment (``keep_window_clamp``)."""
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 4 * clamp)
    sock.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, clamp)


def keep_window_clamp(sock: socket.socket, clamp: int) -> None:
    """Put the window clamp back if the kernel raised it. Since Linux 6.6
    ``tcp_measure_rcv_mss`` sets ``window_clamp`` from the receive buffer (times the
    measured payload/truesize ratio) whenever that ratio changes, which it does on the first
    full-sized segment, overwriting TCP_WINDOW_CLAMP even on a locked buffer: with a buffer
    of 4 x clamp the window then grows to the 16-bit field's limit (65535 << wscale), e.g.
    179 instead of 128 segments of 1460 bytes. The receiving application calls this on
    every read; the ratio changes only when a segment longer than any before arrives, so
    after the first read the clamp stays put (the window advertised in between can run at
    most a few segments past the clamp, for one round trip)."""
    if sock.getsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP) != clamp:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, clamp)


def tcp_info(sock: socket.socket) -> dict:
    """Counters from TCP_INFO (linux/tcp.h): total_retrans, srtt, data_segs_out and, on
    kernels that have it (6.7+), total_rto."""
    try:
        b = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256)
    except OSError:
        return {}
    out = {}
    if len(b) >= 104:
        out["total_retrans"] = struct.unpack_from("I", b, 100)[0]
        out["rtt_us"] = struct.unpack_from("I", b, 68)[0]
    if len(b) >= 160:
        out["data_segs_out"] = struct.unpack_from("I", b, 156)[0]
    if len(b) >= 236:
        out["snd_wnd"], out["rcv_wnd"] = struct.unpack_from("II", b, 228)
        out["snd_cwnd"] = struct.unpack_from("I", b, 80)[0]
    if len(b) >= 244:
        out["total_rto"] = struct.unpack_from("H", b, 240)[0]
    return out


class Traffic:
    """One event loop for every flow of the run, in every namespace."""

    def __init__(self, plan: dict, ns: Namespaces, ks: KernelSettings, t0_ns: int, duration_s: float, progress):
        self.plan, self.ns, self.ks, self.t0 = plan, ns, ks, t0_ns
        self.mss = plan["packet_bytes"] - plan["header_bytes"]
        self.duration_ns = int(duration_s * 1e9)
        self.sel = selectors.DefaultSelector()
        self.ip = {h["name"]: h["ip"] for h in plan["hosts"]}
        self.flows: list[Flow] = []
        self.by_key: dict[tuple[str, int], Flow] = {}
        self.timers: list = []
        self.seq = 0
        self.listeners: list[socket.socket] = []
        self.progress = progress
        self.finished = 0
        self.buf = bytearray(1 << 18)
        self.chunk = (CHUNK // self.mss) * self.mss
        sampling = plan.get("sampling") or {}
        self.gp_ns = int(sampling.get("interval_s", 0) * 1e9)
        self.gp_next = self.gp_ns
        self.gp_seen: dict[int, int] = {}
        self.goodput: list[tuple[float, int, int]] = []
        self.sessions = plan["sessions"]
        self.closed = False

    def now(self) -> int:
        return time.monotonic_ns() - self.t0

    def at(self, t_ns: int, fn, *args) -> None:
        self.seq += 1
        heapq.heappush(self.timers, (t_ns, self.seq, fn, args))

    def listen(self) -> None:
        for name, nsname in self.ns.host_ns.items():
            self.ns.enter(nsname)
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                # Accepted sockets inherit the listener's congestion control: without this
                # a responder's data would run the namespace default (the host's, e.g. bbr).
                s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, self.ks.cc.encode())
                if self.ks.pacing:  # accepted sockets inherit it, for responders' data
                    s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, PACING_CAP)
                receiver_window(s, self.ks.window_clamp)
                s.bind((self.ip[name], PORT))
                s.listen(4096)
            finally:
                self.ns.leave()
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ, ("accept", None))
            self.listeners.append(s)

    def schedule(self) -> None:
        # Starts at the same instant go in block order, as the simulator numbers them.
        todo = [(int(f["t"] * 1e9), f["block"], i, 0) for i, f in enumerate(self.plan["flows"])]
        todo += [(int(s["start_s"] * 1e9), s["block"], k, 1) for k, s in enumerate(self.sessions)]
        for t, _, i, is_session in sorted(todo):
            if is_session:
                self.at(t, self.session_next, i, 0)
            else:
                f = self.plan["flows"][i]
                self.at(t, self.start, f["block"], f["src"], f["dst"], f["size_pkts"], f["base_rtt_s"], None)

    def session_next(self, k: int, n: int) -> None:
        s = self.sessions[k]
        if n >= len(s["sizes"]) or self.now() >= s["stop_s"] * 1e9:
            return
        self.start(s["block"], s["src"], s["dst"], s["sizes"][n], s["base_rtt_s"], (k, n))

    def start(self, block: int, src: str, dst: str, size, base_rtt: float, session) -> None:
        mode = self.plan["blocks"][block]["mode"]
        f = Flow(len(self.flows), block, src, dst, size, base_rtt, mode, session)
        self.flows.append(f)
        initiator, responder = (src, dst) if mode == "bulk" else (dst, src)
        self.ns.enter(self.ns.host_ns[initiator])
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            self.ns.leave()
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, self.ks.cc.encode())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        if self.ks.pacing:
            s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, PACING_CAP)
        if mode != "bulk":
            receiver_window(s, self.ks.window_clamp)
        s.setblocking(False)
        f.t_syn = self.now()
        e = s.connect_ex((self.ip[responder], PORT))
        if e not in (0, errno.EINPROGRESS):
            s.close()
            raise RuntimeError(f"connect {initiator}->{responder}: {os.strerror(e)}")
        f.key = (self.ip[initiator], s.getsockname()[1])
        self.by_key[f.key] = f
        f.socks.append(s)
        self.sel.register(s, selectors.EVENT_WRITE, ("cli", f))

    # The data sender writes `size` bytes (forever for a persistent flow), then half-closes
    # and waits for the peer's close; the data receiver reads and notes the time of the last
    # byte. In request/response mode the initiator first sends the request.
    def on_cli(self, s: socket.socket, f: Flow, ev: int) -> None:
        if f.mode == "bulk":
            self.send_data(s, f, ev)
        else:
            if ev & selectors.EVENT_WRITE:
                try:
                    s.send(_ZEROS[: self.ks.request_payload])
                except OSError:
                    self.close(s, f)
                    return
                self.sel.modify(s, selectors.EVENT_READ, ("cli", f))
                return
            self.recv_data(s, f)

    def on_srv(self, s: socket.socket, f: Flow, ev: int) -> None:
        if f.mode == "bulk":
            self.recv_data(s, f)
        elif f.req_got < self.ks.request_payload:
            try:
                n = s.recv_into(self.buf)
            except OSError:
                n = 0
            if n == 0:
                self.close(s, f)
                return
            f.req_got += n
            if f.req_got >= self.ks.request_payload:
                self.sel.modify(s, selectors.EVENT_WRITE | selectors.EVENT_READ, ("srv", f))
        else:
            self.send_data(s, f, ev)

    def send_data(self, s: socket.socket, f: Flow, ev: int) -> None:
        total = None if f.size_pkts is None else f.size_pkts * self.mss
        if ev & selectors.EVENT_WRITE and (total is None or f.sent < total):
            if f.t_write is None:
                f.t_write = self.now()
            try:
                while total is None or f.sent < total:
                    n = self.chunk if total is None else min(self.chunk, total - f.sent)
                    k = s.send(_ZEROS[:n])
                    f.sent += k
                    if k < n:
                        break
            except BlockingIOError:
                pass
            except OSError:
                self.close(s, f)
                return
            if total is not None and f.sent >= total:
                s.shutdown(socket.SHUT_WR)
                self.sel.modify(s, selectors.EVENT_READ, (self.sel.get_key(s).data[0], f))
            return
        if ev & selectors.EVENT_READ:
            try:
                n = s.recv_into(self.buf)
            except BlockingIOError:
                return
            except OSError:
                n = 0
            if n == 0:  # the receiver closed: everything was acknowledged
                f.info["sender"] = tcp_info(s)
                f.info["sender_cc"] = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
                self.close(s, f)

    def recv_data(self, s: socket.socket, f: Flow) -> None:
        total = None if f.size_pkts is None else f.size_pkts * self.mss
        while True:
            try:
                n = s.recv_into(self.buf)
            except BlockingIOError:
                return
            except OSError:
                n = 0
            if n == 0:
                f.info["receiver"] = tcp_info(s)
                self.close(s, f)
                return
            f.got += n
            keep_window_clamp(s, self.ks.window_clamp)
            if total is not None and f.t_end is None and f.got >= total:
                f.t_end = self.now()
                self.finished += 1
                f.info["receiver"] = tcp_info(s)
                if f.session is not None:
                    k, c = f.session
                    think = self.sessions[k]["thinks"][c]
                    self.at(f.t_end + int(think * 1e9), self.session_next, k, c + 1)
                if f.mode != "bulk":
                    self.close(s, f)
                    return

    def close(self, s: socket.socket, f: Flow | None) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(s)
        s.close()

    def accept(self, ls: socket.socket) -> None:
        while True:
            try:
                s, peer = ls.accept()
            except BlockingIOError:
                return
            f = self.by_key.get((peer[0], peer[1]))
            if f is None:
                s.close()
                continue
            s.setblocking(False)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            if f.mode == "bulk":
                s.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, self.ks.window_clamp)
            f.socks.append(s)
            self.sel.register(s, selectors.EVENT_READ, ("srv", f))

    def run(self, router_out=None) -> None:
        if router_out is not None:
            os.set_blocking(router_out.fileno(), False)
            self.sel.register(router_out, selectors.EVENT_READ, ("router", None))
        self.listen()
        self.schedule()
        last_progress = 0
        while True:
            now = self.now()
            if now >= self.duration_ns:
                break
            while self.timers and self.timers[0][0] <= now:
                _, _, fn, args = heapq.heappop(self.timers)
                fn(*args)
            wait = self.duration_ns - now
            if self.timers:
                wait = min(wait, self.timers[0][0] - now)
            for key, ev in self.sel.select(max(0, wait) / 1e9):
                role, f = key.data
                if role == "router":
                    try:
                        eof = os.read(key.fileobj.fileno(), 4096) == b""
                    except BlockingIOError:
                        eof = False
                    if eof:
                        if self.now() >= self.duration_ns - 100_000_000:
                            return
                        raise RuntimeError("savanna-router exited before the end of the run")
                elif role == "accept":
                    self.accept(key.fileobj)
                elif role == "cli":
                    self.on_cli(key.fileobj, f, ev)
                else:
                    self.on_srv(key.fileobj, f, ev)
            if self.gp_ns and now >= self.gp_next:
                self.goodput_sample(self.gp_next)
                self.gp_next += self.gp_ns
            if self.progress and now - last_progress > 500_000_000:
                last_progress = now
                self.progress(now / 1e9, self.duration_ns / 1e9, len(self.flows), self.finished)

    def goodput_sample(self, t_ns: int) -> None:
        """Data packets each flow's receiving application read since the last window (rows
        only for flows that read something), as goodput.parquet."""
        for f in self.flows:
            pk = f.got // self.mss
            prev = self.gp_seen.get(f.fid, 0)
            if pk > prev:
                self.goodput.append((t_ns / 1e9, f.fid, pk - prev))
                self.gp_seen[f.fid] = pk

    def finish(self) -> None:
        """Read TCP_INFO of every socket still open, then close them all."""
        if self.closed:
            return
        self.closed = True
        for key in list(self.sel.get_map().values()):
            s, (role, f) = key.fileobj, key.data
            if role == "router":
                self.sel.unregister(s)
                continue
            if f is not None:
                sender = (role == "cli") == (f.mode == "bulk")
                f.info.setdefault("sender" if sender else "receiver", tcp_info(s))
            self.close(s, f)
        self.sel.close()


# ---------------------------------------------------------------------------------------
# Records


# flows.parquet: the simulator's columns and types in its order (from the core), then
# srtt_s (TCP_INFO's smoothed RTT of the data sender at its last reading), which only
# emulated runs have. A column the kernel cannot give is null.
def _flow_schema():
    import pyarrow as pa

    from savanna._core import flow_schema

    types = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "string": pa.string()}
    extra = [(n, pa.float64()) for n in EXTRA_FLOW_COLUMNS]
    return pa.schema([(n, types[t]) for n, t in flow_schema()] + extra)


# Columns only emulated runs have: the data sender's SRTT from TCP_INFO, and the traffic
# generator's own wake-up latency inside the FCT (from the router's record of the
# connection on the same clock): `write_lag_s` from the router's delivery of what the data
# sender waits for (the SYN-ACK, or a response's request) to the sender's first write;
# `read_lag_s` from the router's delivery of the flow's last data packet to the read that
# returned the last byte. The simulator's endpoints have neither.
EXTRA_FLOW_COLUMNS = ("srtt_s", "write_lag_s", "read_lag_s")


def _lag(t_ns: int | None, router_s: float | None) -> float | None:
    if t_ns is None or router_s is None:
        return None
    lag = t_ns / 1e9 - router_s
    # A data packet delivered after the last read (a spurious retransmission) is not what
    # the read waited for: no figure rather than a wrong one.
    return lag if lag >= 0 else None


def _flow_lags(f: Flow, conn: dict) -> tuple[float | None, float | None]:
    """(write_lag_s, read_lag_s) of one flow from the router's record of its connection."""
    side = 1 if f.mode == "bulk" else 0  # the side the data travels to
    last_out = conn.get("last_data_out_s", [None, None])
    # What the data sender waits for before writing: the SYN-ACK, or the request.
    waited = conn.get("synack_out_s") if f.mode == "bulk" else last_out[1]
    return _lag(f.t_write, waited), _lag(f.t_end, last_out[side])


def generator_lag(traffic: Traffic, report: dict) -> dict:
    """Percentiles of the generator's write and read lags over the run's flows (us)."""
    import numpy as np

    conns = {(c["client"], c["cport"]): c for c in report["conns"]}
    lags = [_flow_lags(f, conns.get(f.key, {})) for f in traffic.flows]
    out: dict = {}
    for i, name in enumerate(("write", "read")):
        v = np.array([x[i] for x in lags if x[i] is not None]) * 1e6
        out[f"{name}_count"] = len(v)
        for q, key in ((50, "p50"), (99, "p99"), (100, "max")):
            out[f"{name}_{key}_us"] = float(np.percentile(v, q)) if len(v) else None
    return out


def _flows_table(plan: dict, traffic: Traffic, report: dict):
    import pyarrow as pa

    conns = {(c["client"], c["cport"]): c for c in report["conns"]}
    mss = traffic.mss
    schema = _flow_schema()
    cols: dict[str, list] = {k: [] for k in schema.names}
    for f in traffic.flows:
        blk = plan["blocks"][f.block]
        c = conns.get(f.key, {})
        side = 1 if f.mode == "bulk" else 0  # the side the data travels to
        snd, rcv = f.info.get("sender", {}), f.info.get("receiver", {})
        start = f.t_syn / 1e9
        end = None if f.t_end is None else f.t_end / 1e9
        infos = [i for i in (snd, rcv) if i]
        cols["flow_id"].append(f.fid)
        cols["src"].append(f.src)
        cols["dst"].append(f.dst)
        cols["kind"].append("tcp")
        cols["source"].append(blk["name"])
        cols["tag"].append(blk["tag"])
        cols["start_s"].append(start)
        cols["end_s"].append(end)
        cols["size_bytes"].append(None if f.size_pkts is None else f.size_pkts * mss)
        cols["size_pkts"].append(f.size_pkts)
        cols["fct_s"].append(None if end is None else end - start)
        cols["data_pkts_sent"].append(sum(c.get("data_sent", [0, 0])))
        cols["retransmits"].append(sum(i.get("total_retrans", 0) for i in infos) if infos else None)
        has_rto = infos and all("total_rto" in i for i in infos)
        cols["timeouts"].append(sum(i["total_rto"] for i in infos) if has_rto else None)
        cols["fast_retransmits"].append(None)
        cols["drops"].append(sum(c.get("drops", [0, 0])))
        cols["ecn_marks"].append(sum(c.get("ecn_marks", [0, 0])))
        cols["syn_drops"].append(c.get("syn_drops", 0))
        cols["first_data_drop"].append(bool(c.get("first_data_drop", [False, False])[side]))
        cols["favored_pkts"].append(c.get("favored", 0))
        cols["class_at_end"].append(c.get("class_last", ["none", "none"])[side])
        cols["path"].append("")
        cols["base_rtt_s"].append(f.base_rtt)
        cols["delivered_pkts"].append(-(-f.got // mss))
        cols["syn_sent"].append(c.get("syn_sent", 0))
        cols["synack_drops"].append(c.get("synack_drops", 0))
        cols["pushed_out"].append(c.get("pushed_out", 0))
        cols["srtt_s"].append(snd["rtt_us"] / 1e6 if snd.get("rtt_us") else None)
        w, r = _flow_lags(f, c)
        cols["write_lag_s"].append(w)
        cols["read_lag_s"].append(r)
    return pa.table(cols, schema=schema)


# The router's capture records (crates/savanna-emu/src/capture.rs), little-endian.
_CAPTURE_DTYPE = [
    ("t_ns", "<u8"),
    ("conn", "<u4"),
    ("seq", "<u4"),
    ("ack", "<u4"),
    ("len", "<u2"),
    ("win", "<u2"),
    ("ev", "u1"),
    ("kind", "u1"),
    ("to_side", "u1"),
    ("reason", "u1"),
    ("link", "<u2"),
    ("flags", "u1"),
    ("pad", "u1"),
]
_CAPTURE_EVENTS = ["in", "drop", "out"]
_CAPTURE_KINDS = ["syn", "syn_ack", "data", "ack", "fin", "udp"]
_DROP_REASONS = ["overflow", "early", "forced", "pushout", "policy", "link_loss"]


def _packets_table(path: Path, traffic: Traffic, report: dict):
    """`packets.parquet` from the router's capture: one row per packet read from a host
    (`in`), dropped on a link (`drop`) or written to a host (`out`), at the router's ideal
    time, with the flow id of `flows.parquet`."""
    import numpy as np
    import pyarrow as pa

    rec = np.fromfile(path, dtype=np.dtype(_CAPTURE_DTYPE))
    fid_of = {f.key: f.fid for f in traffic.flows}
    conn_fid = np.array([fid_of.get((c["client"], c["cport"]), -1) for c in report["conns"]] + [-1], dtype=np.int64)
    conn = np.minimum(rec["conn"].astype(np.int64), len(conn_fid) - 1)
    reasons = np.array(_DROP_REASONS + ["?"] * 250, dtype=object)
    return pa.table(
        {
            "t_s": rec["t_ns"] / 1e9,
            "event": np.array(_CAPTURE_EVENTS, dtype=object)[rec["ev"]],
            "flow_id": conn_fid[conn],
            "kind": np.array(_CAPTURE_KINDS + ["?"] * 250, dtype=object)[rec["kind"]],
            "to_side": rec["to_side"].astype(np.int8),
            "seq": rec["seq"].astype(np.int64),
            "ack": rec["ack"].astype(np.int64),
            "payload_bytes": rec["len"].astype(np.int32),
            "window": rec["win"].astype(np.int32),
            "tcp_flags": rec["flags"].astype(np.int16),
            "drop_reason": np.where(rec["ev"] == 1, reasons[rec["reason"]], None),
            "link": np.where(rec["link"] == 0xFFFF, -1, rec["link"].astype(np.int32)),
        }
    )


def _queues_table(report: dict):
    import pyarrow as pa

    rows = report["samples"]
    if not rows:
        return None
    names = list(rows[0].keys())
    arrays = {}
    for k in names:
        vals = [r[k] for r in rows]
        t = pa.string() if k == "queue" else pa.float64() if k in ("t_s", "avg_pkts", "utilisation") else pa.int64()
        arrays[k] = pa.array(vals, type=t)
    return pa.table(arrays)


def _write_outputs(out_dir: Path, plan: dict, traffic: Traffic, report: dict, summary: dict) -> None:
    import pyarrow.parquet as pq

    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".emulate-", dir=out_dir))
    try:
        pq.write_table(_flows_table(plan, traffic, report), staging / "flows.parquet")
        if traffic.gp_ns:
            import pyarrow as pa

            t, fid, n = zip(*traffic.goodput) if traffic.goodput else ((), (), ())
            gp = pa.table(
                {
                    "t_s": pa.array(t, pa.float64()),
                    "flow_id": pa.array(fid, pa.int64()),
                    "delivered_pkts": pa.array(n, pa.int64()),
                }
            )
            pq.write_table(gp, staging / "goodput.parquet")
        q = _queues_table(report)
        if q is not None:
            pq.write_table(q, staging / "queues.parquet")
        (staging / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        (out_dir / "summary.json").unlink(missing_ok=True)
        for name in ("flows.parquet", "queues.parquet", "goodput.parquet"):
            if (staging / name).exists():
                os.replace(staging / name, out_dir / name)
            else:
                (out_dir / name).unlink(missing_ok=True)
        os.replace(staging / "summary.json", out_dir / "summary.json")  # last: the run is complete
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# The run


def _progress_bar(t: float, total: float, started: int, done: int) -> None:
    width = 30
    k = int(width * min(1.0, t / total)) if total > 0 else width
    sys.stderr.write(f"\r[{'#' * k}{' ' * (width - k)}] {t:6.1f}/{total:.0f} s  flows {started} started, {done} done ")
    sys.stderr.flush()


def emulate(
    scenario,
    out: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    duration_s: float | None = None,
    cc: str | None = None,
    sack: bool = False,
    approx: bool = False,
    spin_us: int = 0,
    rt: int = 50,
    progress: bool | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    capture: bool = False,
):
    """Run a scenario on real Linux TCP through Savanna's router; returns a ``Result``
    (flows, queues, summary) like ``savanna.run``. Needs root. ``out``: output directory
    (default: a temporary one, removed after loading). ``cc``: the kernel's congestion
    control (default ``reno`` for ``variant = "newreno"``, the module of that name for
    ``cubic`` and ``dctcp``); ``sack``: turn SACK on even where the scenario's ``tcp.sack``
    does not; ``approx``: run settings Linux cannot honour with Linux's behaviour instead of
    failing (they are listed in summary.json). ``duration_s``: wall
    clock seconds (default: the scenario's duration). ``capture``: the router also writes
    every packet it reads, drops and delivers to ``packets.parquet`` (docs/emulate.md)."""
    from savanna.runner import check_overrides, load_result, resolve_scenario

    sc = resolve_scenario(scenario, base_dir=base_dir)
    seed, duration_s = check_overrides(seed, duration_s)
    check_host()
    router = router_binary()
    tmpdir = Path(tempfile.mkdtemp(prefix="savanna-emulate-"))
    scen = tmpdir / f"scenario.{sc.fmt}"
    scen.write_text(sc.text)
    keep_out = out is not None
    out_dir = Path(out) if out is not None else tmpdir / "out"
    if progress is None:
        progress = sys.stderr.isatty()
    try:
        plan = load_plan(router, scen, sc.base_dir, sc.fmt, seed, duration_s)
        ks = kernel_settings(plan, cc=cc, sack=sack, approx=approx)
        summary = _run(plan, ks, router, scen, sc, seed, duration_s, out_dir, tmpdir, spin_us, rt, progress, capture)
        result = load_result(out_dir)
        if not keep_out:
            result.out_dir = None
        result.summary = summary
        return result
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _run(plan, ks, router, scen, sc, seed, duration_s, out_dir, tmpdir, spin_us, rt, progress, capture=False) -> dict:
    cleanup_stale()
    ns = Namespaces(plan["hosts"])
    proc = None
    traffic = None
    old_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old_hup = signal.getsignal(signal.SIGHUP)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    report_path = tmpdir / "router.json"
    wall0 = time.monotonic()
    try:
        ns.create()
        for nsname in ns.host_ns.values():
            ns.write_sysctls(nsname, ks.sysctls)
        ns.write_sysctls(ns.router, BASE_SYSCTLS)
        cmd = _router_cmd(router, scen, sc.base_dir, sc.fmt, seed, duration_s)
        cmd[1] = "run"
        cmd += ["--report", str(report_path), "--prefix", "sv", "--spin-us", str(spin_us), "--rt", str(rt)]
        capture_path = tmpdir / "capture.bin"
        if capture:
            cmd += ["--capture", str(capture_path)]
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns.router, *cmd],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = proc.stdout.readline()
        if not line:
            err = proc.stderr.read().strip()
            proc.wait()
            if proc.returncode == 2:
                raise ScenarioError(err.removeprefix("error: "))
            raise RuntimeError(f"savanna-router failed: {err}")
        tuns = json.loads(line)["tuns"]
        mtu = str(plan["packet_bytes"])
        for h, dev in zip(plan["hosts"], tuns):
            hn = ns.host_ns[h["name"]]
            _ip("-n", ns.router, "link", "set", dev, "netns", hn)
            _ip("-n", hn, "link", "set", "lo", "up")
            _ip("-n", hn, "addr", "add", f"{h['ip']}/32", "dev", dev)
            _ip("-n", hn, "link", "set", dev, "mtu", mtu, "up")
            _ip("-n", hn, "route", "add", "10.0.0.0/8", "dev", dev, *ks.route_opts)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        t0 = json.loads(proc.stdout.readline())["t0_ns"]
        run_s = plan["duration_s"]
        traffic = Traffic(plan, ns, ks, t0, run_s, _progress_bar if progress else None)
        traffic.run(proc.stdout)
        if traffic.gp_ns:
            traffic.goodput_sample(traffic.now())
        traffic.finish()
        if progress:
            sys.stderr.write("\n")
        # The router stops at the duration by itself; wait for its report.
        try:
            proc.stdin.write("stop\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0 or not report_path.exists():
            raise RuntimeError(f"savanna-router failed (exit {proc.returncode}): {err.strip()}")
        if err.strip():
            sys.stderr.write(err)
        report = json.loads(report_path.read_text())
        summary = _summary(plan, ks, traffic, report, time.monotonic() - wall0, ns)
        _write_outputs(Path(out_dir), plan, traffic, report, summary)
        if capture:
            if not report.get("capture_ok"):
                raise RuntimeError(f"savanna-router: the packet capture {capture_path} could not be written")
            import pyarrow.parquet as pq

            pq.write_table(_packets_table(capture_path, traffic, report), Path(out_dir) / "packets.parquet")
        return summary
    finally:
        if traffic is not None:
            with contextlib.suppress(Exception):  # teardown must go on
                traffic.finish()
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        ns.close()
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGHUP, old_hup)


def _summary(plan: dict, ks: KernelSettings, traffic: Traffic, report: dict, wall: float, ns: Namespaces) -> dict:
    from savanna import __version__

    pk = report["packets"]
    finished = sum(1 for f in traffic.flows if f.t_end is not None)
    kernel = ks.table()
    kernel["release"] = os.uname().release
    # What the data senders' sockets ran, read back from the kernel when they closed.
    kernel["congestion_control_seen"] = sorted({f.info["sender_cc"] for f in traffic.flows if "sender_cc" in f.info})
    kernel["tcp_counters"] = ns.tcp_counters()
    return {
        "savanna_version": __version__,
        "scenario": plan["name"],
        "seed": plan["seed"],
        "sim_seconds": report["duration_s"],
        "wall_seconds": wall,
        "events": None,
        "packets_forwarded": pk["forwarded"],
        "packets_created": pk["created"],
        "packets_delivered": pk["delivered"],
        "packets_dropped": pk["dropped"],
        "packets_in_network_at_end": pk["in_network_at_end"],
        "link_losses": pk["link_losses"],
        "flows_started": len(traffic.flows),
        "flows_finished": finished,
        "queues": report["queues"],
        "emulated": True,
        "accuracy": {**report["accuracy"], "generator_lag": generator_lag(traffic, report)},
        "kernel": kernel,
        "router_packets": pk,
    }


def format_accuracy(summary: dict) -> str:
    a = summary.get("accuracy", {})
    d = a.get("delivery_lateness", {})
    ratio = a.get("achieved_over_configured")
    r = "n/a (no busy period of 10+ packets)" if ratio is None else f"{ratio:.4f}"
    return (
        f"accuracy: {a.get('bottleneck')} achieved/configured rate {r}; "
        f"delivery lateness p50 {d.get('p50_us')} us, p99 {d.get('p99_us')} us, max {d.get('max_us')} us "
        f"({d.get('count')} packets); router CPU {100 * a.get('cpu_fraction', 0):.1f}%"
    )


def main_args(args: Any) -> int:
    """`savanna emulate` (called from cli.py)."""
    from savanna.cli import format_summary

    out_dir = Path(args.out) if args.out else Path("out") / (Path(args.scenario).stem + "-emulated")
    res = emulate(
        Path(args.scenario),
        out_dir,
        seed=args.seed,
        duration_s=args.duration,
        cc=args.cc,
        sack=args.sack,
        approx=args.approx,
        spin_us=args.spin_us,
        rt=args.rt,
        progress=None if not args.quiet else False,
        capture=args.capture,
    )
    if not args.quiet:
        print(format_summary(res.summary, out_dir, scenario=args.scenario))
        print(format_accuracy(res.summary))
    return 0
