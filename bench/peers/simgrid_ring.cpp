/* simgrid_ring.cpp -- the peer of dtsim's timing-only ring benchmark,
 * written against SimGrid's S4U API: the same ring, step times, links and
 * protocols as bench/scenarios/ring-none-dpsgd.json, so that the two
 * simulators can be timed side by side (bench/peers/compare.py).  It is
 * built only by `make bench` (CMake option DTSIM_PEERS), never by the
 * normal build or the tests.
 *
 * Platform: one host per node (1 Gflop/s; a step of T seconds is an
 * execution of T * 1e9 flops), an uplink and a downlink per host (bandwidth
 * B; the uplink carries the latency a), and a route i -> j = {up_i,
 * down_j} for each pair of ring neighbours.  Network model CM02 with
 * latency and bandwidth factors 1, no cross-traffic and TCP-gamma 0 (no
 * window bound), so one transfer of M bytes takes exactly a + M/B, as in
 * dtsim.  Mailboxes have a permanent receiver, so a transfer starts when
 * it is posted, as dtsim's sends do.
 *
 * Protocols (dtsim's timing semantics, see sim/algos/):
 *   dpsgd  -- round k: send the model to both neighbours (lower number
 *             first), compute the step, wait for both neighbours' round-k
 *             models; STEPS rounds.
 *   adpsgd -- even nodes active, odd passive (the ring's bipartition).
 *             Every node computes steps back to back until the simulated
 *             horizon STEPS * STEP_S (dtsim: stop.time_s, since its
 *             stop.steps counts all nodes' steps together); an active node
 *             whose step ends waits for its outstanding averaging's reply,
 *             then sends its model to a random neighbour and starts the
 *             next step; a passive node's server actor answers each
 *             request with a model of the same size.
 * Differences from dtsim, which matter only under contention: SimGrid
 * shares a link among its flows (max-min), dtsim's NICs are FIFO by
 * default, and then the order of sends matters: with a message longer than
 * a step, the node that receives both its neighbours' second transfers
 * waits 3M/B.  With dtsim's "fair" discipline (processor sharing, which
 * is max-min sharing between equal flows) the homogeneous D-PSGD ring's
 * rounds last a + 2M/B in both, so the instants at which the last step
 * ends (last_step_s; dtsim's stop.steps ends its run there) agree.
 *
 *   ps     -- a synchronous parameter server (dtsim's ps-sync): NODES
 *             workers and one server host; route worker -> server {up_k,
 *             down_s}, server -> worker {up_s, down_k}.  Worker k's step
 *             is STEP_S x (1 + 0.25 floor(4k / NODES)) (four speed groups,
 *             dtsim: compute.groups slowdowns), SIGMA is ignored; it
 *             computes, sends its gradient, waits for the model; the
 *             server gathers every gradient, then sends every worker the
 *             model.  A star of shared NICs: the check of dtsim's fair
 *             sharing (bench/peers/star.py).
 *
 * usage: simgrid_ring dpsgd|adpsgd|ps NODES STEPS STEP_S LATENCY_S BANDWIDTH_BPS BYTES SIGMA SEED
 *                     [PRECISION]
 *   (SIGMA > 0: lognormal step times with mean STEP_S; PRECISION sets
 *   SimGrid's maxmin/precision and surf/precision, default theirs, 1e-5;
 *   prints one line)
 */
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>
#include <sys/resource.h>

namespace sg4 = simgrid::s4u;

static int n_nodes, n_steps;
static double horizon_s;   /* adpsgd: steps start before it */
static double step_s, latency_s, bandwidth, msg_bytes, sigma;
static std::vector<std::mt19937_64> rngs;
static std::vector<sg4::Host*> hosts;
/* inbox[i][0]: from the left neighbour, [1]: from the right (dpsgd);
 * inbox[i][0]: requests, [1]: replies (adpsgd) */
static std::vector<sg4::Mailbox*> inbox[2];
static std::vector<int> ids;
static double last_step_end;   /* when the last step of all ended */

static void compute(double flops)
{
    sg4::this_actor::execute(flops);
    last_step_end = std::max(last_step_end, sg4::Engine::get_clock());
}

static double step_flops(int i)
{
    double t = step_s;
    if (sigma > 0) {
        std::lognormal_distribution<double> d(-0.5 * sigma * sigma, sigma);
        t *= d(rngs[i]);
    }
    return t * 1e9;
}

static int left(int i) { return (i + n_nodes - 1) % n_nodes; }
static int right(int i) { return (i + 1) % n_nodes; }

static void send(sg4::Mailbox* to, int* who)
{
    to->put_init(who, (uint64_t)msg_bytes)->detach();
}

static int ps_server;   /* ps: the server's index in hosts and inbox */

static void ps_worker(int i)
{
    inbox[0][i]->set_receiver(sg4::Actor::self());
    double t = step_s * (1.0 + 0.25 * std::floor(4.0 * i / n_nodes)) * 1e9;
    for (int k = 0; k < n_steps; k++) {
        compute(t);
        send(inbox[0][ps_server], &ids[i]);
        if (k + 1 < n_steps)
            inbox[0][i]->get<int>();
    }
}

static void ps_server_actor()
{
    inbox[0][ps_server]->set_receiver(sg4::Actor::self());
    for (int k = 0; k < n_steps; k++) {
        for (int w = 0; w < n_nodes; w++)
            inbox[0][ps_server]->get<int>();
        if (k + 1 < n_steps)
            for (int w = 0; w < n_nodes; w++)
                send(inbox[0][w], &ids[ps_server]);
    }
}

static void dpsgd_worker(int i)
{
    int l = left(i), r = right(i);
    inbox[0][i]->set_receiver(sg4::Actor::self());
    inbox[1][i]->set_receiver(sg4::Actor::self());
    /* j's inbox for messages from i: i is j's right neighbour when j = l */
    sg4::Mailbox* to_l = inbox[1][l];
    sg4::Mailbox* to_r = inbox[0][r];
    for (int k = 0; k < n_steps; k++) {
        if (l < r) {
            send(to_l, &ids[i]);
            send(to_r, &ids[i]);
        } else {
            send(to_r, &ids[i]);
            send(to_l, &ids[i]);
        }
        compute(step_flops(i));
        inbox[0][i]->get<int>();
        inbox[1][i]->get<int>();
    }
}

static void adpsgd_active(int i)
{
    inbox[1][i]->set_receiver(sg4::Actor::self());
    bool outstanding = false;
    std::uniform_int_distribution<int> coin(0, 1);
    while (sg4::Engine::get_clock() < horizon_s) {
        compute(step_flops(i));
        if (outstanding)
            inbox[1][i]->get<int>();
        int j = coin(rngs[i]) ? right(i) : left(i);
        send(inbox[0][j], &ids[i]);
        outstanding = true;
    }
}

static void adpsgd_passive(int i)
{
    while (sg4::Engine::get_clock() < horizon_s)
        compute(step_flops(i));
}

static void adpsgd_server(int i)
{
    sg4::Actor::self()->daemonize();
    for (;;) {
        int* from = inbox[0][i]->get<int>();
        send(inbox[1][*from], &ids[i]);
    }
}

static double cpu_seconds()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec + ru.ru_stime.tv_sec +
           1e-6 * ru.ru_stime.tv_usec;
}

static double wall_seconds()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char** argv)
{
    if (argc != 10 && argc != 11) {
        std::fprintf(stderr, "usage: simgrid_ring dpsgd|adpsgd NODES STEPS STEP_S LATENCY_S "
                             "BANDWIDTH_BPS BYTES SIGMA SEED\n");
        return 2;
    }
    std::string alg = argv[1];
    n_nodes = std::atoi(argv[2]);
    n_steps = std::atoi(argv[3]);
    step_s = std::atof(argv[4]);
    latency_s = std::atof(argv[5]);
    bandwidth = std::atof(argv[6]);
    msg_bytes = std::atof(argv[7]);
    sigma = std::atof(argv[8]);
    unsigned long long seed = std::strtoull(argv[9], nullptr, 10);
    horizon_s = n_steps * step_s;
    if ((alg != "dpsgd" && alg != "adpsgd" && alg != "ps") || n_nodes < 3 || n_steps < 1 ||
        (alg == "adpsgd" && n_nodes % 2)) {
        std::fprintf(stderr, "simgrid_ring: error: dpsgd or adpsgd on >= 3 nodes (adpsgd: an "
                             "even number)\n");
        return 2;
    }
    double w0 = wall_seconds(), c0 = cpu_seconds();

    int sg_argc = 1;
    char* sg_argv[] = {argv[0], nullptr};
    sg4::Engine e(&sg_argc, sg_argv);
    e.set_config("network/model:CM02");
    e.set_config("network/latency-factor:1");
    e.set_config("network/bandwidth-factor:1");
    e.set_config("network/crosstraffic:0");
    e.set_config("network/TCP-gamma:0");
    if (argc == 11) {
        e.set_config(std::string("maxmin/precision:") + argv[10]);
        e.set_config(std::string("surf/precision:") + argv[10]);
    }

    auto* zone = sg4::create_full_zone("ring");
    int n_hosts = alg == "ps" ? n_nodes + 1 : n_nodes;
    ps_server = n_nodes;
    std::vector<sg4::Link*> up(n_hosts), down(n_hosts);
    for (int i = 0; i < n_hosts; i++) {
        std::string s = std::to_string(i);
        hosts.push_back(zone->create_host("h" + s, 1e9)->seal());
        up[i] = zone->create_link("up" + s, bandwidth)->set_latency(latency_s)->seal();
        down[i] = zone->create_link("down" + s, bandwidth)->set_latency(0)->seal();
        rngs.emplace_back(seed * 1000003ULL + (unsigned long long)i);
        ids.push_back(i);
    }
    if (alg == "ps")
        for (int i = 0; i < n_nodes; i++) {
            int sv = ps_server;
            zone->add_route(hosts[i]->get_netpoint(), hosts[sv]->get_netpoint(), nullptr, nullptr,
                            {sg4::LinkInRoute(up[i]), sg4::LinkInRoute(down[sv])}, false);
            zone->add_route(hosts[sv]->get_netpoint(), hosts[i]->get_netpoint(), nullptr, nullptr,
                            {sg4::LinkInRoute(up[sv]), sg4::LinkInRoute(down[i])}, false);
        }
    for (int i = 0; alg != "ps" && i < n_nodes; i++)
        for (int j : {left(i), right(i)})
            zone->add_route(hosts[i]->get_netpoint(), hosts[j]->get_netpoint(), nullptr, nullptr,
                            {sg4::LinkInRoute(up[i]), sg4::LinkInRoute(down[j])}, false);
    zone->seal();
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < n_hosts; i++)
            inbox[b].push_back(sg4::Mailbox::by_name("m" + std::to_string(b) + "_" +
                                                     std::to_string(i)));
    if (alg == "ps")
        sg4::Actor::create("server", hosts[ps_server], ps_server_actor);
    for (int i = 0; i < n_nodes; i++) {
        if (alg == "ps") {
            sg4::Actor::create("w" + std::to_string(i), hosts[i], ps_worker, i);
        } else if (alg == "dpsgd") {
            sg4::Actor::create("w" + std::to_string(i), hosts[i], dpsgd_worker, i);
        } else if (i % 2 == 0) {
            sg4::Actor::create("w" + std::to_string(i), hosts[i], adpsgd_active, i);
        } else {
            sg4::Actor::create("w" + std::to_string(i), hosts[i], adpsgd_passive, i);
            auto srv = sg4::Actor::create("s" + std::to_string(i), hosts[i], adpsgd_server, i);
            inbox[0][i]->set_receiver(srv);
        }
    }
    double w1 = wall_seconds(), c1 = cpu_seconds();
    e.run();
    double w2 = wall_seconds(), c2 = cpu_seconds();
    std::printf("simgrid %s nodes=%d sim_time_s=%.17g last_step_s=%.17g setup_wall_s=%.6f setup_cpu_s=%.6f "
                "run_wall_s=%.6f run_cpu_s=%.6f\n",
                alg.c_str(), n_nodes, sg4::Engine::get_clock(), last_step_end, w1 - w0, c1 - c0, w2 - w1,
                c2 - c1);
    return 0;
}
