# Guo & Matta 2001, Fig. 2(b) in ns-2.35: one TCP connection at a time transfers a file of
# `size` packets over a bottleneck that loses each forward packet with probability `loss`;
# "once the file transfer finishes, a new connection immediately starts". Mirrors
# scenarios/guo-matta-2001-fig02b.toml (one host pair of the reference dumbbell, a
# 1000-packet buffer no window fills).
#
#   ns transfers.tcl out=OUT.csv size=100 loss=0.05 count=300 [seed=1] [tick=0.1] ...
#
# OUT.csv: one row per transfer: start_s, end_s, fct_s (to the delivery of the last packet,
# reckoned as in dumbbell.tcl), data_pkts_sent, retransmits, timeouts.

source [file join [file dirname [info script]] common.tcl]
parse_args {out size loss count seed tick minrto maxrto rtoinit iw window packet_bytes
    header_bytes syn singledup bottleneck_mbps access_mbps bottleneck_delay_ms access_delay_ms}
set outfile [arg out ""]
if {$outfile == ""} { puts stderr "out= is required"; exit 2 }
set size [arg size 100]
set count [arg count 300]
set pkt [arg packet_bytes 500]
set hdr [arg header_bytes 40]
set bn_mbps [arg bottleneck_mbps 10]
set ac_mbps [arg access_mbps 100]
set bn_delay [arg bottleneck_delay_ms 40]
set ac_delay [arg access_delay_ms 5]

set ns [new Simulator]
ns-random [arg seed 1]
$defaultRNG seed [arg seed 1]

tcp_settings $pkt $hdr 0.1

set left [$ns node]
set right [$ns node]
set src [$ns node]
set dst [$ns node]
$ns duplex-link $left $right ${bn_mbps}Mb ${bn_delay}ms DropTail
$ns duplex-link $src $left ${ac_mbps}Mb ${ac_delay}ms DropTail
$ns duplex-link $right $dst ${ac_mbps}Mb ${ac_delay}ms DropTail
foreach {a b} [list $left $right $right $left $src $left $left $src $right $dst $dst $right] {
    $ns queue-limit $a $b 1001
}
# Bernoulli loss on the forward bottleneck link, every packet (SYN included), as Savanna's
# bottleneck_loss.
set em [new ErrorModel]
$em unit pkt
$em set rate_ [arg loss 0.05]
set rng [new RNG]
$rng seed [expr {[arg seed 1] + 7}]
set rv [new RandomVariable/Uniform]
$rv use-rng $rng
$em ranvar $rv
$ns link-lossmodel $em $left $right

set ack_trip [expr {2 * $ac_delay / 1000.0 + $bn_delay / 1000.0
    + 2 * $hdr * 8 / ($ac_mbps * 1e6) + $hdr * 8 / ($bn_mbps * 1e6)}]
set syn [expr {[arg syn true] ? 1 : 0}]

set out [open $outfile w]
puts $out "start_s,end_s,fct_s,data_pkts_sent,retransmits,timeouts"
set done_n 0
set t0 0.0

# A new agent pair per transfer: a reset agent could still receive a late copy of the
# previous transfer's data, which would corrupt its sink's sequence state.
proc start {} {
    global ns src dst size t0
    set t0 [$ns now]
    set tcp [new Agent/TCP/Newreno]
    set sink [new Agent/TCPSink]
    $ns attach-agent $src $tcp
    $ns attach-agent $dst $sink
    $ns connect $tcp $sink
    $tcp advanceby $size
}

Agent/TCP instproc done {} {
    global ns out t0 ack_trip done_n count syn
    set now [$ns now]
    set end [expr {$now - $ack_trip}]
    puts $out [format "%.9f,%.9f,%.9f,%d,%d,%d" $t0 $end [expr {$end - $t0}] \
        [expr {[$self set ndatapack_] - $syn}] [$self set nrexmitpack_] [$self set nrexmit_]]
    incr done_n
    if {$done_n >= $count} { close $out; exit 0 }
    # The next connection starts at once, as a fresh event (not inside this ACK's handling).
    $ns at $now "start"
}

$ns at 0.0 "start"
$ns at 1e7 "close $out; exit 0"
$ns run
