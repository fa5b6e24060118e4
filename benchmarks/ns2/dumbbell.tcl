# Savanna's reference dumbbell in ns-2.35, replaying a flow list Savanna generated.
#
#   ns dumbbell.tcl flows=FLOWS.csv out=OUT.csv [key=value ...]
#
# FLOWS.csv: header flow_id,start_s,size_pkts,pair (any order; other columns ignored).
# Flow i goes from src<pair> to dst<pair> as one-way TCP (Agent/TCP/Newreno to
# Agent/TCPSink), the agents the papers ran. OUT.csv gets one row per finished flow;
# OUT.csv.summary.json the bottleneck's totals. Every setting below is explicit, so the
# run does not depend on ns-default.tcl; README.md says where each value comes from.
#
# Queue sizes are given as Savanna's waiting places (packets queued, not counting the one
# on the wire). ns-2's DropTail drops when `q->length() + 1 >= limit_`
# (queue/drop-tail.cc, DropTail::enque), so limit_ = waiting + 1; RED drops when
# `qlen >= qlim` (queue/red.cc, REDQueue::enque), so limit_ = waiting.

source [file join [file dirname [info script]] common.tcl]
parse_args {flows out queue duration pairs seed bottleneck_mbps access_mbps bottleneck_delay_ms
    access_delay_ms waiting access_waiting min_th max_th max_p w_q syn tick minrto maxrto rtoinit
    window iw singledup packet_bytes header_bytes agents cooldown variant drops trace pureack ecn gentle precision_reduce}

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
set ac_waiting [arg access_waiting 1000]
set pkt [arg packet_bytes 1500]
set hdr [arg header_bytes 40]
set agents [arg agents reuse]
# ndatapack_ counts the SYN too; data_pkts_sent in OUT.csv does not.
set syn [expr {[arg syn true] ? 1 : 0}]
# A finished agent pair is reused only after this long, so no packet of its last flow
# (a late retransmission, a duplicate ACK) can reach the next flow's agents.
set cooldown [arg cooldown 2.0]

set ns [new Simulator]
ns-random [arg seed 1]
$defaultRNG seed [arg seed 1]

# ---- TCP (one-way NewReno and its sink) ----
set variant [arg variant Newreno]
set tcpclass [tcp_class $variant]
tcp_settings $pkt $hdr 0.001
Agent/TCP set ecn_ [arg ecn 0]

# ---- queues ----
Queue/DropTail set queue_in_bytes_ false
Queue/DropTail set drop_front_ false
red_settings {Queue/RED} $pkt [arg ecn 0]

switch $qtype {
    droptail { set qclass DropTail; set qlimit [expr {$waiting + 1}] }
    red { set qclass RED; set qlimit $waiting }
    default { puts stderr "queue must be droptail or red"; exit 2 }
}

# ---- topology ----
set left [$ns node]
set right [$ns node]
$ns duplex-link $left $right ${bn_mbps}Mb ${bn_delay}ms $qclass
$ns queue-limit $left $right $qlimit
$ns queue-limit $right $left $qlimit
for {set i 0} {$i < $npairs} {incr i} {
    set src($i) [$ns node]
    set dst($i) [$ns node]
    $ns duplex-link $src($i) $left ${ac_mbps}Mb ${ac_delay}ms DropTail
    $ns duplex-link $right $dst($i) ${ac_mbps}Mb ${ac_delay}ms DropTail
    foreach {a b} [list $src($i) $left $left $src($i) $right $dst($i) $dst($i) $right] {
        $ns queue-limit $a $b [expr {$ac_waiting + 1}]
    }
}
set bnlink [$ns link $left $right]
set qmon [new QueueMonitor]
$bnlink attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $qmon
# drops=I,J,...: lose the packets with these indices (0 = the first) among those leaving
# the bottleneck's forward queue (ErrorModel/List on the link), for loss-pattern tests.
set drops [arg drops ""]
if {$drops != ""} {
    set em [new ErrorModel/List]
    $em unit pkt
    $em droplist [split $drops ,]
    $ns link-lossmodel $em $left $right
}
# trace=FILE: ns-2's packet trace of the bottleneck, both directions (diagnostics).
if {[arg trace ""] != ""} {
    set tf [open [arg trace ""] w]
    $ns trace-queue $left $right $tf
    $ns trace-queue $right $left $tf
}
set rvlink [$ns link $right $left]
set rmon [new QueueMonitor]
$rvlink attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $rmon

# The delivery time of a flow's last data packet is the arrival of the ACK that covers it
# at the sender, less that ACK's trip: it leaves the sink as the packet arrives (no
# delayed ACKs) and crosses two access links and the bottleneck, on which only ACKs queue.
set ack_trip [expr {2 * $ac_delay / 1000.0 + $bn_delay / 1000.0
    + 2 * $hdr * 8 / ($ac_mbps * 1e6) + $hdr * 8 / ($bn_mbps * 1e6)}]

# ---- flows ----
set fh [open $flowfile r]
set header [split [string trim [gets $fh]] ,]
foreach col {flow_id start_s size_pkts pair} {
    set ci($col) [lsearch $header $col]
    if {$ci($col) < 0} { puts stderr "flows file lacks column $col"; exit 2 }
}
set nflows 0
while {[gets $fh line] >= 0} {
    set f [split $line ,]
    set st [lindex $f $ci(start_s)]
    if {$st >= $duration} { continue }
    set F_id($nflows) [lindex $f $ci(flow_id)]
    set F_start($nflows) $st
    set F_size($nflows) [lindex $f $ci(size_pkts)]
    set F_pair($nflows) [lindex $f $ci(pair)]
    incr nflows
}
close $fh

set out [open $outfile w]
puts $out "flow_id,start_s,end_s,fct_s,size_pkts,pair,data_pkts_sent,retransmits,timeouts,ack_s"
set created 0
set finished 0

# A pool per pair of agent pairs idle since the time recorded with them.
for {set i 0} {$i < $npairs} {incr i} { set pool($i) {} }

# pureack=1 (diagnostics): ns-2's one-way TCP sends no third packet of the handshake;
# Savanna's client sends a 40-byte pure ACK before its first data packet, one more packet
# in the packet-counted forward buffer per flow. With pureack=1 each flow also sends a
# 40-byte UDP packet from its source host right after its first data packet (the agent's
# traced t_seqno_ reaching 2, read through a reflected channel), so the two queues carry
# the same packets; vs_ns2.py --ns2-pureack measures what that extra packet explains.
set pureack [arg pureack 0]
proc pureack_chan {p tcp cmd ch args} {
    global sent_pureack udp
    switch $cmd {
        initialize { return {initialize finalize watch write} }
        write {
            set d [lindex $args 0]
            if {[lindex $d end] == 2 && ![info exists sent_pureack($tcp)]} {
                set sent_pureack($tcp) 1
                $udp($p) send 40 x
            }
            return [string length $d]
        }
        default { return }
    }
}

proc new_agents {p} {
    global ns src dst tcpclass created
    set tcp [new $tcpclass]
    set sink [new Agent/TCPSink]
    $ns attach-agent $src($p) $tcp
    $ns attach-agent $dst($p) $sink
    $ns connect $tcp $sink
    global pureack udp
    if {$pureack} {
        if {![info exists udp($p)]} {
            set udp($p) [new Agent/UDP]
            $udp($p) set packetSize_ 40
            set null [new Agent/Null]
            $ns attach-agent $src($p) $udp($p)
            $ns attach-agent $dst($p) $null
            $ns connect $udp($p) $null
        }
        set ch [chan create write [list pureack_chan $p $tcp]]
        fconfigure $ch -buffering none
        $tcp attach $ch
        $tcp trace t_seqno_
    }
    incr created
    return [list $tcp $sink]
}

proc start_flow {k} {
    global ns nflows F_id F_start F_size F_pair pool agents cooldown busy
    set p $F_pair($k)
    set now [$ns now]
    set got {}
    if {$agents == "reuse" && [llength $pool($p)] > 0} {
        set head [lindex $pool($p) 0]
        if {[lindex $head 2] + $cooldown <= $now} {
            set got [lrange $head 0 1]
            set pool($p) [lrange $pool($p) 1 end]
            # `reset` restores the agent's state but not windowInit_, which
            # TcpAgent::timeout lowers to 1 for good when a SYN times out (RFC 5681 3.1,
            # with bugfix_ss_): without this a reused agent would start every later flow
            # with an initial window of 1.
            [lindex $got 0] set windowInit_ [Agent/TCP set windowInit_]
            [lindex $got 0] reset
            [lindex $got 1] reset
        }
    }
    if {$got == {}} { set got [new_agents $p] }
    set tcp [lindex $got 0]
    global sent_pureack
    unset -nocomplain sent_pureack($tcp)
    set busy($tcp) [list $k [lindex $got 1]]
    # With syn_ the first packet is a 40-byte SYN and data are packets 1..size.
    $tcp advanceby $F_size($k)
    set n [expr {$k + 1}]
    if {$n < $nflows} { $ns at $F_start($n) "start_flow $n" }
}

Agent/TCP instproc done {} {
    global ns busy out pool agents F_id F_start F_size F_pair ack_trip finished syn
    set now [$ns now]
    if {![info exists busy($self)]} { return }
    set k [lindex $busy($self) 0]
    set sink [lindex $busy($self) 1]
    unset busy($self)
    set end [expr {$now - $ack_trip}]
    puts $out [format "%s,%.9f,%.9f,%.9f,%s,%s,%d,%d,%d,%.9f" $F_id($k) $F_start($k) $end \
        [expr {$end - $F_start($k)}] $F_size($k) $F_pair($k) [expr {[$self set ndatapack_] - $syn}] \
        [$self set nrexmitpack_] [$self set nrexmit_] $now]
    incr finished
    set p $F_pair($k)
    # One agent pair per flow (agents=fresh): a finished pair stays attached, as in the
    # usual ns-2 script (deleting an agent whose timers and classifier slots are still
    # referenced crashes ns-2.35).
    if {$agents == "reuse"} { lappend pool($p) [list $self $sink $now] }
}

proc finish {} {
    global ns out outfile qmon rmon duration bn_mbps created finished nflows qtype agents
    global wall0
    close $out
    set s [open $outfile.summary.json w]
    set bytes [$qmon set bdepartures_]
    puts $s [format "{\"sim_seconds\": %s, \"wall_seconds\": %.3f, \"flows_started\": %d,\
\"flows_finished\": %d, \"agents\": \"%s\", \"agent_pairs_created\": %d, \"bottleneck\":\
{\"arrivals\": %d, \"departed\": %d, \"dropped\": %d, \"bytes_departed\": %s, \"utilisation\": %.6f},\
\"reverse\": {\"arrivals\": %d, \"departed\": %d, \"dropped\": %d}}" $duration \
        [expr {([clock clicks -milliseconds] - $wall0) / 1000.0}] [expr {[started]}] \
        $finished $agents $created [$qmon set parrivals_] [$qmon set pdepartures_] \
        [$qmon set pdrops_] $bytes [expr {$bytes * 8.0 / ($bn_mbps * 1e6 * $duration)}] \
        [$rmon set parrivals_] [$rmon set pdepartures_] [$rmon set pdrops_]]
    close $s
    exit 0
}

proc started {} {
    global nflows
    return $nflows
}

set wall0 [clock clicks -milliseconds]
if {$nflows > 0} { $ns at $F_start(0) "start_flow 0" }
$ns at $duration "finish"
$ns run
