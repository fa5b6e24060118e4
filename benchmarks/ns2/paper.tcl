# The paper experiments ns-2.35 can run with its own mechanisms, on Savanna's dumbbell:
# DropTail, RED and RIO (Queue/RED/RIO, with the edge rule of Guo & Matta 2001: a flow's
# first L_t data packets are In) at the bottleneck, open flows and closed-loop sessions
# replayed from a flow list Savanna exported, so both simulators carry the same flows.
#
#   ns paper.tcl flows=FLOWS.csv out=OUT.csv [queue=droptail|red|rio] [key=value ...]
#
# FLOWS.csv: header flow_id,start_s,size_pkts,pair,session[,dir]. A row with session -1 is
# an open flow starting at start_s; rows sharing a session >= 0 are one closed-loop source:
# its first flow starts at its start_s, each next one (in file order) as soon as the one
# before is done. dir "rev" sends from dst<pair> to src<pair> (default "fwd").
# OUT.csv: one row per flow that started: flow_id, start_s, end_s (empty if unfinished),
# fct_s, size_pkts, pair, delivered (data packets acknowledged by the end), retransmits,
# timeouts. OUT.csv.summary.json: the bottleneck's counters (as dumbbell.tcl's).
#
# Queue sizes are Savanna's waiting places: DropTail limit_ = waiting + 1, RED and RIO
# limit_ = waiting (README.md). `delays=d0,d1,...` gives each pair its own access delay
# (ms, both access links of the pair), as FavorQueue's scenarios draw them.

source [file join [file dirname [info script]] common.tcl]
parse_args {flows out queue duration pairs seed bottleneck_mbps access_mbps bottleneck_delay_ms
    access_delay_ms delays waiting reverse_waiting access_waiting min_th max_th max_p w_q
    in_min_th in_max_th in_max_p ecn mark syn tick minrto maxrto rtoinit window iw singledup
    packet_bytes header_bytes variant trace}

set flowfile [arg flows ""]
set outfile [arg out ""]
if {$flowfile == "" || $outfile == ""} { puts stderr "flows= and out= are required"; exit 2 }
set qtype [arg queue droptail]
set duration [arg duration 500]
set npairs [arg pairs 20]
set bn_mbps [arg bottleneck_mbps 10]
set ac_mbps [arg access_mbps 100]
set bn_delay [arg bottleneck_delay_ms 40]
set ac_delay [arg access_delay_ms 5]
set waiting [arg waiting 8]
set rv_waiting [arg reverse_waiting 1000]
set ac_waiting [arg access_waiting 1000]
set pkt [arg packet_bytes 1500]
set hdr [arg header_bytes 40]
set ecn [arg ecn 0]
# L_t: with queue=rio, a flow's first `mark` data packets leave the edge In (fid_ 1, read
# by RIO's priority_method_ 1), the rest Out; 0 marks nothing.
set mark [arg mark 0]
set syn [expr {[arg syn true] ? 1 : 0}]

set ns [new Simulator]
ns-random [arg seed 1]
$defaultRNG seed [arg seed 1]

set variant [arg variant Newreno]
set tcpclass Agent/TCP/$variant
if {$variant == "Tahoe"} { set tcpclass Agent/TCP }
tcp_settings $pkt $hdr 0.001
Agent/TCP set ecn_ $ecn

# ---- queues ----
Queue/DropTail set queue_in_bytes_ false
Queue/DropTail set drop_front_ false
red_settings {Queue/RED Queue/RED/RIO} $pkt $ecn
# RIO: In packets are judged on the In average against the In curve; Out packets on the
# total average against the Out curve, whose max_p is RED's linterm_ (queue/rio.cc).
Queue/RED/RIO set in_thresh_ [arg in_min_th 12]
Queue/RED/RIO set in_maxthresh_ [arg in_max_th 40]
Queue/RED/RIO set in_linterm_ [expr {1.0 / [arg in_max_p 0.05]}]
Queue/RED/RIO set out_thresh_ [arg min_th 12]
Queue/RED/RIO set out_maxthresh_ [arg max_th 40]
Queue/RED/RIO set linterm_ [expr {1.0 / [arg max_p 0.1]}]
Queue/RED/RIO set in_gentle_ true
Queue/RED/RIO set out_gentle_ true
Queue/RED/RIO set priority_method_ 1

switch $qtype {
    droptail { set qclass DropTail; set qlimit [expr {$waiting + 1}] }
    red { set qclass RED; set qlimit $waiting }
    rio { set qclass RED/RIO; set qlimit $waiting }
    default { puts stderr "queue must be droptail, red or rio"; exit 2 }
}

# ---- topology ----
set left [$ns node]
set right [$ns node]
$ns simplex-link $left $right ${bn_mbps}Mb ${bn_delay}ms $qclass
$ns simplex-link $right $left ${bn_mbps}Mb ${bn_delay}ms DropTail
$ns queue-limit $left $right $qlimit
$ns queue-limit $right $left [expr {$rv_waiting + 1}]
set dl [arg delays ""]
set dl [expr {$dl == "" ? {} : [split $dl ,]}]
for {set i 0} {$i < $npairs} {incr i} {
    set d [expr {[llength $dl] > $i ? [lindex $dl $i] : $ac_delay}]
    set pdelay($i) $d
    set src($i) [$ns node]
    set dst($i) [$ns node]
    $ns duplex-link $src($i) $left ${ac_mbps}Mb ${d}ms DropTail
    $ns duplex-link $right $dst($i) ${ac_mbps}Mb ${d}ms DropTail
    foreach {a b} [list $src($i) $left $left $src($i) $right $dst($i) $dst($i) $right] {
        $ns queue-limit $a $b [expr {$ac_waiting + 1}]
    }
}
# trace=FILE: ns-2's packet trace of the forward bottleneck (its fid column shows In/Out).
if {[arg trace ""] != ""} {
    set tf [open [arg trace ""] w]
    $ns trace-queue $left $right $tf
}
set qmon [new QueueMonitor]
[$ns link $left $right] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] \
    [new SnoopQueue/Drop] $qmon

# The ACK covering a flow's last packet left the sink as that packet arrived; its trip
# back (fixed: ACKs do not queue on the forward access links, and the reverse bottleneck
# holds only ACKs unless reverse flows run) is subtracted to give the delivery time.
proc ack_trip {p} {
    global pdelay bn_delay ac_mbps bn_mbps hdr
    return [expr {2 * $pdelay($p) / 1000.0 + $bn_delay / 1000.0
        + 2 * $hdr * 8 / ($ac_mbps * 1e6) + $hdr * 8 / ($bn_mbps * 1e6)}]
}

# ---- flows ----
set fh [open $flowfile r]
set header [split [string trim [gets $fh]] ,]
foreach col {flow_id start_s size_pkts pair session dir} {
    set ci($col) [lsearch $header $col]
    if {$ci($col) < 0 && $col != "dir"} { puts stderr "flows file lacks column $col"; exit 2 }
}
set nflows 0
while {[gets $fh line] >= 0} {
    set f [split [string trim $line] ,]
    set k $nflows
    set F_id($k) [lindex $f $ci(flow_id)]
    set F_start($k) [lindex $f $ci(start_s)]
    set F_size($k) [lindex $f $ci(size_pkts)]
    set F_pair($k) [lindex $f $ci(pair)]
    set F_dir($k) [expr {$ci(dir) >= 0 ? [lindex $f $ci(dir)] : "fwd"}]
    set s [lindex $f $ci(session)]
    if {$s >= 0} {
        if {[info exists S_last($s)]} {
            set F_next($S_last($s)) $k
        } elseif {$F_start($k) < $duration} {
            $ns at $F_start($k) "start_flow $k"
        }
        set S_last($s) $k
    } elseif {$F_start($k) < $duration} {
        $ns at $F_start($k) "start_flow $k"
    }
    incr nflows
}
close $fh

# The edge rule at L_t (Savanna's `threshold` classifier, Guo & Matta's appendix A): a
# counter per flow at the edge, the first L_t packets the flow sends are In (fid_ 1), the
# rest Out (fid_ 0), retransmissions counted. The SYN counts, as in Savanna (whose client
# also sends a pure ACK, which ns-2's one-way TCP has not: Savanna's L_t covers one data
# packet less). ns-2 has no per-packet Tcl hook on an agent, so the agent's traced t_seqno_
# is written to a reflected channel whose handler flips fid_ once t_seqno_ reaches L_t:
# t_seqno_ is advanced right after each packet is output (TcpAgent::send_much), so the
# flip falls between the L_t-th packet and the next. Not modelled: the soft state (a flow
# silent for T_u starts counting again) and the adaptive L_t.
proc marker_chan {tcp cmd ch args} {
    global mark
    switch $cmd {
        initialize { return {initialize finalize watch write} }
        write {
            set d [lindex $args 0]
            if {[$tcp set fid_] == 1 && [lindex $d end] >= $mark} {
                $tcp set fid_ 0
            }
            return [string length $d]
        }
        default { return }
    }
}

set started 0
set finished 0
proc start_flow {k} {
    global ns src dst tcpclass F_size F_pair F_dir F_start busy mark qtype started
    set p $F_pair($k)
    set F_start($k) [$ns now]
    set tcp [new $tcpclass]
    set sink [new Agent/TCPSink]
    if {$F_dir($k) == "rev"} { set a $dst($p); set b $src($p) } else { set a $src($p); set b $dst($p) }
    $ns attach-agent $a $tcp
    $ns attach-agent $b $sink
    $ns connect $tcp $sink
    set busy($tcp) $k
    incr started
    set n $F_size($k)
    if {$qtype == "rio" && $mark > 0} {
        $tcp set fid_ 1
        if {$n > $mark} {
            set ch [chan create write [list marker_chan $tcp]]
            fconfigure $ch -buffering none
            $tcp attach $ch
            $tcp trace t_seqno_
        }
    } else {
        $tcp set fid_ 0
    }
    $tcp advanceby $n
}

set out [open $outfile w]
puts $out "flow_id,start_s,end_s,fct_s,size_pkts,pair,delivered,retransmits,timeouts"

Agent/TCP instproc done {} {
    global ns busy out F_id F_start F_size F_pair F_next finished
    if {![info exists busy($self)]} { return }
    set k $busy($self)
    unset busy($self)
    set now [$ns now]
    set end [expr {$now - [ack_trip $F_pair($k)]}]
    puts $out [format "%s,%.9f,%.9f,%.9f,%s,%s,%s,%d,%d" $F_id($k) $F_start($k) $end \
        [expr {$end - $F_start($k)}] $F_size($k) $F_pair($k) $F_size($k) \
        [$self set nrexmitpack_] [$self set nrexmit_]]
    incr finished
    # A closed-loop source opens its next connection at once (as a fresh event).
    if {[info exists F_next($k)]} { $ns at $now "start_flow $F_next($k)" }
}

proc finish {} {
    global ns out outfile qmon duration bn_mbps busy F_id F_start F_size F_pair syn
    global started finished wall0
    # Flows still running: the data packets acknowledged so far (with syn_ the SYN is
    # sequence 0 and data are 1..N, so ack_ (highest_ack_) counts data; without it, 0..N-1).
    foreach tcp [array names busy] {
        set k $busy($tcp)
        set acked [expr {[$tcp set ack_] + 1 - $syn}]
        if {$acked < 0} { set acked 0 }
        puts $out [format "%s,%.9f,,,%s,%s,%d,%d,%d" $F_id($k) $F_start($k) $F_size($k) \
            $F_pair($k) $acked [$tcp set nrexmitpack_] [$tcp set nrexmit_]]
    }
    close $out
    global tf
    if {[info exists tf]} { close $tf }
    set s [open $outfile.summary.json w]
    set bytes [$qmon set bdepartures_]
    puts $s [format "{\"sim_seconds\": %s, \"wall_seconds\": %.3f, \"flows_started\": %d,\
\"flows_finished\": %d, \"bottleneck\": {\"arrivals\": %d, \"departed\": %d, \"dropped\": %d,\
\"bytes_departed\": %s, \"utilisation\": %.6f}}" $duration \
        [expr {([clock clicks -milliseconds] - $wall0) / 1000.0}] $started $finished \
        [$qmon set parrivals_] [$qmon set pdepartures_] [$qmon set pdrops_] $bytes \
        [expr {$bytes * 8.0 / ($bn_mbps * 1e6 * $duration)}]]
    close $s
    exit 0
}

set wall0 [clock clicks -milliseconds]
$ns at $duration "finish"
$ns run
