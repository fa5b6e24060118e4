# What the ns-2 scripts here share: their key=value arguments and the TCP agent settings in
# force. Every setting is explicit, so a run does not depend on ns-default.tcl; README.md
# says where each value comes from. Sourced by dumbbell.tcl and transfers.tcl.

# Read argv's key=value pairs into `opts`; a malformed argument or a key not in `allowed`
# exits 2.
proc parse_args {allowed} {
    global argv opts
    foreach a $argv {
        set kv [split $a =]
        if {[llength $kv] != 2} { puts stderr "bad argument '$a' (want key=value)"; exit 2 }
        set opts([lindex $kv 0]) [lindex $kv 1]
    }
    foreach k [array names opts] {
        if {[lsearch $allowed $k] < 0} { puts stderr "unknown option '$k'"; exit 2 }
    }
}

# The value of argument `name`, or `default`.
proc arg {name default} {
    global opts
    if {[info exists opts($name)]} { return $opts($name) }
    return $default
}

# Agent/TCP's settings for packets of `pkt` bytes with `hdr`-byte headers; `tick` is the
# script's default tcpTick_ (arguments window, iw, syn, tick, minrto, maxrto, rtoinit and
# singledup override).
proc tcp_settings {pkt hdr tick} {
    Agent/TCP set packetSize_ [expr {$pkt - $hdr}]
    Agent/TCP set tcpip_base_hdr_size_ $hdr
    Agent/TCP set useHeaders_ true
    Agent/TCP set window_ [arg window 128]
    Agent/TCP set maxcwnd_ [arg window 128]
    Agent/TCP set windowInit_ [arg iw 2]
    Agent/TCP set windowInitOption_ 1
    Agent/TCP set syn_ [arg syn true]
    Agent/TCP set delay_growth_ true
    Agent/TCP set tcpTick_ [arg tick $tick]
    Agent/TCP set minrto_ [arg minrto 0.2]
    Agent/TCP set maxrto_ [arg maxrto 60]
    Agent/TCP set rtxcur_init_ [arg rtoinit 3.0]
    Agent/TCP set singledup_ [arg singledup 0]
    Agent/TCP set maxburst_ 0
    Agent/TCP set timestamps_ false
    Agent/TCP set ecn_ 0
    Agent/TCP set overhead_ 0
    Agent/TCP set numdupacks_ 3
    # ns-2.35 halves cwnd_ as a real number (precisionReduce_, default true since
    # 2006/01/24); false halves the integer window, as before 2006 and as Savanna does.
    Agent/TCP set precisionReduce_ [arg precision_reduce true]
}

# The sender class of ns-2's one-way TCP `variant` (Tahoe is Agent/TCP itself).
proc tcp_class {variant} {
    if {$variant == "Tahoe"} { return Agent/TCP }
    return Agent/TCP/$variant
}

# RED as Savanna models it, on each queue class of `classes` (Queue/RED, and Queue/RED/RIO
# which inherits it): packet mode with `pkt`-byte packets, gentle (argument gentle, default
# true), wait, ECN marking when `ecn`, tail drop at the limit, no adaptation; Queue/RED's
# curve from the arguments min_th, max_th, max_p (linterm_ = 1 / max_p) and w_q.
proc red_settings {classes pkt ecn} {
    foreach q $classes {
        $q set bytes_ false
        $q set queue_in_bytes_ false
        $q set mean_pktsize_ $pkt
        $q set q_weight_ [arg w_q 0.001953125]
        $q set gentle_ [arg gentle true]
        $q set wait_ true
        $q set setbit_ [expr {$ecn ? "true" : "false"}]
        $q set drop_tail_ true
        $q set adaptive_ 0
    }
    Queue/RED set thresh_ [arg min_th 12]
    Queue/RED set maxthresh_ [arg max_th 40]
    Queue/RED set linterm_ [expr {1.0 / [arg max_p 0.1]}]
}
