// A twin cell in ns-3.37: N bulk TCP flows through one bottleneck, measured as `tfrclab twin`
// measures both of its sides (python/tfrclab/twin.py), printed as one JSON object.
//
// Topology: N senders -- (access) -- router A -- (bottleneck, FIFO of `queue` packets) --
// router B -- (access) -- N receivers. TCP as Linux runs it where ns-3 has a knob for it
// (scripts/ns3_second_opinion.py says which): 1448-byte segments with timestamps (1500-byte IP
// packets), initial window 10, SACK, PRR, minimum RTO 200 ms, delayed ACKs every second segment
// or 40 ms, pacing for BBR. Built and run by scripts/ns3_second_opinion.py.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// What the bottleneck queue did inside the measurement window.
struct Window
{
    double from = 0.0;
    double to = 0.0;
    uint64_t arrivals = 0;
    uint64_t drops = 0;
    std::vector<uint64_t> departedBytes; // per flow, by the sender's address
    double queueIntegral = 0.0; // packets x seconds
    double lastChange = 0.0;
    uint32_t lastLength = 0;
};

Window g_window;

bool
Inside(double t)
{
    return t >= g_window.from && t < g_window.to;
}

void
OnEnqueue(Ptr<const QueueDiscItem>)
{
    if (Inside(Simulator::Now().GetSeconds()))
    {
        g_window.arrivals++;
    }
}

void
OnDrop(Ptr<const QueueDiscItem>)
{
    // A packet refused at the queue's tail was never enqueued: count it as an arrival too.
    if (Inside(Simulator::Now().GetSeconds()))
    {
        g_window.arrivals++;
        g_window.drops++;
    }
}

std::vector<Ipv4Address> g_senders;

// Bytes of each flow's IP packets leaving the bottleneck's device (its own header taken off).
void
OnTransmit(Ptr<const Packet> packet)
{
    if (!Inside(Simulator::Now().GetSeconds()))
    {
        return;
    }
    Ptr<Packet> copy = packet->Copy();
    PppHeader ppp;
    copy->RemoveHeader(ppp);
    Ipv4Header ip;
    copy->PeekHeader(ip);
    for (size_t i = 0; i < g_senders.size(); ++i)
    {
        if (g_senders[i] == ip.GetSource())
        {
            g_window.departedBytes[i] += copy->GetSize();
        }
    }
}

void
OnQueueLength(uint32_t, uint32_t now)
{
    double t = Simulator::Now().GetSeconds();
    double lo = std::max(g_window.lastChange, g_window.from);
    double hi = std::min(t, g_window.to);
    if (hi > lo)
    {
        g_window.queueIntegral += g_window.lastLength * (hi - lo);
    }
    g_window.lastChange = t;
    g_window.lastLength = now;
}

std::vector<uint64_t> g_receivedInWindow;

void
OnSinkRx(uint32_t flow, Ptr<const Packet> packet, const Address&)
{
    if (Inside(Simulator::Now().GetSeconds()))
    {
        g_receivedInWindow[flow] += packet->GetSize();
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string tcp = "cubic";
    std::string rate = "20Mbps";
    double oneWayMs = 20.0;
    uint32_t queue = 33;
    uint32_t flows = 1;
    double duration = 30.0;
    double from = 5.0;
    uint32_t seed = 1;
    double accessDelayMs = 0.1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("tcp", "reno, cubic or bbr", tcp);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay_ms", "bottleneck one-way delay, ms", oneWayMs);
    cmd.AddValue("access_delay_ms", "each access link's delay, ms", accessDelayMs);
    cmd.AddValue("queue", "bottleneck FIFO limit, packets", queue);
    cmd.AddValue("flows", "TCP flows", flows);
    cmd.AddValue("duration", "run length, s", duration);
    cmd.AddValue("from", "measurement window start, s", from);
    cmd.AddValue("seed", "run number (start times)", seed);
    cmd.Parse(argc, argv);

    std::string type;
    if (tcp == "reno")
    {
        type = "ns3::TcpLinuxReno";
    }
    else if (tcp == "cubic")
    {
        type = "ns3::TcpCubic";
    }
    else if (tcp == "bbr")
    {
        type = "ns3::TcpBbr";
    }
    else
    {
        std::fprintf(stderr, "tcp: expected reno, cubic or bbr, found %s\n", tcp.c_str());
        return 2;
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(type));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName("ns3::TcpPrrRecovery")));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    if (tcp == "bbr")
    {
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }

    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    NodeContainer routers;
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetChannelAttribute("Delay", TimeValue(MicroSeconds(accessDelayMs * 1000.0)));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(MicroSeconds(oneWayMs * 1000.0)));
    // The device holds one packet; the FIFO queue disc in front of it is the bottleneck's queue.
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    Ipv4AddressHelper addresses;
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                          "MaxSize",
                          StringValue(std::to_string(queue) + "p"));
    QueueDiscContainer discs = fifo.Install(core);
    addresses.SetBase("10.0.0.0", "255.255.255.0");
    addresses.Assign(core);

    std::vector<Ipv4Address> sinks;
    for (uint32_t i = 0; i < flows; ++i)
    {
        NetDeviceContainer left = access.Install(senders.Get(i), routers.Get(0));
        NetDeviceContainer right = access.Install(routers.Get(1), receivers.Get(i));
        addresses.SetBase(("10.1." + std::to_string(i) + ".0").c_str(), "255.255.255.0");
        g_senders.push_back(addresses.Assign(left).GetAddress(0));
        addresses.SetBase(("10.2." + std::to_string(i) + ".0").c_str(), "255.255.255.0");
        sinks.push_back(addresses.Assign(right).GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_window.from = from;
    g_window.to = duration;
    g_window.departedBytes.assign(flows, 0);
    g_receivedInWindow.assign(flows, 0);
    Ptr<QueueDisc> disc = discs.Get(0);
    disc->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
    disc->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    disc->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQueueLength));
    core.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnTransmit));

    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    start->SetAttribute("Min", DoubleValue(0.0));
    start->SetAttribute("Max", DoubleValue(0.1));
    for (uint32_t i = 0; i < flows; ++i)
    {
        uint16_t port = 5101 + i;
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer app = sink.Install(receivers.Get(i));
        app.Start(Seconds(0.0));
        app.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, i));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(1448 * 8));
        ApplicationContainer source = bulk.Install(senders.Get(i));
        source.Start(Seconds(start->GetValue()));
    }

    Simulator::Stop(Seconds(duration));
    Simulator::Run();
    OnQueueLength(0, g_window.lastLength); // close the integral at the window's end

    double span = g_window.to - g_window.from;
    std::printf("{\"tcp\": \"%s\", \"seed\": %u, \"window_s\": [%g, %g], ",
                tcp.c_str(),
                seed,
                g_window.from,
                g_window.to);
    std::printf("\"arrivals\": %llu, \"drops\": %llu, \"mean_queue\": %.6f, ",
                static_cast<unsigned long long>(g_window.arrivals),
                static_cast<unsigned long long>(g_window.drops),
                g_window.queueIntegral / span);
    std::printf("\"departed_bytes\": [");
    for (uint32_t i = 0; i < flows; ++i)
    {
        std::printf("%s%llu",
                    i ? ", " : "",
                    static_cast<unsigned long long>(g_window.departedBytes[i]));
    }
    std::printf("], \"goodput_bps\": [");
    for (uint32_t i = 0; i < flows; ++i)
    {
        std::printf("%s%.1f", i ? ", " : "", g_receivedInWindow[i] * 8.0 / span);
    }
    std::printf("]}\n");
    Simulator::Destroy();
    return 0;
}
