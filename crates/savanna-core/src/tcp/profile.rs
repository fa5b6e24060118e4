//! Named TCP profiles (`profile = "..."` in `[tcp]` or a traffic block's `tcp`): a set of
//! `[tcp]` keys a scenario gets unless it sets them itself. docs/tcp.md has the table and
//! the sources.
//!
//! - `ns2-2001`: what the papers' ns-2 ran (ns-2.1b8, June 2001 - April 2002; the defaults
//!   of that release as benchmarks/ns2/README.md and docs/ns2.md 3f trace them): SYN
//!   (`syn_`), IW 2, ITO 6 s, minimum RTO 1 s, maximum RTO 64 s, tcpTick 0.1 s with ns-2's
//!   rounding, one timed segment per RTT, no limited transmit (`singledup_` 0), no SACK,
//!   ACK per packet, no third handshake packet (one-way TCP), the timer reset on every
//!   partial ACK (`newreno_changes1_` 0), ssthresh from half the window without the
//!   fast-recovery inflation (`TcpAgent::slowdown`), IW kept after a lost SYN (no
//!   `bugfix_ss_`, added in 2006). Not modelled yet: `rfc2988_` false (min RTO
//!   applied after backoff) and `partial_window_deflation_` 0.
//! - `rfc`: today's standards-track NewReno: RFC 6582 with SACK (RFC 2018) and RFC 6675
//!   recovery at RFC 6675's rate, limited transmit (RFC 3042), IW 3 (RFC 3390 for a 1460-byte
//!   MSS), RFC 6298's ITO of 1 s and minimum RTO of 1 s, delayed ACKs (RFC 5681 4.2), IW 1
//!   after a lost SYN or SYN-ACK (RFC 5681 3.1).
//! - `linux`: Linux 6.x's defaults as Savanna models them: CUBIC with Linux's HyStart delay
//!   test (`hystart_rule = "linux"`, tcp_cubic.c), SACK with
//!   D-SACK, PRR, RACK-TLP (tcp_recovery = 1), internal pacing at Linux's rate, limited
//!   transmit, IW 10, ITO 1 s, minimum RTO 200 ms, maximum RTO 120 s, delayed ACKs of at
//!   most 40 ms (TCP_DELACK_MIN), RTT from every ACK, slow start counting every packet an
//!   ACK covers (`tcp_slow_start`), paced bursts sized as `tcp_tso_autosize` (at least
//!   tcp_min_tso_segs = 2). Not modelled: quick-ack mode beyond
//!   the immediate ACKs RFC 5681 asks for.

/// The keys of profile `name`, as TOML; None for an unknown name.
pub fn keys(name: &str) -> Option<&'static str> {
    Some(match name {
        "ns2-2001" => {
            r#"
            variant = "newreno"
            handshake = true
            handshake_ack = false
            partial_ack_timer = "every"
            init_cwnd = 2
            ito_s = 6.0
            min_rto_s = 1.0
            max_rto_s = 64.0
            tick_s = 0.1
            rtt_sampling = "once_per_rtt"
            restart_rto_on_fast_retransmit = true
            limited_transmit = false
            sack = false
            delayed_ack = false
            ssthresh_base = "cwnd"
            "#
        }
        "rfc" => {
            r#"
            variant = "newreno"
            handshake = true
            init_cwnd = 3
            ito_s = 1.0
            min_rto_s = 1.0
            max_rto_s = 60.0
            rtt_sampling = "every_ack"
            limited_transmit = true
            sack = true
            dsack = false
            recovery_rate = "rfc6675"
            delayed_ack = true
            delack_timeout_s = 0.2
            iw_after_syn_loss = 1
            "#
        }
        "linux" => {
            // Linux's default congestion control since 2.6.19: CUBIC, with its HyStart
            // (on by default; its delay test, cc/hystart.rs).
            r#"
            cc = "cubic"
            hystart_rule = "linux"
            handshake = true
            init_cwnd = 10
            ito_s = 1.0
            min_rto_s = 0.2
            max_rto_s = 120.0
            rtt_sampling = "every_ack"
            limited_transmit = true
            sack = true
            dsack = true
            recovery_rate = "prr"
            rack = true
            pacing = true
            pacing_burst = 2
            pacing_autosize = true
            slow_start_increase = "acked"
            delayed_ack = true
            delack_timeout_s = 0.04
            "#
        }
        _ => return None,
    })
}

/// The names, for error messages.
pub const NAMES: &str = "\"ns2-2001\", \"rfc\" or \"linux\"";

/// Fill `t` with the keys of its `profile` that it does not set itself.
pub fn apply(t: &mut toml::Table) -> std::result::Result<(), String> {
    let Some(v) = t.get("profile") else { return Ok(()) };
    let Some(name) = v.as_str() else { return Err(format!("must be a string: {NAMES}")) };
    let Some(src) = keys(name) else { return Err(format!("unknown profile {name:?}: expected {NAMES}")) };
    let defaults: toml::Table = toml::from_str(src).expect("profile tables are valid TOML");
    // A profile's CUBIC-only keys stay out when the table picks another congestion control
    // or variant (the linux profile with cc = "dctcp").
    let other_cc = matches!(t.get("cc"), Some(c) if c.as_str() != Some("cubic")) || t.contains_key("variant");
    for (k, v) in defaults {
        if other_cc && k == "hystart_rule" {
            continue;
        }
        t.entry(k).or_insert(v);
    }
    Ok(())
}
