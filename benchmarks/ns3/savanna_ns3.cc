// savanna_ns3.cc: Savanna's dumbbell scenario (scenarios/dumbbell-droptail.toml and
// scenarios/dumbbell-red.toml) in ns-3 3.44, for the side-by-side comparison of speed,
// memory and fidelity (benchmarks/vs_ns3.py). Built by build.sh against the ns-3 wheel
// from PyPI.
//
// It replays the exact flow list Savanna generated (--flows CSV: flow_id,start_s,size_pkts,
// pair) and writes one row per flow (--out CSV) plus <out>.summary.json.
//
// What it mirrors, and the ns-3 attribute behind each choice:
//
// Topology (Savanna's dumbbell builder): N sender hosts src_i, each on a 100 Mb/s, 5 ms
// point-to-point link to router `left`; `left`-`right` the bottleneck, 10 Mb/s, 40 ms;
// `right` to N receiver hosts dst_i on 100 Mb/s, 5 ms links. Base RTT 100 ms. A flow on
// pair i goes from src_i to dst_i. IPv4, one /30 per link, global routing.
//
// Queues. Every PointToPointNetDevice TxQueue is a DropTailQueue of MaxSize 1p and flow
// control is on (the helper's default), so the traffic-control queue disc is where packets
// wait. ns-3 still holds ONE packet in the device queue while another is on the wire (the
// NetDeviceQueue wakes the queue disc as soon as the device dequeues for transmission), so
// a packet waits in "queue disc + 1". Savanna's queue (like ns-2's) holds every waiting
// packet. With --compensate 1 (the default) the bottleneck queue discs (both directions)
// get limit - 1 (and RED thresholds - 1) so the total waiting room equals Savanna's:
// DropTail 8 -> FifoQueueDisc 7p (+1 device slot = 8 waiting); RED 80/12/40 -> 79/11/39.
// --compensate 0 installs the nominal values (8p; RED 80p, MinTh 12, MaxTh 40).
//   - bottleneck left->right: FifoQueueDisc (droptail) or RedQueueDisc: MaxSize, MinTh,
//     MaxTh, LInterm = 1/max_p = 10, QW = 1/512, Gentle true, Wait true, UseEcn false,
//     MeanPktSize 1500, LinkBandwidth/LinkDelay = the bottleneck's (idle-time decay of avg).
//   - bottleneck right->left (the ACK direction): the same kind and parameters (Savanna's
//     reverse_queue defaults to bottleneck_queue).
//   - every other device: FifoQueueDisc 1000p (Savanna's access_queue, DropTail 1000).
//   The queue discs are installed before IP addresses are assigned, so no default
//   fq_codel root queue disc is ever installed.
//
// TCP (Config::SetDefault before any socket exists):
//   ns3::TcpL4Protocol::SocketType = ns3::TcpNewReno (no ABC: +1 MSS per new ACK in slow start;
//       --cc cubic: ns3::TcpCubic, below)
//   ns3::TcpL4Protocol::RecoveryType = ns3::TcpClassicRecovery (NewReno fast recovery; the
//       3.44 default is PRR). It sends against a scoreboard of stand-in SACKs rather than
//       an inflated window and credits fewer duplicate ACKs than RFC 6582: see
//       DupAckCreditRecovery below and README.md. --recovery dupack-credit selects that class.
//   ns3::TcpSocket::SegmentSize = 1460 (data packets: 20 IP + 20 TCP + 1460 = 1500 B at IP;
//       PPP adds 2 B on the wire, so ns-3 sends 1502 B per data packet and 42 B per pure ACK
//       where Savanna sends 1500 and 40: 0.13 % more transmission time per data packet)
//   ns3::TcpSocket::InitialCwnd = 2 (segments)
//   ns3::TcpSocket::DelAckCount = 1 (ACK every segment: Savanna's delayed_ack = false)
//   ns3::TcpSocket::RcvBufSize = 128 * 1460 (max_window = 128 packets: the advertised
//       window; WindowScaling true gives shift 2, and 186880 is a multiple of 4)
//   ns3::TcpSocket::SndBufSize = 2 * 128 * 1460 (never the limit)
//   ns3::TcpSocket::ConnTimeout = 3 s (SYN timeout = the ITO; doubled per retry)
//   ns3::TcpSocket::ConnCount = 16, ns3::TcpSocket::DataRetries = 1000 (nothing abandoned)
//   ns3::RttEstimator::InitialEstimation = ITO - ClockGranularity = 2.999 s: before the first
//       RTT sample ns-3's RTO is estimate + max(G, 4 * 0) = 3.000 s, the ITO for data (used
//       when the SYN was retransmitted, so the handshake gave no sample, Karn)
//   ns3::TcpSocketBase::MinRto = 0.2 s, ClockGranularity = 1 ms (RTO = SRTT + max(G, 4 RTTVAR))
//   ns3::TcpSocketBase::Sack = --sack (default 0), Timestamp = false, WindowScaling = true
//   ns3::TcpSocketBase::LimitedTransmit = --limited-transmit (default 0; the SACK
//       comparison turns it on in both simulators: RFC 3042, ns-3's own default)
//   --cc cubic: SocketType = ns3::TcpCubic with its 3.44 defaults (Beta 0.7, C 0.4,
//       FastConvergence, TcpFriendliness, CubicDelta 10 ms, CntClamp 20, HyStart = Ha &
//       Rhee's ACK-train + delay detection from 16 segments; --hystart 0 turns it off)
//   --sack 1: TcpSocketBase::Sack = true (RFC 6675 scoreboard); --recovery prr selects
//       ns3::TcpPrrRecovery (3.44's default RecoveryType: PRR-CRB, PRR-SSRB on a "safe" ACK)
//   ns3::TcpSocketBase::ReTxThreshold = 3 (default; dupack_threshold)
//   ns3::TcpSocketBase::MaxSegLifetime = 0.1 s (TIME_WAIT = 0.2 s instead of 240 s)
//   ns3::TcpSocketBase::UseEcn = Off (default)
//   --karn-syn-fix 1 (default): each sender socket gets a KarnSynRtt estimator (below) that
//       drops the SYN-ACK's RTT sample when the SYN was retransmitted. ns-3 3.44 takes that
//       sample from the first SYN (a Karn's-rule bug), so after one lost SYN the data RTO is
//       about 9.3 s instead of the ITO. --karn-syn-fix 0 keeps ns-3's behaviour.
//
// Known ns-3 3.44 behaviour that differs from Savanna and is NOT changed here:
//   - the retransmission timer is not restarted by a fast retransmit (RFC 6298 5.1: only
//     started if not running), where Savanna, ns-2 and Linux restart it. A fast retransmit
//     sent about one RTT after the last new ACK then often meets an RTO (min 0.2 s) before
//     its partial ACK returns; the column timeouts_in_recovery counts these.
//   - connections end with FIN / FIN+ACK / ACK (about 4 small packets per flow, two of them
//     through the forward bottleneck queue, where they take a slot of the packet-counted
//     buffer); vs_ns3.py turns on Savanna's `teardown`, which models the same exchange.
//   - PPP framing (2 B per packet, see SegmentSize above).
//   - two departures from RFC 6582 in NewReno without SACK, each with a diagnostic switch
//     that restores the RFC's rule (not used for the headline comparison):
//     fast recovery credits fewer duplicate ACKs (--recovery dupack-credit, class
//     DupAckCreditRecovery), and a new fast retransmit may start on duplicate ACKs equal to
//     the recovery point instead of beyond it (--recover-rule rfc6582, class
//     Rfc6582RecoverSocket). benchmarks/ns3/README.md gives both with their effect on FCT.
//   - CUBIC forgets W_max on a timeout (TcpCubic::CongestionStateSet resets it on CA_LOSS),
//     as RFC 9438 4.8 and Linux do; --cubic-timeout keep-wmax (class KeepWmaxCubic) keeps
//     it, a diagnostic of that one rule (README.md).
//   - in fast recovery only the first partial ACK restarts the retransmission timer
//     (ProcessAck: NewAck(ackNumber, m_isFirstPartialAck)), with SACK as without; RFC 6298
//     5.3 restarts it on every ACK of new data: --partial-ack-timer every (class
//     EveryAckTimerSocket). TcpCubic's slow start adds every delivered segment an ACK
//     reports: --cubic-slow-start count|per-ack (class SlowStartTallyCubic) counts such
//     ACKs, and with per-ack bounds them to one segment (RFC 5681 3.1). Both diagnostics.
//
// Flows. At start_s the sender opens a socket (Bind, Connect: the first SYN leaves at that
// instant = start). Once connected it hands size_pkts * 1460 bytes to the socket (refilling
// from the send callback) and calls Close() when all of it has been acknowledged, so the FIN
// exchange starts after the flow's last byte was delivered (Savanna releases a flow when its
// data is acknowledged). Closing earlier (right after the last Send) would put the socket in
// FIN_WAIT_1 during loss recovery, a path on which ns-3 3.44 withholds data and aborts on an
// assert without SACK and limited transmit. Each receiver host has one listening socket
// (port 5000); an accepted connection is matched to its flow by the sender's address and
// ephemeral port. end = the instant the receiving socket has delivered all size_pkts * 1460
// bytes in order to the application; fct = end - start. The receiver closes its side when
// the sender's FIN arrives. Sockets are released when they reach CLOSED, so finished
// connections do not accumulate (TcpL4Protocol and the endpoint demux stay small).
//
// Per-flow columns (sender socket trace sources):
//   data_pkts_sent       "Tx" with a payload (first transmissions and retransmissions)
//   retransmits          "Retransmission" (data retransmissions)
//   fast_retransmits     "CongState" entering CA_RECOVERY
//   timeouts             "RTO" doubling: ns-3 doubles m_rto on every retransmission timeout,
//                        SYN timeouts included (Savanna counts those too); SYN-ACK timeouts
//                        at the receiver are not seen
//   timeouts_in_recovery timeouts that fired while in CA_RECOVERY (see above)
//   delivered_bytes      bytes delivered in order to the receiving application
//
// Summary (<out>.summary.json): sim_seconds, wall_seconds (around Simulator::Run only),
// setup_seconds, events (Simulator::GetEventCount), flows_started/finished, and for both
// bottleneck queue discs the QueueDisc::Stats counters (arrivals, enqueued, departed,
// dropped, dropped_by_reason with ns-3's reason strings) plus, forward direction, the packets
// and bytes the device put on the wire (PhyTxEnd, PPP header included) and utilisation =
// tx_bytes * 8 / (rate * duration).

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;

namespace
{

// ---------------------------------------------------------------- options

struct Options
{
    std::string flows;
    std::string out;
    std::string queue = "droptail";
    double duration = 500.0;
    uint32_t pairs = 20;
    uint64_t seed = 1;

    double accessRateMbps = 100.0;
    double accessDelayMs = 5.0;
    double bottleneckRateMbps = 10.0;
    double bottleneckDelayMs = 40.0;
    uint32_t accessLimit = 1000;

    uint32_t droptailLimit = 8;
    uint32_t redLimit = 80;
    double redMinTh = 12.0;
    double redMaxTh = 40.0;
    double redMaxP = 0.1;
    double redWq = 1.0 / 512.0;
    bool compensate = true;
    int64_t traceFlow = -1;
    bool karnSynFix = true;
    std::string recovery = "classic";
    std::string recoverRule = "ns3";
    std::string cc = "newreno";
    bool sack = false;
    bool limitedTransmit = false;
    bool hystart = true;
    std::string cubicTimeout = "ns3";
    std::string cubicSlowStart = "ns3";
    std::string partialAckTimer = "ns3";

    uint32_t mss = 1460;
    uint32_t initCwnd = 2;
    uint32_t maxWindow = 128;
    double minRto = 0.2;
    double ito = 3.0;
    double granularity = 0.001;
    double msl = 0.1;
};

[[noreturn]] void
Usage(const std::string& msg)
{
    if (!msg.empty())
    {
        std::cerr << "savanna-ns3: error: " << msg << " (--help for usage)\n";
        std::exit(2);
    }
    std::cout
        << "usage: savanna-ns3 --flows FILE.csv --out FILE.csv [--queue droptail|red]\n"
           "         [--duration S] [--pairs N] [--seed N] [--compensate 0|1]\n"
           "         [--karn-syn-fix 0|1] [--recovery classic|dupack-credit|prr]\n"
           "         [--recover-rule ns3|rfc6582] [--cc newreno|cubic] [--sack 0|1]\n"
           "         [--limited-transmit 0|1] [--hystart 0|1] [--cubic-timeout ns3|keep-wmax]\n"
           "         [--cubic-slow-start ns3|count|per-ack] [--partial-ack-timer ns3|every]\n"
           "         [--access-rate-mbps X] [--access-delay-ms X] [--access-limit N]\n"
           "         [--bottleneck-rate-mbps X] [--bottleneck-delay-ms X] [--queue-limit N]\n"
           "         [--droptail-limit N] [--red-limit N] [--red-min-th X] [--red-max-th X]\n"
           "         [--red-max-p X] [--red-w-q X] [--mss N] [--init-cwnd N] [--max-window N]\n"
           "         [--min-rto S] [--ito S] [--granularity S] [--msl S] [--trace-flow ID]\n"
           "Options take '--key value' or '--key=value'; '_' may replace '-', and the aliases\n"
           "--bottleneckRate --bottleneckDelay --accessRate --accessDelay --accessLimit\n"
           "--queueLimit --minTh --maxTh --maxP --qW are accepted. --queue-limit sets the\n"
           "limit of whichever bottleneck queue is chosen. --trace-flow prints that flow's TCP\n"
           "segments (both ends) to stderr.\n";
    std::exit(0);
}

double
ParseDouble(const std::string& key, const std::string& v)
{
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x))
    {
        Usage("--" + key + ": not a number: '" + v + "'");
    }
    return x;
}

uint64_t
ParseUint(const std::string& key, const std::string& v)
{
    char* end = nullptr;
    unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || v[0] == '-')
    {
        Usage("--" + key + ": not a non-negative integer: '" + v + "'");
    }
    return x;
}

Options
ParseArgs(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i)
    {
        std::string a = argv[i];
        if (a == "-h" || a == "--help")
        {
            Usage("");
        }
        if (a.rfind("--", 0) != 0)
        {
            Usage("unexpected argument '" + a + "'");
        }
        std::string key = a.substr(2);
        std::string val;
        auto eq = key.find('=');
        if (eq != std::string::npos)
        {
            val = key.substr(eq + 1);
            key = key.substr(0, eq);
        }
        else
        {
            if (i + 1 >= argc)
            {
                Usage("--" + key + " needs a value");
            }
            val = argv[++i];
        }
        for (auto& c : key)
        {
            if (c == '_')
            {
                c = '-';
            }
        }
        // camelCase aliases (ns-3 CommandLine style)
        static const std::map<std::string, std::string> aliases = {
            {"bottleneckRate", "bottleneck-rate-mbps"},
            {"bottleneckDelay", "bottleneck-delay-ms"},
            {"accessRate", "access-rate-mbps"},
            {"accessDelay", "access-delay-ms"},
            {"accessLimit", "access-limit"},
            {"queueLimit", "queue-limit"},
            {"minTh", "red-min-th"},
            {"maxTh", "red-max-th"},
            {"maxP", "red-max-p"},
            {"qW", "red-w-q"},
        };
        if (auto it = aliases.find(key); it != aliases.end())
        {
            key = it->second;
        }
        if (key == "flows")
            o.flows = val;
        else if (key == "out")
            o.out = val;
        else if (key == "queue")
            o.queue = val;
        else if (key == "duration")
            o.duration = ParseDouble(key, val);
        else if (key == "pairs")
            o.pairs = ParseUint(key, val);
        else if (key == "seed")
            o.seed = ParseUint(key, val);
        else if (key == "compensate")
            o.compensate = ParseUint(key, val) != 0;
        else if (key == "karn-syn-fix")
            o.karnSynFix = ParseUint(key, val) != 0;
        else if (key == "recovery")
        {
            if (val != "classic" && val != "dupack-credit" && val != "prr")
                Usage("--recovery: '" + val + "' is not one of classic, dupack-credit, prr");
            o.recovery = val;
        }
        else if (key == "cc")
        {
            if (val != "newreno" && val != "cubic")
                Usage("--cc: '" + val + "' is not one of newreno, cubic");
            o.cc = val;
        }
        else if (key == "sack")
            o.sack = ParseUint(key, val) != 0;
        else if (key == "limited-transmit")
            o.limitedTransmit = ParseUint(key, val) != 0;
        else if (key == "hystart")
            o.hystart = ParseUint(key, val) != 0;
        else if (key == "cubic-timeout")
        {
            if (val != "ns3" && val != "keep-wmax")
                Usage("--cubic-timeout: '" + val + "' is not one of ns3, keep-wmax");
            o.cubicTimeout = val;
        }
        else if (key == "partial-ack-timer")
        {
            if (val != "ns3" && val != "every")
                Usage("--partial-ack-timer: '" + val + "' is not one of ns3, every");
            o.partialAckTimer = val;
        }
        else if (key == "cubic-slow-start")
        {
            if (val != "ns3" && val != "count" && val != "per-ack")
                Usage("--cubic-slow-start: '" + val + "' is not one of ns3, count, per-ack");
            o.cubicSlowStart = val;
        }
        else if (key == "recover-rule")
        {
            if (val != "ns3" && val != "rfc6582")
                Usage("--recover-rule: '" + val + "' is not one of ns3, rfc6582");
            o.recoverRule = val;
        }
        else if (key == "trace-flow")
            o.traceFlow = int64_t(ParseUint(key, val));

        else if (key == "access-rate-mbps")
            o.accessRateMbps = ParseDouble(key, val);
        else if (key == "access-delay-ms")
            o.accessDelayMs = ParseDouble(key, val);
        else if (key == "bottleneck-rate-mbps")
            o.bottleneckRateMbps = ParseDouble(key, val);
        else if (key == "bottleneck-delay-ms")
            o.bottleneckDelayMs = ParseDouble(key, val);
        else if (key == "access-limit")
            o.accessLimit = ParseUint(key, val);
        else if (key == "queue-limit")
            o.droptailLimit = o.redLimit = ParseUint(key, val);
        else if (key == "droptail-limit")
            o.droptailLimit = ParseUint(key, val);
        else if (key == "red-limit")
            o.redLimit = ParseUint(key, val);
        else if (key == "red-min-th")
            o.redMinTh = ParseDouble(key, val);
        else if (key == "red-max-th")
            o.redMaxTh = ParseDouble(key, val);
        else if (key == "red-max-p")
            o.redMaxP = ParseDouble(key, val);
        else if (key == "red-w-q")
            o.redWq = ParseDouble(key, val);
        else if (key == "mss")
            o.mss = ParseUint(key, val);
        else if (key == "init-cwnd")
            o.initCwnd = ParseUint(key, val);
        else if (key == "max-window")
            o.maxWindow = ParseUint(key, val);
        else if (key == "min-rto")
            o.minRto = ParseDouble(key, val);
        else if (key == "ito")
            o.ito = ParseDouble(key, val);
        else if (key == "granularity")
            o.granularity = ParseDouble(key, val);
        else if (key == "msl")
            o.msl = ParseDouble(key, val);
        else
            Usage("unknown option --" + key);
    }
    if (o.flows.empty() || o.out.empty())
    {
        Usage("--flows and --out are required");
    }
    if (o.queue != "droptail" && o.queue != "red")
    {
        Usage("--queue: allowed values are droptail, red (got '" + o.queue + "')");
    }
    if (!(o.duration > 0) || o.pairs < 1 || o.mss < 1 || o.initCwnd < 1 || o.maxWindow < 1)
    {
        Usage("--duration, --pairs, --mss, --init-cwnd and --max-window must be positive");
    }
    if (!(o.redMaxP > 0 && o.redMaxP <= 1) || !(o.redMinTh < o.redMaxTh))
    {
        Usage("RED needs 0 < max_p <= 1 and min_th < max_th");
    }
    if (!(o.ito > o.granularity))
    {
        Usage("--ito must exceed --granularity");
    }
    if (o.partialAckTimer != "ns3" && o.recoverRule != "ns3")
    {
        Usage("--partial-ack-timer every and --recover-rule rfc6582 are separate diagnostics: "
              "give one of them");
    }
    if (o.cubicTimeout != "ns3" && o.cubicSlowStart != "ns3")
    {
        Usage("--cubic-timeout keep-wmax and --cubic-slow-start count|per-ack are separate "
              "diagnostics: give one of them");
    }
    return o;
}

// ---------------------------------------------------------------- this program's ns-3 classes

// The TypeId of one of the classes below: group "Internet", default constructor.
template <class T, class Parent>
TypeId
SavannaTypeId(const char* name)
{
    TypeId tid(name);
    tid.SetParent<Parent>();
    tid.SetGroupName("Internet");
    tid.template AddConstructor<T>();
    return tid;
}

// ---------------------------------------------------------------- RTT estimator

// RttMeanDeviation that can be told to drop the next sample. ns-3 3.44 breaks Karn's rule
// for a retransmitted SYN: the SYN's RTT-history entry has length 0, so the retransmission
// never marks it (UpdateRttHistory looks for seq < entry.seq + 0) and the SYN-ACK yields a
// sample measured from the FIRST SYN (ITO + RTT, e.g. 3.1 s), giving an RTO of about 9.3 s
// for the flow's data. The sender arms this when its SYN is retransmitted, so the sample is
// dropped and, as in Savanna (RFC 6298 5.7), data transmission starts from the ITO.
class KarnSynRtt : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = SavannaTypeId<KarnSynRtt, RttMeanDeviation>("savanna::KarnSynRtt");
        return tid;
    }

    void Measurement(Time m) override
    {
        if (m_skipNext)
        {
            m_skipNext = false;
            return;
        }
        RttMeanDeviation::Measurement(m);
    }

    bool m_skipNext = false;
};

NS_OBJECT_ENSURE_REGISTERED(KarnSynRtt);

// ---------------------------------------------------------------- recovery (diagnostic)

// A diagnostic, not the default (--recovery dupack-credit). Without SACK, ns-3 3.44 stands in
// a "Reno SACK" for each duplicate ACK and computes the data in flight from that scoreboard;
// the window itself is not inflated (m_cWndInfl is only traced). Two duplicate ACKs are never
// credited: the first two, received before fast retransmit, mark nothing (only the third and
// later ones do). And at each partial ACK the new head, which a stand-in SACK had marked, is
// unmarked and set lost, so one more credit is lost per partial ACK. RFC 6582 credits every
// duplicate ACK (cwnd = ssthresh + 3 SMSS, + 1 SMSS per further one) and, at a partial ACK,
// deflates by the data acknowledged and adds back one SMSS. This class adds those credits
// to cWnd (2 segments at entry, 1 per partial ACK), so that ns-3 sends what RFC 6582 allows;
// ns-3 sets cWnd to ssthresh on leaving recovery. Used to measure how much of the FCT gap
// this accounting explains; see benchmarks/ns3/README.md.
class DupAckCreditRecovery : public TcpClassicRecovery
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = SavannaTypeId<DupAckCreditRecovery, TcpClassicRecovery>("savanna::DupAckCreditRecovery");
        return tid;
    }

    DupAckCreditRecovery() = default;

    DupAckCreditRecovery(const DupAckCreditRecovery& other) = default;

    std::string GetName() const override
    {
        return "DupAckCreditRecovery";
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb,
                       uint32_t dupAckCount,
                       uint32_t unAckDataCount,
                       uint32_t deliveredBytes) override
    {
        TcpClassicRecovery::EnterRecovery(tcb, dupAckCount, unAckDataCount, deliveredBytes);
        // ns-3 marked one stand-in SACK for the dupAckCount duplicate ACKs so far.
        uint32_t uncredited = dupAckCount > 1 ? dupAckCount - 1 : 0;
        tcb->m_cWnd = tcb->m_ssThresh + uncredited * tcb->m_segmentSize;
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        TcpClassicRecovery::DoRecovery(tcb, deliveredBytes, isDupAck);
        if (!isDupAck)
        {
            tcb->m_cWnd += tcb->m_segmentSize; // the unmarked head's credit
        }
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<DupAckCreditRecovery>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(DupAckCreditRecovery);

// A diagnostic, not the default (--recover-rule rfc6582). After a retransmission timeout
// ns-3 3.44 sets its recovery point m_recover to HighTxMark (SND.NXT) and allows a new fast
// retransmit once the cumulative ACK is >= m_recover (RFC 6675's rule for SACK senders:
// HighACK >= RecoveryPoint). RFC 6582, which governs a NewReno sender without SACK, allows
// it only when the ACK "covers more than recover" (recover = the highest sequence number
// transmitted), i.e. ACK > SND.NXT at the timeout, as ns-2 and Savanna do. The two differ
// exactly when the ACK lands on SND.NXT: after a timeout, go-back-N resends segments the
// receiver already holds; once the last hole is filled the ACK jumps to SND.NXT and the
// remaining resent copies each raise a duplicate ACK of that value. RFC 6582 ignores them
// (that is what `recover` is for); ns-3 takes the third as a new loss, halves ssthresh again
// and, without SACK, retransmits one in-flight segment per partial ACK for a whole window.
// The same boundary applies after a fast recovery ends on an ACK equal to m_recover. This
// socket moves the boundary by one byte in both cases, so a new fast retransmit needs an
// ACK beyond the recovery point; everything else is ns-3's. Used to show how much of the
// FCT gap this one rule explains; see benchmarks/ns3/README.md.
class Rfc6582RecoverSocket : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = SavannaTypeId<Rfc6582RecoverSocket, TcpSocketBase>("savanna::Rfc6582RecoverSocket");
        return tid;
    }

  protected:
    void ReTxTimeout() override
    {
        TcpSocketBase::ReTxTimeout();
        if (m_tcb->m_congState == TcpSocketState::CA_LOSS && m_recoverActive)
        {
            // ns-3 leaves CA_LOSS (ignoring duplicate ACKs until then) at an ACK >= m_recover.
            m_recover = SequenceNumber32(m_recover.GetValue() + 1);
        }
    }

    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& tcpHeader) override
    {
        TcpSocketBase::ReceivedAck(packet, tcpHeader);
        // A fast recovery that just ended on an ACK equal to m_recover: duplicates of that
        // ACK must not start another one (RFC 6582 3.2 step 2).
        auto st = m_tcb->m_congState.Get();
        if ((st == TcpSocketState::CA_OPEN || st == TcpSocketState::CA_DISORDER) &&
            m_recoverActive && m_highRxAckMark.Get() == m_recover)
        {
            m_recover = SequenceNumber32(m_recover.GetValue() + 1);
        }
    }
};

NS_OBJECT_ENSURE_REGISTERED(Rfc6582RecoverSocket);

// A diagnostic, not the default (--partial-ack-timer every). In fast recovery ns-3 3.44's
// TcpSocketBase::ProcessAck passes resetRTO = m_isFirstPartialAck to NewAck, so only the
// first partial ACK of a recovery restarts the retransmission timer, with SACK as without:
// RFC 6582 section 4's "Impatient" variant, a NewReno rule. RFC 6298 (5.3) restarts the
// timer on every ACK of new data, and so do Savanna's SACK recovery and Linux. This class
// restarts it on every partial ACK; everything else is ns-3's.
class EveryAckTimerSocket : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = SavannaTypeId<EveryAckTimerSocket, TcpSocketBase>("savanna::EveryAckTimerSocket");
        return tid;
    }

  protected:
    void NewAck(const SequenceNumber32& seq, bool /* resetRTO */) override
    {
        TcpSocketBase::NewAck(seq, true);
    }
};

NS_OBJECT_ENSURE_REGISTERED(EveryAckTimerSocket);

// A diagnostic, not the default (--cubic-timeout keep-wmax). On a retransmission timeout,
// ns-3 3.44's TcpSocketBase::ReTxTimeout first asks the congestion control for ssthresh
// (TcpCubic::GetSsThresh, which also records W_max with fast convergence) and then tells it
// that the socket entered CA_LOSS, on which TcpCubic::CongestionStateSet resets its state,
// W_max included. The first congestion-avoidance epoch after the timeout then starts with
// K = 0 from the window it has at that moment, which is RFC 9438 4.8's rule (and Linux's,
// whose cubic resets the same way). This class ignores the CA_LOSS notice, so the W_max of
// the timeout survives and the next epoch climbs back toward it (concave, K > 0): what
// Savanna's CUBIC did before it followed 4.8. Used to measure that one rule's effect on
// FCT; see benchmarks/ns3/README.md.
class KeepWmaxCubic : public TcpCubic
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = SavannaTypeId<KeepWmaxCubic, TcpCubic>("savanna::KeepWmaxCubic");
        return tid;
    }

    std::string GetName() const override
    {
        return "KeepWmaxCubic";
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState != TcpSocketState::CA_LOSS)
        {
            TcpCubic::CongestionStateSet(tcb, newState);
        }
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<KeepWmaxCubic>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(KeepWmaxCubic);

// A diagnostic, not the default (--cubic-slow-start count|per-ack). In slow start ns-3
// 3.44's TcpCubic::IncreaseWindow adds every segment the ACK reports delivered
// (segmentsAcked, from TcpSocketBase::ProcessAck's currentDelivered: newly SACKed plus newly
// cumulatively acknowledged), with no per-ACK bound and no cap at ssthresh. RFC 5681 3.1
// allows min(N, SMSS) per ACK, and ns-3's own TcpNewReno adds one segment per ACK. Such
// ACKs are common after a retransmission timeout that fires during fast recovery: segments
// sent before the timeout still arrive and a single ACK then reports several. With "count"
// this class behaves exactly as TcpCubic and counts the slow-start ACKs that report more
// than one segment and the segments above one they add, split by whether the socket is in
// CA_LOSS; with "per-ack" it also hands TcpCubic at most one segment per slow-start ACK,
// RFC 5681's rule and Savanna's (slow_start_increase = "per_ack"). Totals go to the summary.
struct SlowStartTally
{
    uint64_t acks = 0;          // IncreaseWindow calls below ssthresh
    uint64_t multiAcks = 0;     // ... reporting more than one segment
    uint64_t extraSegs = 0;     // segments above one per such ACK
    uint64_t lossMultiAcks = 0; // the same two, in CA_LOSS (after a retransmission timeout)
    uint64_t lossExtraSegs = 0;
};

SlowStartTally g_ssTally;
bool g_ssPerAck = false;

class SlowStartTallyCubic : public TcpCubic
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = SavannaTypeId<SlowStartTallyCubic, TcpCubic>("savanna::SlowStartTallyCubic");
        return tid;
    }

    std::string GetName() const override
    {
        return "SlowStartTallyCubic";
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (tcb->m_cWnd < tcb->m_ssThresh && segmentsAcked > 0)
        {
            g_ssTally.acks++;
            if (segmentsAcked > 1)
            {
                const bool loss = tcb->m_congState == TcpSocketState::CA_LOSS;
                g_ssTally.multiAcks++;
                g_ssTally.extraSegs += segmentsAcked - 1;
                g_ssTally.lossMultiAcks += loss ? 1 : 0;
                g_ssTally.lossExtraSegs += loss ? segmentsAcked - 1 : 0;
                if (g_ssPerAck)
                {
                    segmentsAcked = 1;
                }
            }
        }
        TcpCubic::IncreaseWindow(tcb, segmentsAcked);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<SlowStartTallyCubic>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(SlowStartTallyCubic);

// ---------------------------------------------------------------- flows

struct Flow
{
    uint64_t id = 0;
    int64_t startInNs = 0; // requested start (from the CSV)
    uint64_t sizePkts = 0;
    uint32_t pair = 0;
    uint64_t totalBytes = 0;

    int64_t startNs = -1; // first SYN sent
    int64_t endNs = -1;   // last byte delivered in order
    uint64_t queuedBytes = 0;
    uint64_t rxBytes = 0;
    bool connected = false;
    bool closeCalled = false;

    uint64_t dataPktsSent = 0;
    uint64_t retransmits = 0;
    uint64_t timeouts = 0;
    uint64_t fastRetransmits = 0;
    uint64_t timeoutsInRecovery = 0;
    TcpSocketState::TcpCongState_t congState = TcpSocketState::CA_OPEN;

    Ptr<Socket> tx;
    Ptr<Socket> rx;
    Ptr<KarnSynRtt> rtt;
};

std::vector<std::string>
SplitCsv(const std::string& line)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : line)
    {
        if (c == ',')
        {
            out.push_back(cur);
            cur.clear();
        }
        else if (c != '\r' && c != '"')
        {
            cur.push_back(c);
        }
    }
    out.push_back(cur);
    for (auto& s : out)
    {
        size_t a = s.find_first_not_of(" \t");
        size_t b = s.find_last_not_of(" \t");
        s = (a == std::string::npos) ? "" : s.substr(a, b - a + 1);
    }
    return out;
}

// Reads flow_id,start_s,size_pkts,pair (any column order, other columns ignored; a `src`
// column such as "src3" may stand in for `pair`).
std::vector<Flow>
ReadFlows(const Options& o)
{
    std::ifstream in(o.flows);
    if (!in)
    {
        Usage("--flows: cannot read '" + o.flows + "'");
    }
    std::string line;
    std::vector<std::string> header;
    int lineNo = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
        {
            continue;
        }
        header = SplitCsv(line);
        break;
    }
    auto col = [&](const std::string& name) -> int {
        for (size_t i = 0; i < header.size(); ++i)
        {
            if (header[i] == name)
            {
                return int(i);
            }
        }
        return -1;
    };
    int cId = col("flow_id"), cStart = col("start_s"), cSize = col("size_pkts"),
        cPair = col("pair"), cSrc = col("src");
    if (cId < 0 || cStart < 0 || cSize < 0 || (cPair < 0 && cSrc < 0))
    {
        Usage("--flows: the header must name flow_id, start_s, size_pkts and pair");
    }
    std::vector<Flow> flows;
    while (std::getline(in, line))
    {
        ++lineNo;
        if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
        {
            continue;
        }
        auto f = SplitCsv(line);
        auto need = std::max({cId, cStart, cSize, cPair, cSrc});
        std::string where = "--flows " + o.flows + " line " + std::to_string(lineNo);
        if (int(f.size()) <= need)
        {
            Usage(where + ": too few columns");
        }
        Flow fl;
        fl.id = ParseUint("flows", f[cId]);
        double start = ParseDouble("flows", f[cStart]);
        if (!(start >= 0))
        {
            Usage(where + ": start_s must be >= 0");
        }
        fl.startInNs = std::llround(start * 1e9);
        if (f[cSize].empty())
        {
            Usage(where + ": size_pkts is empty (persistent flows are not supported)");
        }
        fl.sizePkts = ParseUint("flows", f[cSize]);
        if (fl.sizePkts < 1)
        {
            Usage(where + ": size_pkts must be >= 1");
        }
        if (cPair >= 0)
        {
            fl.pair = ParseUint("flows", f[cPair]);
        }
        else
        {
            const std::string& s = f[cSrc];
            if (s.rfind("src", 0) != 0)
            {
                Usage(where + ": src must be srcI");
            }
            fl.pair = ParseUint("flows", s.substr(3));
        }
        if (fl.pair >= o.pairs)
        {
            Usage(where + ": pair " + std::to_string(fl.pair) + " is not below --pairs " +
                  std::to_string(o.pairs));
        }
        fl.totalBytes = fl.sizePkts * uint64_t(o.mss);
        flows.push_back(fl);
    }
    return flows;
}

// ---------------------------------------------------------------- the world

const uint16_t kPort = 5000;

std::vector<Flow>* g_flows = nullptr;
NodeContainer g_senders;
std::vector<Ipv4Address> g_senderAddr;
std::vector<Ipv4Address> g_receiverAddr;
// (sender IPv4 address << 16 | sender port) -> flow index, from connect until accept.
std::unordered_map<uint64_t, size_t> g_pending;
uint64_t g_flowsStarted = 0;
uint64_t g_flowsFinished = 0;
uint64_t g_unmatchedAccepts = 0;
uint64_t g_bnTxPackets = 0;
uint64_t g_bnTxBytes = 0;
uint32_t g_sndBuf = 0; // ns3::TcpSocket::SndBufSize
int64_t g_traceFlow = -1;
bool g_rfcRecover = false; // --recover-rule rfc6582
bool g_everyAckTimer = false; // --partial-ack-timer every
bool g_karnSynFix = true;

uint64_t
PeerKey(Ipv4Address a, uint16_t port)
{
    return (uint64_t(a.Get()) << 16) | port;
}

// Connects a trace source by name; a wrong name (another ns-3 version) is fatal, not silent.
void
MustTrace(Ptr<Object> o, const std::string& name, const CallbackBase& cb)
{
    if (!o->TraceConnectWithoutContext(name, cb))
    {
        std::cerr << "savanna-ns3: error: no trace source '" << name << "' on "
                  << o->GetInstanceTypeId().GetName() << "\n";
        std::exit(1);
    }
}

void
ReleaseTx(Flow* f)
{
    f->tx = nullptr;
    f->rtt = nullptr;
}

void
ReleaseRx(Flow* f)
{
    f->rx = nullptr;
}

// A socket that reached CLOSED has left TcpL4Protocol; drop our reference once the current
// event (still inside the socket's own code) has returned.
void
OnTxState(Flow* f, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now)
{
    if (now == TcpSocket::CLOSED)
    {
        Simulator::ScheduleNow(&ReleaseTx, f);
    }
}

void
OnRxState(Flow* f, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now)
{
    if (now == TcpSocket::CLOSED)
    {
        Simulator::ScheduleNow(&ReleaseRx, f);
    }
}

// --trace-flow: one line per TCP segment sent or received by either end of the flow.
void
TraceSegment(std::string what, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    std::fprintf(stderr,
                 "%.9f %s %s len %u\n",
                 Simulator::Now().GetSeconds(),
                 what.c_str(),
                 TcpHeader::FlagsToString(h.GetFlags()).c_str(),
                 p->GetSize());
    std::cerr << "    " << h << "\n";
}

void
OnTx(Flow* f, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
    {
        ++f->dataPktsSent;
    }
}

void
OnRetransmission(Flow* f,
                 Ptr<const Packet>,
                 const TcpHeader&,
                 const Address&,
                 const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++f->retransmits;
}

// ns-3 doubles m_rto (capped at 60 s) on every retransmission timeout, data or SYN; the
// recomputation from SRTT/RTTVAR never lands on exactly twice the previous value in practice.
void
OnRto(Flow* f, Time old, Time now)
{
    if (now > old && (now == old + old || (now == Seconds(60) && old >= Seconds(30))))
    {
        ++f->timeouts;
        if (f->congState == TcpSocketState::CA_RECOVERY)
        {
            ++f->timeoutsInRecovery; // ReTxTimeout doubles m_rto before leaving recovery
        }
        if (!f->connected && f->rtt)
        {
            f->rtt->m_skipNext = true; // the SYN was retransmitted: no sample from the SYN-ACK
        }
    }
}

void
OnCongState(Flow* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    f->congState = now;
    if (now == TcpSocketState::CA_RECOVERY)
    {
        ++f->fastRetransmits;
    }
}

void
CloseSocket(Ptr<Socket> s)
{
    s->Close();
}

void
FillTx(Flow* f, Ptr<Socket> s)
{
    while (f->queuedBytes < f->totalBytes)
    {
        uint32_t avail = s->GetTxAvailable();
        if (avail == 0)
        {
            break;
        }
        uint64_t n = std::min<uint64_t>(avail, f->totalBytes - f->queuedBytes);
        int sent = s->Send(Create<Packet>(uint32_t(n)));
        if (sent <= 0)
        {
            break;
        }
        f->queuedBytes += uint64_t(sent);
    }
    // Close (FIN) only once every byte has been acknowledged: the send buffer is empty again.
    // Closing earlier puts the socket in FIN_WAIT_1 during loss recovery, where ns-3 3.44
    // withholds data in CA_OPEN and, without SACK and limited transmit, aborts on an assert
    // (tcp-socket-base.cc: "m_congState != CA_DISORDER") when a later duplicate ACK sends it.
    if (f->queuedBytes >= f->totalBytes && !f->closeCalled && s->GetTxAvailable() >= g_sndBuf)
    {
        f->closeCalled = true;
        Simulator::ScheduleNow(&CloseSocket, s); // outside the socket's own ACK processing
    }
}

void
OnConnected(Flow* f, Ptr<Socket> s)
{
    f->connected = true;
    if (f->rtt)
    {
        f->rtt->m_skipNext = false; // the SYN-ACK has been processed
    }
    FillTx(f, s);
}

void
OnConnectFailed(Flow*, Ptr<Socket>)
{
    // ConnCount is large enough that this does not happen within a run.
}

void
OnSendSpace(Flow* f, Ptr<Socket> s, uint32_t)
{
    if (f->connected)
    {
        FillTx(f, s);
    }
}

void
OnTxClose(Flow*, Ptr<Socket>)
{
}

// An object of the type a TcpL4Protocol attribute names (SocketType, RecoveryType, ...).
template <class Base>
Ptr<Base>
FromTcpAttribute(Ptr<TcpL4Protocol> tcp, const std::string& attribute)
{
    TypeIdValue type;
    tcp->GetAttribute(attribute, type);
    ObjectFactory factory;
    factory.SetTypeId(type.Get());
    return factory.Create<Base>();
}

// What TcpL4Protocol::CreateSocket (3.44) does, with socket class T in place of
// TcpSocketBase, which that function hard-codes: RTT estimator, congestion control and
// recovery come from the protocol's attributes as for every other socket.
template <class T>
Ptr<T>
CreateTcpSocket(Ptr<Node> node)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    Ptr<T> s = CreateObject<T>();
    s->SetNode(node);
    s->SetTcp(tcp);
    s->SetRtt(FromTcpAttribute<RttEstimator>(tcp, "RttEstimatorType"));
    s->SetCongestionControlAlgorithm(FromTcpAttribute<TcpCongestionOps>(tcp, "SocketType"));
    s->SetRecoveryAlgorithm(FromTcpAttribute<TcpRecoveryOps>(tcp, "RecoveryType"));
    tcp->AddSocket(s);
    return s;
}

void
StartFlow(Flow* f)
{
    Ptr<Node> node = g_senders.Get(f->pair);
    Ptr<Socket> s = g_rfcRecover      ? Ptr<Socket>(CreateTcpSocket<Rfc6582RecoverSocket>(node))
                    : g_everyAckTimer ? Ptr<Socket>(CreateTcpSocket<EveryAckTimerSocket>(node))
                                      : Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
    f->tx = s;
    if (g_karnSynFix)
    {
        f->rtt = CreateObject<KarnSynRtt>();
        DynamicCast<TcpSocketBase>(s)->SetRtt(f->rtt);
    }
    s->Bind();
    Address local;
    s->GetSockName(local);
    uint16_t port = InetSocketAddress::ConvertFrom(local).GetPort();
    g_pending[PeerKey(g_senderAddr[f->pair], port)] = size_t(f - g_flows->data());

    MustTrace(s, "Tx", MakeBoundCallback(&OnTx, f));
    if (int64_t(f->id) == g_traceFlow)
    {
        MustTrace(s, "Tx", MakeBoundCallback(&TraceSegment, std::string("sender tx")));
        MustTrace(s, "Rx", MakeBoundCallback(&TraceSegment, std::string("sender rx")));
    }
    MustTrace(s, "Retransmission", MakeBoundCallback(&OnRetransmission, f));
    MustTrace(s, "RTO", MakeBoundCallback(&OnRto, f));
    MustTrace(s, "CongState", MakeBoundCallback(&OnCongState, f));
    MustTrace(s, "State", MakeBoundCallback(&OnTxState, f));
    s->SetConnectCallback(MakeBoundCallback(&OnConnected, f),
                          MakeBoundCallback(&OnConnectFailed, f));
    s->SetSendCallback(MakeBoundCallback(&OnSendSpace, f));
    s->SetCloseCallbacks(MakeBoundCallback(&OnTxClose, f), MakeBoundCallback(&OnTxClose, f));

    f->startNs = Simulator::Now().GetNanoSeconds();
    ++g_flowsStarted;
    s->Connect(InetSocketAddress(g_receiverAddr[f->pair], kPort)); // sends the first SYN now
}

void
OnRecv(Flow* f, Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv(std::numeric_limits<uint32_t>::max(), 0)) && p->GetSize() > 0)
    {
        if (f)
        {
            f->rxBytes += p->GetSize();
        }
    }
    if (f && f->endNs < 0 && f->rxBytes >= f->totalBytes)
    {
        f->endNs = Simulator::Now().GetNanoSeconds();
        ++g_flowsFinished;
    }
}

void
OnRxPeerClose(Flow*, Ptr<Socket> s)
{
    s->Close(); // the sender's FIN arrived: close our side too (FIN back)
}

void
OnRxError(Flow*, Ptr<Socket>)
{
}

void
OnAccept(Ptr<Socket> s, const Address& from)
{
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    Flow* f = nullptr;
    auto it = g_pending.find(PeerKey(peer.GetIpv4(), peer.GetPort()));
    if (it != g_pending.end())
    {
        f = &(*g_flows)[it->second];
        g_pending.erase(it);
        f->rx = s;
        MustTrace(s, "State", MakeBoundCallback(&OnRxState, f));
        if (int64_t(f->id) == g_traceFlow)
        {
            MustTrace(s, "Tx", MakeBoundCallback(&TraceSegment, std::string("receiver tx")));
            MustTrace(s, "Rx", MakeBoundCallback(&TraceSegment, std::string("receiver rx")));
        }
    }
    else
    {
        ++g_unmatchedAccepts;
    }
    s->SetRecvCallback(MakeBoundCallback(&OnRecv, f));
    s->SetCloseCallbacks(MakeBoundCallback(&OnRxPeerClose, f), MakeBoundCallback(&OnRxError, f));
    OnRecv(f, s);
}

void
OnBottleneckTx(Ptr<const Packet> p)
{
    ++g_bnTxPackets;
    g_bnTxBytes += p->GetSize();
}

// ---------------------------------------------------------------- output

std::string
FmtTime(int64_t ns)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9f", double(ns) * 1e-9);
    return buf;
}

std::string
JsonStr(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out.push_back('\\');
        }
        out.push_back(c);
    }
    return out + "\"";
}

std::string
QueueJson(const std::string& name,
          const std::string& discipline,
          Ptr<QueueDisc> q,
          const std::string& params,
          const std::string& extra)
{
    const QueueDisc::Stats& st = q->GetStats();
    std::ostringstream j;
    j << "{\"name\": " << JsonStr(name) << ", \"discipline\": " << JsonStr(discipline)
      << ", \"params\": {" << params << "}"
      << ", \"arrivals\": " << st.nTotalReceivedPackets
      << ", \"enqueued\": " << st.nTotalEnqueuedPackets
      << ", \"departed\": " << st.nTotalSentPackets << ", \"dropped\": " << st.nTotalDroppedPackets
      << ", \"marked\": " << st.nTotalMarkedPackets
      << ", \"occupancy_at_end\": " << q->GetNPackets() << ", \"dropped_by_reason\": {";
    bool first = true;
    for (const auto& [reason, n] : st.nDroppedPacketsBeforeEnqueue)
    {
        j << (first ? "" : ", ") << JsonStr(reason) << ": " << n;
        first = false;
    }
    for (const auto& [reason, n] : st.nDroppedPacketsAfterDequeue)
    {
        j << (first ? "" : ", ") << JsonStr(reason) << ": " << n;
        first = false;
    }
    j << "}" << extra << "}";
    return j.str();
}

} // namespace

int
main(int argc, char** argv)
{
    auto t0 = std::chrono::steady_clock::now();
    Options o = ParseArgs(argc, argv);
    std::vector<Flow> flows = ReadFlows(o);
    g_flows = &flows;

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(o.seed);

    // ---- TCP defaults (before any socket exists)
    const uint32_t rcvBuf = o.maxWindow * o.mss;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(o.cc != "cubic"                ? TcpNewReno::GetTypeId()
                                   : o.cubicTimeout == "keep-wmax" ? KeepWmaxCubic::GetTypeId()
                                   : o.cubicSlowStart != "ns3"     ? SlowStartTallyCubic::GetTypeId()
                                                                   : TcpCubic::GetTypeId()));
    g_ssPerAck = o.cubicSlowStart == "per-ack";
    // TcpCubic's own defaults (3.44) are kept: Beta 0.7, C 0.4, FastConvergence and
    // TcpFriendliness true, HyStart (Ha & Rhee's, not HyStart++) true from 16 segments.
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(o.hystart));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(o.recovery == "classic" ? TcpClassicRecovery::GetTypeId()
                                   : o.recovery == "prr"   ? TcpPrrRecovery::GetTypeId()
                                                           : DupAckCreditRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(o.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(o.initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    g_sndBuf = 2 * rcvBuf;
    g_traceFlow = o.traceFlow;
    g_karnSynFix = o.karnSynFix;
    g_rfcRecover = o.recoverRule == "rfc6582";
    g_everyAckTimer = o.partialAckTimer == "every";

    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(g_sndBuf));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(o.ito)));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(16));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation",
                       TimeValue(Seconds(o.ito - o.granularity)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(o.minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Seconds(o.granularity)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(o.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(o.limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime", DoubleValue(o.msl));

    // ---- nodes
    const uint32_t n = o.pairs;
    NodeContainer senders, receivers, routers;
    senders.Create(n);
    receivers.Create(n);
    routers.Create(2);
    g_senders = senders;
    Ptr<Node> left = routers.Get(0);
    Ptr<Node> right = routers.Get(1);
    InternetStackHelper stack;
    stack.Install(senders);
    stack.Install(receivers);
    stack.Install(routers);

    // ---- links: device TxQueue of 1 packet, so the queue disc holds the waiting packets
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(o.accessRateMbps * 1e6)));
    access.SetChannelAttribute("Delay", TimeValue(Seconds(o.accessDelayMs * 1e-3)));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    PointToPointHelper bottle;
    const DataRate bnRate(o.bottleneckRateMbps * 1e6);
    const Time bnDelay = Seconds(o.bottleneckDelayMs * 1e-3);
    bottle.SetDeviceAttribute("DataRate", DataRateValue(bnRate));
    bottle.SetChannelAttribute("Delay", TimeValue(bnDelay));
    bottle.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));

    std::vector<NetDeviceContainer> srcLinks, dstLinks;
    for (uint32_t i = 0; i < n; ++i)
    {
        srcLinks.push_back(access.Install(senders.Get(i), left));
        dstLinks.push_back(access.Install(right, receivers.Get(i)));
    }
    NetDeviceContainer bn = bottle.Install(left, right); // bn.Get(0): left->right

    // ---- queue discs (installed before addresses, so no default root queue disc appears)
    TrafficControlHelper accessTc;
    accessTc.SetRootQueueDisc(
        "ns3::FifoQueueDisc",
        "MaxSize",
        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, o.accessLimit)));
    for (uint32_t i = 0; i < n; ++i)
    {
        accessTc.Install(srcLinks[i]);
        accessTc.Install(dstLinks[i]);
    }

    const uint32_t slot = o.compensate ? 1 : 0;
    TrafficControlHelper bnTc;
    std::ostringstream params;
    if (o.queue == "droptail")
    {
        uint32_t limit = std::max<uint32_t>(1, o.droptailLimit - std::min(slot, o.droptailLimit));
        bnTc.SetRootQueueDisc("ns3::FifoQueueDisc",
                              "MaxSize",
                              QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, limit)));
        params << "\"limit_pkts\": " << o.droptailLimit << ", \"qdisc_max_size_pkts\": " << limit;
    }
    else
    {
        uint32_t limit = std::max<uint32_t>(1, o.redLimit - std::min(slot, o.redLimit));
        double minTh = std::max(0.0, o.redMinTh - slot);
        double maxTh = std::max(minTh + 1e-9, o.redMaxTh - slot);
        bnTc.SetRootQueueDisc("ns3::RedQueueDisc",
                              "MaxSize",
                              QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, limit)),
                              "MinTh",
                              DoubleValue(minTh),
                              "MaxTh",
                              DoubleValue(maxTh),
                              "LInterm",
                              DoubleValue(1.0 / o.redMaxP),
                              "QW",
                              DoubleValue(o.redWq),
                              "Gentle",
                              BooleanValue(true),
                              "Wait",
                              BooleanValue(true),
                              "UseEcn",
                              BooleanValue(false),
                              "MeanPktSize",
                              UintegerValue(o.mss + 40),
                              "LinkBandwidth",
                              DataRateValue(bnRate),
                              "LinkDelay",
                              TimeValue(bnDelay));
        char buf[512];
        std::snprintf(buf,
                      sizeof buf,
                      "\"limit_pkts\": %u, \"min_th\": %g, \"max_th\": %g, \"max_p\": %g, "
                      "\"w_q\": %.9g, \"qdisc_max_size_pkts\": %u, \"qdisc_min_th\": %g, "
                      "\"qdisc_max_th\": %g",
                      o.redLimit,
                      o.redMinTh,
                      o.redMaxTh,
                      o.redMaxP,
                      o.redWq,
                      limit,
                      minTh,
                      maxTh);
        params << buf;
    }
    QueueDiscContainer bnQdiscs = bnTc.Install(bn);
    Ptr<QueueDisc> fwdQ = bnQdiscs.Get(0);
    Ptr<QueueDisc> revQ = bnQdiscs.Get(1);
    MustTrace(bn.Get(0), "PhyTxEnd", MakeCallback(&OnBottleneckTx));

    // ---- addresses and routes
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < n; ++i)
    {
        Ipv4InterfaceContainer ifs = addr.Assign(srcLinks[i]);
        g_senderAddr.push_back(ifs.GetAddress(0));
        addr.NewNetwork();
        ifs = addr.Assign(dstLinks[i]);
        g_receiverAddr.push_back(ifs.GetAddress(1));
        addr.NewNetwork();
    }
    addr.Assign(bn);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // ---- receivers: one listening socket per receiver host
    std::vector<Ptr<Socket>> listeners;
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<Socket> ls = Socket::CreateSocket(receivers.Get(i), TcpSocketFactory::GetTypeId());
        ls->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
        ls->Listen();
        ls->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                              MakeCallback(&OnAccept));
        listeners.push_back(ls);
    }

    // ---- flows that start within the run
    const int64_t durNs = std::llround(o.duration * 1e9);
    for (auto& f : flows)
    {
        if (f.startInNs < durNs)
        {
            Simulator::Schedule(NanoSeconds(f.startInNs), &StartFlow, &f);
        }
    }

    Simulator::Stop(NanoSeconds(durNs));
    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double>(t2 - t1).count();
    const double setup = std::chrono::duration<double>(t1 - t0).count();
    const uint64_t events = Simulator::GetEventCount();
    uint64_t txAlive = 0, rxAlive = 0;
    for (const auto& f : flows)
    {
        txAlive += f.tx ? 1 : 0;
        rxAlive += f.rx ? 1 : 0;
    }

    // ---- per-flow records
    {
        std::ofstream out(o.out);
        if (!out)
        {
            std::cerr << "savanna-ns3: error: cannot write '" << o.out << "'\n";
            return 1;
        }
        out << "flow_id,start_s,end_s,fct_s,size_pkts,pair,data_pkts_sent,retransmits,timeouts,"
               "fast_retransmits,timeouts_in_recovery,delivered_bytes\n";
        for (const auto& f : flows)
        {
            if (f.startNs < 0)
            {
                continue; // never started (start_s >= duration)
            }
            out << f.id << "," << FmtTime(f.startNs) << ",";
            if (f.endNs >= 0)
            {
                out << FmtTime(f.endNs) << "," << FmtTime(f.endNs - f.startNs);
            }
            else
            {
                out << ",";
            }
            out << "," << f.sizePkts << "," << f.pair << "," << f.dataPktsSent << ","
                << f.retransmits << "," << f.timeouts << "," << f.fastRetransmits << ","
                << f.timeoutsInRecovery << ","
                << f.rxBytes << "\n";
        }
    }

    // ---- summary
    {
        const double util = double(g_bnTxBytes) * 8.0 / (bnRate.GetBitRate() * o.duration);
        std::ostringstream extra;
        extra << ", \"tx_packets\": " << g_bnTxPackets << ", \"tx_bytes\": " << g_bnTxBytes
              << ", \"utilisation\": " << util;
        std::string discipline = o.queue;
        std::ostringstream tally; // SlowStartTallyCubic's counts, when it ran
        if (o.cc == "cubic" && o.cubicSlowStart != "ns3")
        {
            tally << "  \"slow_start_acks\": " << g_ssTally.acks << ",\n"
                  << "  \"slow_start_multi_segment_acks\": " << g_ssTally.multiAcks << ",\n"
                  << "  \"slow_start_extra_segments\": " << g_ssTally.extraSegs << ",\n"
                  << "  \"slow_start_multi_segment_acks_in_loss\": " << g_ssTally.lossMultiAcks << ",\n"
                  << "  \"slow_start_extra_segments_in_loss\": " << g_ssTally.lossExtraSegs << ",\n";
        }
        std::ofstream js(o.out + ".summary.json");
        js.precision(10);
        js << "{\n"
           << "  \"simulator\": \"ns-3\",\n"
           << "  \"ns3_version\": \"3.44\",\n"
           << "  \"queue\": " << JsonStr(o.queue) << ",\n"
           << "  \"seed\": " << o.seed << ",\n"
           << "  \"compensate_device_slot\": " << (o.compensate ? "true" : "false") << ",\n"
           << "  \"karn_syn_fix\": " << (o.karnSynFix ? "true" : "false") << ",\n"
           << "  \"recovery\": " << JsonStr(o.recovery) << ",\n"
           << "  \"recover_rule\": " << JsonStr(o.recoverRule) << ",\n"
           << "  \"partial_ack_timer\": " << JsonStr(o.partialAckTimer) << ",\n"
           << "  \"cc\": " << JsonStr(o.cc) << ",\n"
           << "  \"sack\": " << (o.sack ? "true" : "false") << ",\n"
           << "  \"limited_transmit\": " << (o.limitedTransmit ? "true" : "false") << ",\n"
           << "  \"hystart\": " << (o.hystart ? "true" : "false") << ",\n"
           << "  \"cubic_slow_start\": " << JsonStr(o.cubicSlowStart) << ",\n"
           << tally.str()
           << "  \"sim_seconds\": " << o.duration << ",\n"
           << "  \"wall_seconds\": " << wall << ",\n"
           << "  \"setup_seconds\": " << setup << ",\n"
           << "  \"events\": " << events << ",\n"
           << "  \"flows_in_file\": " << flows.size() << ",\n"
           << "  \"flows_started\": " << g_flowsStarted << ",\n"
           << "  \"flows_finished\": " << g_flowsFinished << ",\n"
           << "  \"unmatched_accepts\": " << g_unmatchedAccepts << ",\n"
           << "  \"sender_sockets_open_at_end\": " << txAlive << ",\n"
           << "  \"receiver_sockets_open_at_end\": " << rxAlive << ",\n"
           << "  \"bottleneck\": "
           << QueueJson("left->right", discipline, fwdQ, params.str(), extra.str()) << ",\n"
           << "  \"reverse\": " << QueueJson("right->left", discipline, revQ, params.str(), "")
           << "\n}\n";
    }

    std::fprintf(stderr,
                 "savanna-ns3: %s, %.1f s simulated in %.3f s wall (setup %.3f s), %llu events, "
                 "%llu/%llu flows finished\n",
                 o.queue.c_str(),
                 o.duration,
                 wall,
                 setup,
                 (unsigned long long)events,
                 (unsigned long long)g_flowsFinished,
                 (unsigned long long)g_flowsStarted);

    Simulator::Destroy();
    return 0;
}
