# ns-2.35 referee for the RAP rows of hassan's Tables 3-4 (docs/reproduction/hassan.md).
#
# The ns-2 exporter (tfrclab export / crosscheck) has no RAP agent, so this script builds the
# same cell as scenarios/papers/hassan/friendliness.toml by hand with ns-2's own Agent/RAP:
# n RAP and n TCP flows, one host pair each, 10 Mb/s 6 ms side links, a 1.5 Mb/s 20 ms
# bottleneck with a 50-packet DropTail or RED queue (RED as the ns2_2000 preset: min_th 5,
# max_th 15, max_p 0.1, w_q 0.002, packet mode, not gentle), starts uniform 0-2 s, 100 s.
# TCP: window 20, 100 ms tick, no header bytes (useHeaders_ false, as the ns2_2000 preset).
# It prints the mean throughput per RAP and per TCP flow over 20-100 s (bytes leaving the
# bottleneck queue) and F = RAP / TCP.
#
#   ns scripts/hassan_rap_ns2.tcl N QUEUE FINE SEED SIZE TCP [HEADERS]
#   ns scripts/hassan_rap_ns2.tcl 5 DropTail 0 1 100 Reno      # 5 CG RAP + 5 Reno
#
# QUEUE: DropTail or RED; FINE: 0 (coarse grain) or 1 (fine grain); TCP: Reno or Sack1;
# HEADERS: 1 to add ns-2.35's 40 header bytes to each TCP packet (its default), 0 (default).
# ns-2's RAP keeps its shared-first-sample behaviour (docs/rap.md); starts are drawn from ns-2's
# RNG, so runs match tfrclab's in distribution, not draw for draw.
set n [lindex $argv 0]
set q [lindex $argv 1]
set fine [lindex $argv 2]
set seed [lindex $argv 3]
set size [lindex $argv 4]
set tcpkind [lindex $argv 5]
set headers [expr {[llength $argv] > 6 ? [lindex $argv 6] : 0}]
foreach {k v} {thresh_ 5 maxthresh_ 15 q_weight_ 0.002 linterm_ 10 gentle_ false
               queue_in_bytes_ false bytes_ false use_mark_p_ false mean_pktsize_ 500} {
  Queue/RED set $k $v
}
Agent/TCP set window_ 20
Agent/TCP set tcpTick_ 0.1
Agent/TCP set packetSize_ $size
Agent/TCP set useHeaders_ [expr {$headers ? "true" : "false"}]
Agent/RAP set packetSize_ $size
Agent/RAP set rap_base_hdr_size_ 40
Agent/RAP set useFineGrain_ $fine

set ns [new Simulator]
ns-random $seed
set rng [new RNG]
$rng seed $seed
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 1.5Mb 20ms $q
$ns queue-limit $r1 $r2 50
$ns queue-limit $r2 $r1 50
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r1 $r2] $fmon
set start [new RandomVariable/Uniform]
$start set min_ 0
$start set max_ 2
$start use-rng $rng
for {set i 0} {$i < 2 * $n} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r1 10Mb 6ms DropTail
  $ns duplex-link $d($i) $r2 10Mb 6ms DropTail
  if {$i < $n} {
    set a [new Agent/RAP]
    set b [new Agent/RAP]
    $a set fid_ 1
    $ns attach-agent $s($i) $a
    $ns attach-agent $d($i) $b
    $ns connect $a $b
    $ns at [$start value] "$a start"
  } else {
    set a [new Agent/TCP/$tcpkind]
    if {$tcpkind == "Reno"} { set b [new Agent/TCPSink] } else { set b [new Agent/TCPSink/Sack1] }
    $a set fid_ 2
    $ns attach-agent $s($i) $a
    $ns attach-agent $d($i) $b
    $ns connect $a $b
    set ftp [new Application/FTP]
    $ftp attach-agent $a
    $ns at [$start value] "$ftp start"
  }
}
proc departed {fm} {
  set out {}
  foreach f [$fm flows] { lappend out [$f set flowid_] [$f set bdepartures_] }
  return $out
}
set at20 {}
$ns at 20.0 {set at20 [departed $fmon]}
$ns at 100.0 {
  array set A $at20
  array set B [departed $fmon]
  set rap [expr {($B(1) - $A(1)) * 8.0 / 80 / $n}]
  set tcp [expr {($B(2) - $A(2)) * 8.0 / 80 / $n}]
  puts "rap $rap tcp $tcp F [expr {$rap / $tcp}]"
  exit 0
}
$ns run
