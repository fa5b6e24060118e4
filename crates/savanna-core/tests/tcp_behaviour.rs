//! Behavioural tests of the TCP model on small, fully controlled scenarios: slow-start
//! timing against its closed form, the ITO and its backoff on SYN / first-packet loss,
//! NewReno partial ACKs versus Reno, no spurious fast retransmit from go-back-N duplicates after
//! a timeout (RFC 6582's `recover`), and a single long flow filling the bottleneck.
//! Losses are injected with `[[faults]]` so each test knows exactly which packet is lost.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::metrics::{FlowRecord, RunOutput};
use std::path::Path;

fn sim(toml: &str) -> RunOutput {
    let sc = load(toml, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid scenario");
    run(&sc).expect("run")
}

/// One host pair, 10 Gb/s everywhere (serialisation ~1.2 us per hop, negligible), base RTT
/// `rtt_ms` (access 1 ms each side), one flow of `size` packets at t = 0.
fn one_flow(rtt_ms: f64, size: u64, tcp: &str, faults: &str) -> FlowRecord {
    let out = one_flow_run(rtt_ms, size, tcp, faults);
    assert_eq!(out.flows.len(), 1);
    out.flows[0].clone()
}

/// `one_flow`'s scenario with `extra` (faults, a trace section) appended; the whole output.
fn one_flow_run(rtt_ms: f64, size: u64, tcp: &str, extra: &str) -> RunOutput {
    let bn = rtt_ms / 2.0 - 2.0;
    let toml = format!(
        r#"
duration_s = 60.0
[topology]
type = "dumbbell"
pairs = 1
access_rate_mbps = 10000.0
access_delay_ms = 1.0
bottleneck_rate_mbps = 10000.0
bottleneck_delay_ms = {bn}
bottleneck_queue = {{ type = "droptail", limit_pkts = 1000 }}
[tcp]
{tcp}
[[traffic]]
type = "flows"
flows = [{{ start_s = 0.0, size_pkts = {size}, src = "src0", dst = "dst0" }}]
{extra}
"#
    );
    sim(&toml)
}

/// Slow start from initial window w, one ACK per segment, cwnd += 1 per ACK: round k
/// carries w 2^(k-1) packets, so d packets need r rounds with w (2^r - 1) >= d.
fn rounds(d: u64, w: u64) -> u64 {
    let mut r = 0;
    while w * ((1u64 << r) - 1) < d {
        r += 1;
    }
    r
}

#[test]
fn short_flow_completes_in_handshake_plus_slow_start_rounds() {
    let rtt = 0.1;
    for &iw in &[1u64, 2, 4, 10] {
        for &d in &[1u64, 2, 3, 7, 20, 45, 100] {
            let tcp = format!("init_cwnd = {iw}\nmax_window = 1000\nhandshake = true");
            let f = one_flow(100.0, d, &tcp, "");
            let want = rounds(d, iw) as f64 * rtt + rtt / 2.0; // SYN/SYN-ACK + rounds - 1 + one way
            let got = f.fct_s.expect("finished");
            assert!((got - want).abs() < 1e-3, "iw {iw} d {d}: fct {got}, closed form {want}");
            assert_eq!(f.retransmits, 0);

            let tcp = format!("init_cwnd = {iw}\nmax_window = 1000\nhandshake = false");
            let f = one_flow(100.0, d, &tcp, "");
            let want = (rounds(d, iw) - 1) as f64 * rtt + rtt / 2.0;
            let got = f.fct_s.expect("finished");
            assert!((got - want).abs() < 1e-3, "no handshake, iw {iw} d {d}: fct {got}, closed form {want}");
        }
    }
}

#[test]
fn syn_loss_costs_exactly_the_ito_then_twice_it() {
    for &ito in &[3.0f64, 1.0] {
        let tcp = format!("ito_s = {ito}\ninit_cwnd = 2");
        let base = one_flow(100.0, 20, &tcp, "").fct_s.unwrap();
        let one = r#"[[faults]]
link = "src0->left"
flow = 0
kind = "syn"
"#;
        let f1 = one_flow(100.0, 20, &tcp, one);
        assert_eq!(f1.timeouts, 1);
        assert_eq!(f1.syn_drops, 1);
        assert!((f1.fct_s.unwrap() - base - ito).abs() < 1e-6, "ito {ito}: {} vs {} + {ito}", f1.fct_s.unwrap(), base);
        let two = format!("{one}\n[[faults]]\nlink = \"src0->left\"\nflow = 0\nkind = \"syn\"\noccurrence = 2\n");
        let f2 = one_flow(100.0, 20, &tcp, &two);
        assert_eq!(f2.timeouts, 2);
        assert_eq!(f2.syn_drops, 2);
        // The second SYN waits a backed-off timer: ITO, then 2 ITO.
        assert!(
            (f2.fct_s.unwrap() - base - 3.0 * ito).abs() < 1e-6,
            "ito {ito}: {} vs {} + 3 ito",
            f2.fct_s.unwrap(),
            base
        );
    }
}

#[test]
fn first_data_packet_loss_without_handshake_costs_the_ito() {
    for &ito in &[3.0f64, 1.0] {
        let tcp = format!("ito_s = {ito}\nhandshake = false");
        let base = one_flow(100.0, 1, &tcp, "").fct_s.unwrap();
        let fault = "[[faults]]\nlink = \"left->right\"\nflow = 0\nkind = \"data\"\nseq = 0\n";
        let f = one_flow(100.0, 1, &tcp, fault);
        assert!(f.first_data_drop);
        assert_eq!(f.timeouts, 1);
        assert!((f.fct_s.unwrap() - base - ito).abs() < 1e-6);
        let fault2 = format!(
            "{fault}\n[[faults]]\nlink = \"left->right\"\nflow = 0\nkind = \"data\"\nseq = 0\noccurrence = 2\n"
        );
        let f = one_flow(100.0, 1, &tcp, &fault2);
        assert_eq!(f.timeouts, 2);
        assert!((f.fct_s.unwrap() - base - 3.0 * ito).abs() < 1e-6);
    }
}

fn two_losses(variant: &str) -> FlowRecord {
    let tcp = format!("variant = \"{variant}\"\ninit_cwnd = 2\nmax_window = 1000");
    // Slow start from 2 sends rounds of 2, 4, 8, 16, 32 ...: seqs 30..61 form the fifth
    // round; losing 40 and 44 puts two losses in one window.
    let faults = "[[faults]]\nlink = \"left->right\"\nflow = 0\nkind = \"data\"\nseq = 40\n\n[[faults]]\nlink = \
        \"left->right\"\nflow = 0\nkind = \"data\"\nseq = 44\n";
    one_flow(100.0, 200, &tcp, faults)
}

#[test]
fn newreno_recovers_two_losses_with_a_partial_ack() {
    let f = two_losses("newreno");
    assert_eq!(f.timeouts, 0, "{f:?}");
    assert_eq!(f.fast_retransmits, 1, "one fast retransmit; the second hole is repaired by the partial ACK");
    assert_eq!(f.retransmits, 2);
    assert!(f.fct_s.is_some());
}

#[test]
fn reno_repairs_a_second_loss_in_a_window_with_a_second_fast_retransmit() {
    // RFC 5681 3.2 (Reno has no `recover`; ns-2's RenoTcpAgent checks it only after a
    // timeout): Reno leaves recovery on the partial ACK, and the duplicate ACKs for the second
    // hole start a second fast retransmit, halving the window again.
    let f = two_losses("reno");
    assert!(f.fct_s.is_some());
    assert_eq!(f.fast_retransmits, 2, "{f:?}");
    assert_eq!(f.timeouts, 0, "{f:?}");
    let nr = two_losses("newreno");
    assert!(f.fct_s.unwrap() > nr.fct_s.unwrap(), "Reno is slower than NewReno here");
}

#[test]
fn tahoe_falls_back_to_slow_start() {
    let f = two_losses("tahoe");
    assert!(f.fct_s.is_some());
    assert!(f.fast_retransmits >= 1);
    // Go-back-N from the first hole resends packets that were already delivered.
    assert!(f.retransmits > 2, "{f:?}");
}

#[test]
fn single_long_flow_keeps_a_bdp_buffered_bottleneck_busy() {
    // 10 Mb/s, RTT 100 ms: BDP = 10e6 * 0.1 / 12000 = 83.3 packets; buffer 84.
    let toml = r#"
duration_s = 300.0
[topology]
type = "dumbbell"
pairs = 1
access_rate_mbps = 100.0
access_delay_ms = 5.0
bottleneck_rate_mbps = 10.0
bottleneck_delay_ms = 40.0
bottleneck_queue = { type = "droptail", limit_pkts = 84 }
[tcp]
max_window = 1000
[[traffic]]
type = "persistent"
count = 1
"#;
    let out = sim(toml);
    let q = out.summary.queues.iter().find(|q| q.name == "left->right").unwrap();
    assert!(q.utilisation > 0.95, "utilisation {}", q.utilisation);
    assert!(q.dropped > 0, "the flow must have probed past the buffer");
}

fn one_request(size: u64, tcp: &str) -> FlowRecord {
    let toml = format!(
        r#"
duration_s = 60.0
[topology]
type = "dumbbell"
pairs = 1
access_rate_mbps = 10000.0
access_delay_ms = 1.0
bottleneck_rate_mbps = 10000.0
bottleneck_delay_ms = 48.0
[tcp]
{tcp}
[[traffic]]
type = "flows"
mode = "request_response"
flows = [{{ start_s = 0.0, size_pkts = {size}, src = "src0", dst = "dst0" }}]
"#
    );
    sim(&toml).flows[0].clone()
}

#[test]
fn request_response_takes_handshake_request_and_response_rounds() {
    // SYN/SYN-ACK (1 RTT), the request travels one way, the response's r slow-start
    // rounds take r - 1 RTTs and a last one-way trip: (r + 1) RTT in all.
    for &iw in &[1u64, 2, 10] {
        for &d in &[1u64, 5, 30] {
            let f = one_request(d, &format!("init_cwnd = {iw}\nmax_window = 1000"));
            let want = (rounds(d, iw) + 1) as f64 * 0.1;
            let got = f.fct_s.expect("finished");
            assert!((got - want).abs() < 1e-3, "iw {iw} d {d}: fct {got}, closed form {want}");
            assert_eq!(f.delivered_pkts, d, "delivered counts the response only");
            // The data flows from the server (src0) to the client (dst0).
            assert_eq!((&*f.src, &*f.dst), ("src0", "dst0"));
        }
    }
}

#[test]
fn delayed_acks_slow_slow_start_down() {
    // With an ACK per two segments the window grows by about half per round, so a
    // 100-packet flow needs more rounds than with an ACK per segment.
    let plain = one_flow(100.0, 100, "init_cwnd = 2\nmax_window = 1000", "").fct_s.unwrap();
    let delayed = one_flow(100.0, 100, "init_cwnd = 2\nmax_window = 1000\ndelayed_ack = true", "").fct_s.unwrap();
    assert!(delayed >= plain + 0.1 - 1e-3, "delayed {delayed} vs per-segment {plain}");
    // A lone last segment is acknowledged by the timer, which does not delay completion.
    let one = one_flow(100.0, 1, "delayed_ack = true", "").fct_s.unwrap();
    assert!((one - 0.15).abs() < 1e-3, "{one}");
}

#[test]
fn teardown_exchanges_fins_without_changing_completion() {
    // The FIN exchange comes after the last data packet, so the FCT is unchanged; the
    // connection's endpoints are released only after both FINs are acknowledged.
    for mode in ["bulk", "request_response"] {
        let toml = |teardown: bool| {
            format!(
                r#"
duration_s = 30.0
[topology]
type = "dumbbell"
pairs = 1
access_rate_mbps = 10000.0
access_delay_ms = 1.0
bottleneck_rate_mbps = 10000.0
bottleneck_delay_ms = 48.0
[tcp]
teardown = {teardown}
[[traffic]]
type = "flows"
mode = "{mode}"
flows = [{{ start_s = 0.0, size_pkts = 20, src = "src0", dst = "dst0" }}]
"#
            )
        };
        let plain = sim(&toml(false));
        let fin = sim(&toml(true));
        assert_eq!(plain.flows[0].fct_s, fin.flows[0].fct_s, "{mode}");
        assert_eq!(fin.flows[0].data_pkts_sent, plain.flows[0].data_pkts_sent);
        // Two FINs and the ACK of the second cross the network on top of the plain run.
        assert_eq!(fin.summary.packets_created, plain.summary.packets_created + 3, "{mode}");
        assert_eq!(fin.summary.packets_in_network_at_end, 0);
    }
}

#[test]
fn a_lost_fin_is_retransmitted() {
    let toml = |fault: &str| {
        format!(
            r#"
duration_s = 30.0
[topology]
type = "dumbbell"
pairs = 1
[tcp]
teardown = true
[[traffic]]
type = "flows"
flows = [{{ start_s = 0.0, size_pkts = 5, src = "src0", dst = "dst0" }}]
{fault}
"#
        )
    };
    let base = sim(&toml(""));
    // Data packets are sequence numbers 0..4; the data sender's FIN is number 5.
    let lost = sim(&toml("[[faults]]\nlink = \"left->right\"\nflow = 0\nkind = \"fin\"\nseq = 5\n"));
    assert_eq!(lost.flows[0].fct_s, base.flows[0].fct_s, "losing the FIN does not delay the data");
    assert_eq!(lost.flows[0].timeouts, 1, "the FIN is repaired by the retransmission timer");
    assert_eq!(lost.summary.packets_dropped, 1);
    assert_eq!(lost.summary.packets_in_network_at_end, 0, "both sides closed after the repair");
    assert_eq!(lost.flows[0].retransmits, 0, "FIN retransmissions are not data retransmissions");
}

#[test]
fn traces_record_the_senders_state_after_each_event() {
    let toml = r#"
duration_s = 30.0
[topology]
type = "dumbbell"
pairs = 1
[tcp]
init_cwnd = 2
[[traffic]]
type = "flows"
flows = [
    { start_s = 0.0, size_pkts = 20, src = "src0", dst = "dst0" },
    { start_s = 0.0, size_pkts = 20, src = "src0", dst = "dst0" },
]
[trace]
flows = [0]
[[faults]]
link = "src0->left"
flow = 0
kind = "syn"
"#;
    let out = sim(toml);
    assert!(out.tracing);
    assert!(out.traces.iter().all(|t| t.flow_id == 0), "only the listed flow is traced");
    let sender: Vec<_> = out.traces.iter().filter(|t| t.side == 0).collect();
    assert_eq!(sender[0].event, "open");
    let to = sender.iter().find(|t| t.event == "timeout").expect("the lost SYN's timeout is traced");
    assert_eq!(to.timeouts, 1);
    assert!((to.t_s - 3.0).abs() < 1e-9, "the SYN is resent after the ITO, at {}", to.t_s);
    // Slow start: every ACK of new data adds one packet to cwnd, from 2 up to 21.
    let cw: Vec<f64> = sender.iter().filter(|t| t.event == "packet" && t.snd_una > 0).map(|t| t.cwnd_pkts).collect();
    assert_eq!(cw.first().copied(), Some(3.0));
    assert!(cw.windows(2).all(|w| w[1] == w[0] + 1.0), "{cw:?}");
    assert_eq!(cw.last().copied(), Some(22.0));
}

#[test]
fn after_a_timeout_duplicates_of_resent_segments_do_not_start_a_fast_retransmit() {
    // RFC 6582 section 3.2 step 2: after a timeout, `recover` is the highest segment sent, and
    // three duplicate ACKs start a fast retransmit only if they cover MORE than it. Here the
    // fifth slow-start round (seqs 30..61) loses 40, 42, 44 and 46, and the fast retransmission
    // of 40 is lost too, so the timer repairs them. Go-back-N then resends 40 (cwnd 1), 42-43
    // (cwnd 2), 44-46 (cwnd 3), and with 46 resends 47-49, which the receiver already holds:
    // once 46 fills the last hole the ACK lands exactly on `recover`, and the copies of 47-49
    // each raise a duplicate of it. Those duplicates say nothing about a new loss; a sender
    // that accepts an ACK equal to `recover` (as ns-3 3.44 does) would halve its window again
    // and start a spurious recovery.
    let tcp = "variant = \"newreno\"\ninit_cwnd = 2\nmax_window = 1000";
    let lose = |seq: u64, occurrence: u64| {
        format!(
            "[[faults]]\nlink = \"left->right\"\nflow = 0\nkind = \"data\"\nseq = {seq}\noccurrence = {occurrence}\n\n"
        )
    };
    let faults = [lose(40, 1), lose(40, 2), lose(42, 1), lose(44, 1), lose(46, 1)].concat();
    let out = one_flow_run(100.0, 300, tcp, &format!("[trace]\nflows = [0]\n{faults}"));
    let f = &out.flows[0];
    assert!(f.fct_s.is_some());
    assert_eq!(f.drops, 5, "{f:?}");
    assert_eq!(f.timeouts, 1, "{f:?}");
    assert_eq!(f.fast_retransmits, 1, "only the first loss starts a fast retransmit: {f:?}");

    let sender: Vec<_> = out.traces.iter().filter(|t| t.side == 0).collect();
    let at = sender.iter().position(|t| t.event == "timeout").expect("the lost retransmission times out");
    let recover = sender[at].snd_max;
    let after = &sender[at + 1..];
    // The scenario does what it is for: at least three duplicate ACKs of exactly `recover`.
    let first = after.iter().position(|t| t.snd_una == recover).expect("the ACK reaches recover");
    let dups = after[first + 1..].iter().take_while(|t| t.event == "packet" && t.snd_una == recover).count();
    assert!(dups >= 3, "{dups} duplicate ACKs of recover = {recover}");
    assert!(after.iter().all(|t| !t.in_recovery), "no recovery after the timeout");
    // ssthresh was set once by the fast retransmit and once by the timeout, never again.
    let ss_after = after.iter().map(|t| t.ssthresh_pkts).fold(f64::NAN, f64::min);
    assert_eq!(ss_after, sender[at].ssthresh_pkts, "ssthresh not halved again by the duplicates");
}
