//! `tcp.syn_timeout_slowdown`: ns-2.35's `TcpAgent::timeout` treats the SYN's timeout as
//! any other, calling `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)`: ssthresh_ =
//! max((int)(window() / 2), 2), and cwnd_ = 1 (so a second SYN timeout halves 1). Off (the
//! default) a SYN timeout leaves ssthresh at its initial value (docs/ns2.md, "ssthresh
//! after a lost SYN"). Built on `tcp::harness`; windows count packets.

use savanna_core::net::{Ecn, PktKind};
use savanna_core::tcp::endpoint::State;
use savanna_core::tcp::harness::{ms, seqs, Harness};
use savanna_core::tcp::TcpConfig;

/// A client (IW `iw`, 100 packets to send) whose SYN times out `lost` times before the
/// SYN-ACK arrives; returns the harness, established, and what it sent on the SYN-ACK.
fn established_after(slowdown: bool, iw: u32, lost: usize) -> (Harness, usize) {
    let c = TcpConfig {
        handshake: true,
        init_cwnd: iw,
        iw_after_syn_loss: Some(1),
        syn_timeout_slowdown: slowdown,
        ..TcpConfig::default()
    };
    let mut h = Harness::sender(c, 100);
    assert_eq!(h.open()[0].kind, PktKind::Syn);
    for _ in 0..lost {
        assert_eq!(h.fire_rto()[0].kind, PktKind::Syn);
    }
    h.at(h.now + ms(100.0));
    let p = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    let sent = seqs(&h.deliver(p)).len();
    assert_eq!(h.ep.state(), State::Established);
    (h, sent)
}

/// ns-2 `TcpAgent::timeout` -> `slowdown`: the first SYN timeout sets ssthresh to half the
/// initial window, at least 2; a second finds cwnd_ 1 and sets 2.
#[test]
fn ns2_syn_timeout_slowdown_halves_ssthresh() {
    for (iw, lost, want) in [(2, 1, 2.0), (10, 1, 5.0), (10, 2, 2.0), (5, 1, 2.0)] {
        let (h, sent) = established_after(true, iw, lost);
        assert_eq!(h.ep.ssthresh(), want, "IW {iw}, {lost} SYN timeouts");
        assert_eq!(sent, 1, "the initial window after a lost SYN stays iw_after_syn_loss");
    }
}

/// Off, a SYN timeout leaves ssthresh where it started (the maximum window), and with it
/// on, a SYN that was not lost leaves it there too.
#[test]
fn ns2_syn_timeout_slowdown_off_or_without_a_timeout_keeps_ssthresh() {
    let (h, _) = established_after(false, 10, 1);
    assert_eq!(h.ep.ssthresh(), TcpConfig::default().init_ssthresh);
    let (h, sent) = established_after(true, 10, 0);
    assert_eq!(h.ep.ssthresh(), TcpConfig::default().init_ssthresh);
    assert_eq!(sent, 10);
}

/// The lower ssthresh is what the rule is for: after one SYN timeout (IW 2, so ssthresh 2)
/// the window grows by one packet per window, not per ACK: ACKs of the first two rounds
/// leave cwnd at 2 plus less than one packet, where slow start would reach 4.
#[test]
fn ns2_syn_timeout_slowdown_leaves_slow_start_early() {
    for (slowdown, below) in [(true, true), (false, false)] {
        let (mut h, _) = established_after(slowdown, 2, 1);
        h.at(h.now + ms(100.0));
        h.ack(1); // cwnd 1 -> 2
        h.at(h.now + ms(100.0));
        h.ack(2);
        h.ack(3);
        assert_eq!(h.ep.cwnd() < 3.0, below, "syn_timeout_slowdown {slowdown}: cwnd {}", h.ep.cwnd());
    }
}

/// `tcp.syn_backoff_kept`: ns-2.35 resets `t_backoff_` only in `newack` with an RTT sample
/// (`rtt_active_`), and the retransmitted SYN is not timed, so after one SYN timeout the
/// first data packet's timer is the ITO doubled, 6 s; RFC 6298 (5.7), the default,
/// restarts it from the ITO, 3 s.
#[test]
fn ns2_syn_backoff_kept_doubles_the_first_data_timer() {
    for (kept, want_s) in [(true, 6.0), (false, 3.0)] {
        let c = TcpConfig {
            handshake: true,
            init_cwnd: 2,
            ito_s: 3.0,
            iw_after_syn_loss: Some(1),
            syn_backoff_kept: kept,
            ..TcpConfig::default()
        };
        let mut h = Harness::sender(c, 10);
        h.open();
        h.fire_rto();
        h.at(h.now + ms(100.0));
        let t0 = h.now;
        let p = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
        assert_eq!(seqs(&h.deliver(p)), vec![0]);
        let at = h.ep.rto_deadline().expect("the data timer runs");
        assert!(((at - t0) as f64 * 1e-9 - want_s).abs() < 1e-6, "syn_backoff_kept {kept}: {}", at - t0);
    }
}
