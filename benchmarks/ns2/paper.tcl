# The paper experiments ns-2.35 can run with its own mechanisms, on Savanna's dumbbell:
# DropTail, RED and RIO (Queue/RED/RIO, with the edge rule of Guo & Matta 2001: a flow's
# first L_t data packets are In) at the bottleneck, or a class tree of ns-2's CBQ (weighted
# round robin between classes of a share each, or strict priority), open flows and
# closed-loop sessions replayed from a flow list Savanna exported, so both simulators carry
# the same flows.
#
#   ns paper.tcl flows=FLOWS.csv out=OUT.csv [queue=droptail|red|rio|cbq] [key=value ...]
#
# FLOWS.csv: header flow_id,start_s,size_pkts,pair,session[,dir][,fid][,gap_s]. A row with
# session -1 is an open flow starting at start_s; rows sharing a session >= 0 are one
# closed-loop source: its first flow starts at its start_s, each next one (in file order)
# gap_s (default 0: a think time) after the one before is done. dir "rev" sends from dst<pair> to src<pair> (default "fwd"). fid
# (default 0) is the flow's class: its packets' fid_, which queue=cbq maps to class fid.
#
# queue=cbq: Queue/CBQ/WRR under a root class of the whole link, one leaf class per entry
# of cbq_allot (fractions of the link), each with its own queue of cbq_limit waiting places
# (DropTail, or RED with the RED arguments when cbq_red=1) and priority cbq_prio (1 is the
# highest; equal priorities share by weighted round robin in proportion to allot). Every
# leaf may borrow from the root, so an idle class's share goes to the other (work
# conserving, as Savanna's drr and prq). With mark=K, a flow's first K packets are fid 1
# and the rest fid 0 (the edge rule below), whatever its fid column says.
# agents=reuse: a finished agent pair is reused for a later flow of its pair and direction
# after cooldown seconds (default fresh: one pair per flow).
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
    packet_bytes header_bytes variant trace gentle cbq_allot cbq_limit cbq_prio cbq_red agents
    cooldown util_from}

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
set tcpclass [tcp_class $variant]
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
    cbq { set qclass CBQ/WRR; set qlimit $waiting }
    default { puts stderr "queue must be droptail, red, rio or cbq"; exit 2 }
}
set agents [arg agents fresh]
set cooldown [arg cooldown 2.0]

# ---- topology ----
set left [$ns node]
set right [$ns node]
$ns simplex-link $left $right ${bn_mbps}Mb ${bn_delay}ms $qclass
$ns simplex-link $right $left ${bn_mbps}Mb ${bn_delay}ms DropTail
$ns queue-limit $left $right $qlimit
# The CBQ class tree (README.md: where each setting comes from). setparams' arguments are
# parent, okborrow, allot, maxidle, priority, level, extradelay; maxpkt_ (the packet size
# the automatic maxidle is computed for) is the data packet's.
if {$qtype == "cbq"} {
    set cbq [$ns link $left $right]
    [$cbq queue] set maxpkt_ $pkt
    # algorithm_ 0: ancestor-only link sharing (ns-2's default), under which a leaf borrows
    # from the root whenever the root is under its allotment (always: it is the link).
    [$cbq queue] set algorithm_ 0
    set root [new CBQClass]
    $root setparams none 0 1.0 auto 8 2 0
    $cbq insert $root
    set allots [split [arg cbq_allot 0.5,0.5] ,]
    set climits [split [arg cbq_limit 100,100] ,]
    set cprios [split [arg cbq_prio 1,1] ,]
    for {set c 0} {$c < [llength $allots]} {incr c} {
        set cls($c) [new CBQClass]
        if {[arg cbq_red 0]} {
            set cq($c) [new Queue/RED]
            $cq($c) set limit_ [lindex $climits $c]
        } else {
            set cq($c) [new Queue/DropTail]
            $cq($c) set limit_ [expr {[lindex $climits $c] + 1}]
        }
        $cls($c) install-queue $cq($c)
        $cls($c) setparams $root 1 [lindex $allots $c] auto [lindex $cprios $c] 1 0
        $cbq insert $cls($c)
        $cbq bind $cls($c) $c
    }
}
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
# util_from=T: the summary's utilisation counts the bytes departed after T seconds only.
set util_from [arg util_from 0]
set bytes_before 0
$ns at $util_from {set bytes_before [$qmon set bdepartures_]}

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
foreach col {flow_id start_s size_pkts pair session dir fid gap_s} {
    set ci($col) [lsearch $header $col]
    if {$ci($col) < 0 && [lsearch {dir fid gap_s} $col] < 0} {
        puts stderr "flows file lacks column $col"
        exit 2
    }
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
    set F_fid($k) [expr {$ci(fid) >= 0 ? [lindex $f $ci(fid)] : 0}]
    set F_gap($k) [expr {$ci(gap_s) >= 0 ? [lindex $f $ci(gap_s)] : 0}]
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
set created 0
proc start_flow {k} {
    global ns src dst tcpclass F_size F_pair F_dir F_start F_fid busy mark qtype started
    global agents pool cooldown created sinkof traced
    set p $F_pair($k)
    set now [$ns now]
    set F_start($k) $now
    set key "$p,$F_dir($k)"
    set tcp ""
    # A pooled pair idle for cooldown seconds (dumbbell.tcl's reuse, windowInit_ restored).
    if {$agents == "reuse" && [info exists pool($key)] && [llength $pool($key)] > 0} {
        set head [lindex $pool($key) 0]
        if {[lindex $head 1] + $cooldown <= $now} {
            set pool($key) [lrange $pool($key) 1 end]
            set tcp [lindex $head 0]
            set sink $sinkof($tcp)
            $tcp set windowInit_ [Agent/TCP set windowInit_]
            $tcp reset
            $sink reset
        }
    }
    if {$tcp == ""} {
        set tcp [new $tcpclass]
        set sink [new Agent/TCPSink]
        if {$F_dir($k) == "rev"} { set a $dst($p); set b $src($p) } else { set a $src($p); set b $dst($p) }
        $ns attach-agent $a $tcp
        $ns attach-agent $b $sink
        $ns connect $tcp $sink
        set sinkof($tcp) $sink
        incr created
    }
    set busy($tcp) $k
    incr started
    set n $F_size($k)
    if {($qtype == "rio" || $qtype == "cbq") && $mark > 0} {
        $tcp set fid_ 1
        if {$n > $mark && ![info exists traced($tcp)]} {
            set ch [chan create write [list marker_chan $tcp]]
            fconfigure $ch -buffering none
            $tcp attach $ch
            $tcp trace t_seqno_
            set traced($tcp) 1
        }
    } else {
        $tcp set fid_ $F_fid($k)
    }
    $tcp advanceby $n
}

set out [open $outfile w]
puts $out "flow_id,start_s,end_s,fct_s,size_pkts,pair,delivered,retransmits,timeouts"

Agent/TCP instproc done {} {
    global ns busy out F_id F_start F_size F_pair F_next F_dir F_gap finished agents pool
    if {![info exists busy($self)]} { return }
    set k $busy($self)
    unset busy($self)
    if {$agents == "reuse"} { lappend pool($F_pair($k),$F_dir($k)) [list $self [$ns now]] }
    set now [$ns now]
    set end [expr {$now - [ack_trip $F_pair($k)]}]
    puts $out [format "%s,%.9f,%.9f,%.9f,%s,%s,%s,%d,%d" $F_id($k) $F_start($k) $end \
        [expr {$end - $F_start($k)}] $F_size($k) $F_pair($k) $F_size($k) \
        [$self set nrexmitpack_] [$self set nrexmit_]]
    incr finished
    # A closed-loop source opens its next connection gap_s after the flow's delivery time
    # (Savanna's next start minus its delivery time: the ACK's trip plus any think time),
    # and at the earliest now (as a fresh event).
    if {[info exists F_next($k)]} {
        $ns at [expr {max($now, $end + $F_gap($k))}] "start_flow $F_next($k)"
    }
}

proc finish {} {
    global ns out outfile qmon duration bn_mbps busy F_id F_start F_size F_pair syn
    global started finished wall0 created util_from bytes_before
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
\"flows_finished\": %d, \"agent_pairs_created\": %d, \"bottleneck\": {\"arrivals\": %d, \"departed\": %d, \"dropped\": %d,\
\"bytes_departed\": %s, \"utilisation\": %.6f}}" $duration \
        [expr {([clock clicks -milliseconds] - $wall0) / 1000.0}] $started $finished $created \
        [$qmon set parrivals_] [$qmon set pdepartures_] [$qmon set pdrops_] $bytes \
        [expr {($bytes - $bytes_before) * 8.0 / ($bn_mbps * 1e6 * ($duration - $util_from))}]]
    close $s
    exit 0
}

set wall0 [clock clicks -milliseconds]
$ns at $duration "finish"
$ns run
