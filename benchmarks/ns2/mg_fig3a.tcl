# Matta & Guo 2000, Fig. 3(a) in ns-2.35: one closed-loop session per size on a single
# bottleneck (each connection replaced by another of the same size as soon as it is done),
# one agent pair per session reused for every connection. Writes, as JSON, each session's
# connections completed, loss recoveries (ncwndcuts_: every slowdown, i.e. fast retransmits
# and timeouts), timeouts (nrexmit_) and retransmitted packets, and the share of time after
# `warmup` the largest session's cwnd_ is at the maximum window (sampled every `sample` s).
#
#   ns mg_fig3a.tcl out=OUT.json sizes=20,50,... starts=0.3,1.2,... [key=value ...]
#
# TCP settings come from common.tcl (arguments as vs_ns2.py's tcp_args); the topology is
# paper.tcl's dumbbell: one pair per session, access links access_mbps / access_delay_ms,
# a bottleneck of bottleneck_mbps / bottleneck_delay_ms with a DropTail buffer of `waiting`
# waiting places (limit_ waiting + 1, README.md), the ACK path's of reverse_waiting.

source [file join [file dirname [info script]] common.tcl]
parse_args {out sizes starts duration seed bottleneck_mbps access_mbps bottleneck_delay_ms
    access_delay_ms waiting reverse_waiting access_waiting warmup sample syn tick minrto maxrto
    rtoinit window iw singledup packet_bytes header_bytes variant pairs}

set outfile [arg out ""]
if {$outfile == ""} { puts stderr "out= is required"; exit 2 }
set sizes [split [arg sizes ""] ,]
set starts [split [arg starts ""] ,]
if {[llength $sizes] == 0 || [llength $sizes] != [llength $starts]} {
    puts stderr "sizes= and starts= must list one value per session"; exit 2
}
set duration [arg duration 900]
set warmup [arg warmup 10]
set sample [arg sample 0.01]
set bn_mbps [arg bottleneck_mbps 1.5]
set ac_mbps [arg access_mbps 10]

set ns [new Simulator]
ns-random [arg seed 1]
$defaultRNG seed [arg seed 1]
set variant [arg variant Reno]
set tcpclass [tcp_class $variant]
tcp_settings [arg packet_bytes 576] [arg header_bytes 40] 0.5
Queue/DropTail set queue_in_bytes_ false
Queue/DropTail set drop_front_ false
set maxwin [Agent/TCP set window_]

set left [$ns node]
set right [$ns node]
$ns simplex-link $left $right ${bn_mbps}Mb [arg bottleneck_delay_ms 100]ms DropTail
$ns simplex-link $right $left ${bn_mbps}Mb [arg bottleneck_delay_ms 100]ms DropTail
$ns queue-limit $left $right [expr {[arg waiting 75] + 1}]
$ns queue-limit $right $left [expr {[arg reverse_waiting 75] + 1}]
set n [llength $sizes]
for {set i 0} {$i < $n} {incr i} {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $left ${ac_mbps}Mb [arg access_delay_ms 5]ms DropTail
    $ns duplex-link $right $d ${ac_mbps}Mb [arg access_delay_ms 5]ms DropTail
    foreach {a b} [list $s $left $left $s $right $d $d $right] {
        $ns queue-limit $a $b [expr {[arg access_waiting 4000] + 1}]
    }
    set tcp($i) [new $tcpclass]
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $s $tcp($i)
    $ns attach-agent $d $sink($i)
    $ns connect $tcp($i) $sink($i)
    set sess($tcp($i)) $i
    foreach c {done recov tmo rexmit} { set S_${c}($i) 0 }
    $ns at [lindex $starts $i] "start_conn $i"
}

# Counters are read as differences over each connection, whether or not reset clears them.
proc start_conn {i} {
    global tcp sink sizes base
    set t $tcp($i)
    $t set windowInit_ [Agent/TCP set windowInit_]
    $t reset
    $sink($i) reset
    set base($i) [list [$t set ncwndcuts_] [$t set nrexmit_] [$t set nrexmitpack_]]
    $t advanceby [lindex $sizes $i]
}

proc account {i} {
    global tcp base S_recov S_tmo S_rexmit
    set t $tcp($i)
    lassign $base($i) c0 r0 p0
    set S_recov($i) [expr {$S_recov($i) + [$t set ncwndcuts_] - $c0}]
    set S_tmo($i) [expr {$S_tmo($i) + [$t set nrexmit_] - $r0}]
    set S_rexmit($i) [expr {$S_rexmit($i) + [$t set nrexmitpack_] - $p0}]
}

Agent/TCP instproc done {} {
    global ns sess S_done
    set i $sess($self)
    account $i
    incr S_done($i)
    $ns at [$ns now] "start_conn $i"
}

# The largest session's window, sampled.
set big 0
for {set i 1} {$i < $n} {incr i} {
    if {[lindex $sizes $i] > [lindex $sizes $big]} { set big $i }
}
set at_max 0
set samples 0
proc sample_cwnd {} {
    global ns tcp big maxwin at_max samples sample duration
    incr samples
    if {[$tcp($big) set cwnd_] >= $maxwin} { incr at_max }
    set next [expr {[$ns now] + $sample}]
    if {$next < $duration} { $ns at $next sample_cwnd }
}
$ns at $warmup sample_cwnd

proc finish {} {
    global n sizes outfile S_done S_recov S_tmo S_rexmit at_max samples big duration
    set rows {}
    for {set i 0} {$i < $n} {incr i} {
        account $i
        lappend rows [format "{\"size\": %s, \"completed\": %d, \"recoveries\": %d, \"timeouts\": %d,\
\"retransmits\": %d}" [lindex $sizes $i] $S_done($i) $S_recov($i) $S_tmo($i) $S_rexmit($i)]
    }
    set f [open $outfile w]
    puts $f [format "{\"duration\": %s, \"largest\": %s, \"share_at_max\": %.6f, \"sessions\": \[%s\]}" \
        $duration [lindex $sizes $big] [expr {$samples ? double($at_max) / $samples : 0.0}] [join $rows ", "]]
    close $f
    exit 0
}
$ns at $duration finish
$ns run
