"""Analytical models of the papers Savanna implements, computed by the Rust core
(``savanna._core``; the equations and our readings are in docs/models.md):

- :func:`padhye_throughput`: TCP Reno steady-state throughput, Padhye, Firoiu, Towsley &
  Kurose 1998 (full model, eq. 31, or the closed form, eq. 33).
- :func:`guo_matta_latency`: expected latency of a d-packet transfer under loss p,
  Guo & Matta 2001 ("The War Between Mice and Elephants"), eq. (1)-(2), Fig. 2(a).
- :func:`tokuda_throughput`, :func:`tokuda_f`, :func:`tokuda_k`: Tokuda, Hasegawa &
  Murata 2002, section 3.2: throughput rho(f) of an f-packet transfer whose packets after
  the K-th are dropped with a higher probability, the fairness index F(K) (Fig. 3) and the
  K that minimises it, which sets the RED-based differentiator.
- :func:`long_share`, :func:`packet_sizes`: a_l, the share of arriving packets that are
  long for a threshold K, and P(i), the document-size distribution in whole packets, from
  a size table (the same tables as a scenario's ``size``).
- :func:`control_poles`, :func:`control_stable`, :func:`control_simulate`,
  :func:`paper_condition`: the aggregate and individual PID control models of Matta & Guo
  2000, section II and Appendix I (stability alpha + 2 beta < 4/N).

Every function checks its arguments and raises ``ValueError`` whose message starts with
the argument's name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, Union

import numpy as np

from savanna import _core

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "TOKUDA_SCENARIO2_SIZES",
    "Latency",
    "KChoice",
    "padhye_throughput",
    "guo_matta_latency",
    "tokuda_throughput",
    "packet_sizes",
    "long_share",
    "tokuda_f",
    "tokuda_k",
    "paper_condition",
    "control_poles",
    "control_stable",
    "control_simulate",
]

#: Tokuda et al. 2002, Table 2 (scenario 2, after Barford & Crovella 1998): lognormal body
#: (mu 9.357, sigma 1.318 of ln bytes, the table's "avg" and "std") below 133 KB and a
#: Pareto tail (shape 1.5) from 133 KB on, spliced continuously (the scenario size table
#: ``dist = "lognormal_pareto"``, see docs/scenario.md).
TOKUDA_SCENARIO2_SIZES = {
    "dist": "lognormal_pareto",
    "mu": 9.357,
    "sigma": 1.318,
    "cutoff": 133000.0,
    "shape": 1.5,
    "unit": "bytes",
}

Number = Union[int, float]


class Latency(NamedTuple):
    """Guo & Matta's expected latency of a d-packet transfer, seconds, by part."""

    first: float  #: E[T_f], eq. (1): the first packet (initial timeout on loss)
    slow_start: float  #: E[T_ss]
    loss: float  #: E[T_loss]: recovering from the loss that ends slow start
    ca: float  #: E[T_ca]: the rest at Padhye's rate
    total: float  #: E[T_f] + E[T_r]
    d_ss: float  #: E[d_ss], packets sent in the initial slow start (Cardwell et al.)
    w_ss: float  #: E[W_ss], the window slow start reaches
    q_timeout: float  #: probability that the loss is found by a timeout


class KChoice(NamedTuple):
    """One point of Tokuda et al.'s F(K)."""

    k: int  #: the threshold, packets
    a_long: float  #: share of arriving packets that are long
    p_long: float  #: p_l = p_t / a_l (at most 1)
    f: float  #: F(K), (packets/s)^2


def _positive(name: str, v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a number, got {v!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name}: must be a positive number, got {v!r}")
    return x


def _probability(name: str, v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a probability, got {v!r}") from None
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name}: must be a probability in [0, 1], got {v!r}")
    return x


def _count(name: str, v, minimum: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise ValueError(f"{name}: must be a whole number >= {minimum}, got {v!r}")
    return int(v)


def _size_json(size) -> str:
    if not isinstance(size, dict):
        raise ValueError(
            'size: must be a size table (dict), e.g. {"dist": "pareto", "shape": 1.3, "mean": 30}; see docs/scenario.md'
        )
    return json.dumps(size)


def _counting(v: str) -> str:
    if v not in ("beyond-k", "whole-flow"):
        raise ValueError(f'counting: must be "beyond-k" or "whole-flow", got {v!r}')
    return v


def _max_window(v) -> float:
    if v is None:
        return math.inf
    return _positive("max_window", v)


def padhye_throughput(
    p: Number | Sequence[Number] | np.ndarray,
    rtt_s: Number,
    t0_s: Number,
    b: Number = 1,
    wmax_pkts: Number | None = None,
    approx: bool = False,
) -> float | np.ndarray:
    """TCP Reno throughput of Padhye et al. 1998, packets sent per second.

    ``p``: loss-indication probability (a number or an array); ``rtt_s``: round-trip time;
    ``t0_s``: first retransmission timeout; ``b``: packets per ACK (2 with delayed ACKs);
    ``wmax_pkts``: receiver window (None: no limit); ``approx``: the closed form (eq. 33)
    instead of the full model (eq. 31). Returns a float, or an array for an array ``p``.
    """
    wmax = math.inf if wmax_pkts is None else _positive("wmax_pkts", wmax_pkts)
    rtt, t0 = _positive("rtt_s", rtt_s), _positive("t0_s", t0_s)
    one = lambda x: _core.padhye_throughput(_probability("p", x), rtt, t0, float(b), wmax, bool(approx))  # noqa: E731
    if np.ndim(p) == 0:
        return one(p)
    return np.array([one(x) for x in np.ravel(p)]).reshape(np.shape(p))


def guo_matta_latency(
    d: Number, p: Number, rtt_s: Number = 0.1, rto_s: Number | None = None, ito_s: Number = 3.0
) -> Latency:
    """Expected latency of a TCP transfer of ``d`` packets under independent loss ``p``
    (Guo & Matta 2001, eq. (1) + eq. (2), seconds). Defaults are Fig. 2(a)'s: RTT 0.1 s,
    RTO 4 RTT, ITO 3 s. Eq. (2)'s inner terms are Cardwell et al. 2000's with b = 1 and no
    window limit; see docs/models.md for our readings (eq. (2) over the whole d; E[d_ss]
    capped at d)."""
    rtt = _positive("rtt_s", rtt_s)
    rto = 4.0 * rtt if rto_s is None else _positive("rto_s", rto_s)
    try:
        d, p = float(d), float(p)
    except (TypeError, ValueError):
        raise ValueError(f"d, p: must be numbers, got {d!r}, {p!r}") from None
    return Latency(*_core.guo_matta_latency(d, p, rtt, rto, _positive("ito_s", ito_s)))


def tokuda_throughput(
    sizes: int | Sequence[int] | np.ndarray,
    rtt_s: Number,
    p_l: Number,
    k: int = 0,
    p_s: Number = 0.0,
    rto_s: Number | None = None,
    ito_s: Number = 3.0,
    b: Number = 1,
    init_cwnd: Number = 1,
    max_window: Number | None = None,
    handshake: bool = False,
) -> float | np.ndarray:
    """Tokuda et al.'s rho(f), packets per second, for documents of ``sizes`` packets (an
    int or a sequence), when packets 1..``k`` are lost with ``p_s`` and later ones with
    ``p_l``. With ``k = 0`` every packet is lost with ``p_l``.

    Our reconstruction of the paper's reference [5]: Cardwell-style slow start until the
    first loss, recovery by timeout (ITO for the first packet, RTO after) or fast
    retransmit, then Padhye's rate for the packets left (docs/models.md). Defaults: RTO 4
    RTT, ITO 3 s, no delayed ACKs, initial window 1, no window limit, no handshake.
    Returns a float for an int, else a numpy array.
    """
    scalar = np.ndim(sizes) == 0
    fs = [
        _count("sizes", int(x) if isinstance(x, float) and float(x).is_integer() else x, 1)
        for x in np.atleast_1d(sizes).tolist()
    ]
    rtt = _positive("rtt_s", rtt_s)
    out = _core.tokuda_throughput(
        fs,
        _count("k", k),
        _probability("p_s", p_s),
        _probability("p_l", p_l),
        rtt,
        None if rto_s is None else _positive("rto_s", rto_s),
        _positive("ito_s", ito_s),
        float(b),
        float(init_cwnd),
        _max_window(max_window),
        bool(handshake),
    )
    return out[0] if scalar else np.array(out)


def packet_sizes(size: dict, n: int, mss_bytes: Number = 1460) -> tuple[float, np.ndarray]:
    """The document-size law of a size table in whole packets, as the simulator draws it
    (rounded to the nearest packet, at least 1). Returns ``(mean, pmf)``: E[S] exactly
    (tail included) and the array P(S = i) for i = 1..n (index i - 1). Sizes in bytes are
    divided by ``mss_bytes`` (a scenario's packet_bytes - header_bytes)."""
    mean, pmf = _core.packet_sizes(_size_json(size), _positive("mss_bytes", mss_bytes), _count("n", n, 1))
    return mean, np.array(pmf)


def long_share(
    size: dict,
    k: int | Sequence[int],
    counting: str = "beyond-k",
    extra_pkts: int = 0,
    mss_bytes: Number = 1460,
) -> float | np.ndarray:
    """a_l for threshold ``k`` (an int or a sequence): the share of a queue's arriving
    packets that a counting classifier marks long (Tokuda et al. section 3.2).

    ``counting = "beyond-k"``: a connection's packets after its first K are long (what the
    marking and hashing classifiers mark); ``"whole-flow"``: all packets of a connection of
    more than K packets. ``extra_pkts``: packets each connection sends before its data that
    the classifier counts (2 with Savanna's handshake: SYN and final ACK; 0 without).
    """
    scalar = np.ndim(k) == 0
    ks = [_count("k", x, 1) for x in np.atleast_1d(k).tolist()]
    out = _core.long_share(
        _size_json(size), _positive("mss_bytes", mss_bytes), ks, _counting(counting), _count("extra_pkts", extra_pkts)
    )
    return out[0] if scalar else np.array(out)


def _criterion_args(
    size, p_t, rtt_s, rto_s, ito_s, b, init_cwnd, max_window, handshake, l_pkts, k_max, counting, extra_pkts, mss_bytes
):
    p = _probability("p_t", p_t)
    if p == 0:
        raise ValueError("p_t: must be above 0 (RED's target drop probability)")
    return dict(
        size_json=_size_json(size),
        mss_bytes=_positive("mss_bytes", mss_bytes),
        p_t=p,
        rtt_s=_positive("rtt_s", rtt_s),
        rto_s=None if rto_s is None else _positive("rto_s", rto_s),
        ito_s=_positive("ito_s", ito_s),
        b=float(b),
        init_cwnd=float(init_cwnd),
        max_window=_max_window(max_window),
        handshake=bool(handshake),
        l_pkts=_count("l_pkts", l_pkts, 2),
        k_max=_count("k_max", k_max, 1),
        counting_name=_counting(counting),
        extra_pkts=_count("extra_pkts", extra_pkts),
    )


def tokuda_f(
    size: dict,
    p_t: Number,
    rtt_s: Number,
    ks: Sequence[int] | None = None,
    rto_s: Number | None = None,
    ito_s: Number = 3.0,
    b: Number = 1,
    init_cwnd: Number = 1,
    max_window: Number | None = None,
    handshake: bool = False,
    l_pkts: int = 10000,
    k_max: int = 1000,
    counting: str = "beyond-k",
    extra_pkts: int = 0,
    mss_bytes: Number = 1460,
) -> pd.DataFrame:
    """Tokuda et al.'s fairness index F(K) = sum_{i=1}^{L} P(i) (rho(i) - rho(L))^2 (Fig. 3)
    for RED's target probability ``p_t``, with p_s = 0 and p_l = p_t / a_l(K).

    ``size``: the document sizes (a size table, e.g. :data:`TOKUDA_SCENARIO2_SIZES`);
    ``ks``: the K values (default 1..min(k_max, l_pkts - 1)); ``l_pkts``: L (the paper's
    10000); the TCP parameters as :func:`tokuda_throughput`. Returns a pandas DataFrame
    with columns k, a_long, p_long, F.
    """
    import pandas as pd

    args = _criterion_args(
        size,
        p_t,
        rtt_s,
        rto_s,
        ito_s,
        b,
        init_cwnd,
        max_window,
        handshake,
        l_pkts,
        k_max,
        counting,
        extra_pkts,
        mss_bytes,
    )
    if ks is not None:
        ks = [_count("ks", x, 1) for x in np.atleast_1d(ks).tolist()]
    rows = _core.tokuda_f(ks=ks, **args)
    return pd.DataFrame(rows, columns=["k", "a_long", "p_long", "F"])


def tokuda_k(
    size: dict,
    p_t: Number,
    rtt_s: Number,
    rto_s: Number | None = None,
    ito_s: Number = 3.0,
    b: Number = 1,
    init_cwnd: Number = 1,
    max_window: Number | None = None,
    handshake: bool = False,
    l_pkts: int = 10000,
    k_max: int = 1000,
    counting: str = "beyond-k",
    extra_pkts: int = 0,
    mss_bytes: Number = 1460,
) -> KChoice:
    """The K in 1..min(k_max, l_pkts - 1) with the smallest F(K) (the smallest K on ties),
    as a scenario's ``k = { criterion = "tokuda-f", ... }`` chooses it. Arguments as
    :func:`tokuda_f`."""
    args = _criterion_args(
        size,
        p_t,
        rtt_s,
        rto_s,
        ito_s,
        b,
        init_cwnd,
        max_window,
        handshake,
        l_pkts,
        k_max,
        counting,
        extra_pkts,
        mss_bytes,
    )
    return KChoice(*_core.tokuda_k(**args))


def _gains(alpha, beta, n):
    if np.ndim(alpha) == 0 and np.ndim(beta) == 0:
        n = _count("n", 1 if n is None else n, 1)
        a, bb = [float(alpha)] * n, [float(beta)] * n
    else:
        if n is not None:
            raise ValueError("n: give either n with one alpha and beta, or one gain per flow (lists) without n")
        a = [float(x) for x in np.atleast_1d(alpha)]
        bb = [float(x) for x in np.atleast_1d(beta)]
        if len(a) != len(bb) or not a:
            raise ValueError(f"alpha, beta: need one gain of each per flow, got {len(a)} and {len(bb)}")
    if not all(math.isfinite(x) for x in a + bb):
        raise ValueError("alpha, beta: must be finite numbers")
    return a, bb


def paper_condition(alpha: Number, beta: Number, n: int) -> bool:
    """Matta & Guo's stability condition, eq. (2): alpha + 2 beta < 4 / N."""
    return float(alpha) + 2.0 * float(beta) < 4.0 / _count("n", n, 1)


def control_poles(
    alpha: Number | Sequence[Number], beta: Number | Sequence[Number], n: int | None = None
) -> list[complex]:
    """Poles of the aggregate model (eq. (12), z^2 + [N(alpha + beta) - 2] z + 1 - N beta)
    as two complex numbers: N identical flows (``alpha``, ``beta`` numbers and ``n``), or
    one gain per flow (lists, where N alpha and N beta become their sums)."""
    a, bb = _gains(alpha, beta, n)
    return [complex(re, im) for re, im in _core.control_poles(sum(a), sum(bb))]


def control_stable(
    alpha: Number | Sequence[Number],
    beta: Number | Sequence[Number],
    n: int | None = None,
    method: str = "iteration",
    max_steps: int = 200_000,
) -> bool:
    """Whether the aggregate model (eq. (1)) is asymptotically stable.

    ``method = "iteration"`` runs eq. (1) with every flow from a perturbed equilibrium and
    decides from whether the aggregate error dies out (within ``max_steps`` steps);
    ``"poles"`` compares the largest pole modulus of eq. (12) with 1. Gains as
    :func:`control_poles`.
    """
    a, bb = _gains(alpha, beta, n)
    if method == "poles":
        return max(abs(z) for z in control_poles(a, bb)) < 1.0
    if method != "iteration":
        raise ValueError(f'method: must be "iteration" or "poles", got {method!r}')
    stable, _rate, _steps = _core.control_iterate(a, bb, _count("max_steps", max_steps, 16))
    return stable


def control_simulate(
    alpha: Number | Sequence[Number],
    beta: Number | Sequence[Number],
    w0: Number | Sequence[Number],
    q0: Number | Sequence[Number],
    target: Number | Sequence[Number],
    service: Number | Sequence[Number],
    steps: int,
    individual: bool = False,
) -> dict[str, np.ndarray]:
    """Iterate the aggregate model, eq. (1) (``individual=False``: one shared q, B and C),
    or the individual model, eq. (5) (one q_i, B_i and C_i per flow), for ``steps`` steps.

    ``alpha``, ``beta``, ``w0``: one value per flow; ``q0``, ``target`` (B), ``service`` (C):
    one value (aggregate) or one per flow (individual). Returns a dict with ``q`` (array of
    steps + 1 rows, one column, or one per flow) and ``w`` (steps + 1 rows, one per flow).
    """
    as_list = lambda name, v: [float(x) for x in np.atleast_1d(v)]  # noqa: E731
    q, w = _core.control_simulate(
        as_list("alpha", alpha),
        as_list("beta", beta),
        as_list("w0", w0),
        as_list("q0", q0),
        as_list("target", target),
        as_list("service", service),
        _count("steps", steps),
        bool(individual),
    )
    return {"q": np.array(q), "w": np.array(w)}
