/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccel: arguments -> configuration -> EAL -> ports -> pipeline -> RPC.
 *
 *   pktaccel [EAL options] -- [options]
 *   pktaccel --replay IN.pcap --replay-out OUT.pcap -c CONF.json
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <numa.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "pa_acl.h"
#include "pa_capture.h"
#include "pa_lb.h"
#include "pa_neigh.h"
#include "pa_config.h"
#include "pa_metrics.h"
#include "pa_pipeline.h"
#include "pa_pkt.h"
#include "pa_port.h"
#include "pa_rpc.h"
#include "pktaccel.h"

#define DEFAULT_SOCKET		"/run/pktaccel/pktaccel.sock"
#define REPLAY_PORT		"replay0"
#define REPLAY_DEVICE		"net_pcap_" REPLAY_PORT
#define REPLAY_MEM_MB		"1024"
#define CAPTURE_RING_SIZE	1024
#define MAX_EAL_ARGS		128
#define ERR_LEN			1024
#define CTRL_POLL_MS		50

struct options {
	const char *config;
	const char *socket;
	bool socket_given;
	const char *replay_in;
	const char *replay_out;
	const char *replay_drops;
	const char *drivers_config;
	const char *capture_dir;
	bool stay;
};

static volatile sig_atomic_t quit_signals;
static volatile bool quit_requested;

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [EAL options] -- [options]\n"
"       %s --replay IN.pcap [--replay-out OUT.pcap] [-c CONF.json] [options]\n"
"\n"
"pktaccel: a DPDK L3/L4 filter (ACL) and L4 load balancer.\n"
"\n"
"Options:\n"
"  -c, --config FILE        JSON configuration (see docs/configuration.md)\n"
"  -s, --rpc-socket PATH    JSON-RPC Unix socket (default " DEFAULT_SOCKET ";\n"
"                           in replay mode only opened when given)\n"
"      --drivers-config DIR where ports' \"profile\" files are looked up\n"
"                           (default: the installed drivers-config/)\n"
"      --replay IN.pcap     lab replay: run every packet of IN.pcap through the\n"
"                           pipeline on port '" REPLAY_PORT "', then exit; no EAL\n"
"                           options needed (--no-huge --no-shconf --no-pci and\n"
"                           the net_pcap device are supplied)\n"
"      --replay-out FILE    where forwarded packets go (default: discarded)\n"
"      --replay-drops FILE  write dropped packets here\n"
"      --stay               after the replay keep serving RPC until SIGTERM or\n"
"                           the 'shutdown' method\n"
"      --capture-dir DIR    where capture_start writes its files (default\n"
"                           " PA_CAPTURE_DEFAULT_DIR ")\n"
"      --version            print the version and exit\n"
"  -h, --help               this help\n"
"\n"
"Replay prints a JSON summary as the last line of stdout:\n"
"  {\"rx_packets\":N,\"tx_packets\":N,\"dropped_packets\":N,\"drops\":{...},\"mbufs_in_use\":0}\n"
"SIGINT/SIGTERM stop cleanly (a second SIGINT stops waiting for full queues).\n"
"Without -l/-c/--lcores among the EAL options the daemon maps the lcores its\n"
"configuration needs onto the CPUs it may run on.\n",
		prog, prog);
}

static int
parse_options(int argc, char **argv, struct options *o, char *err,
		size_t err_len)
{
	enum { OPT_REPLAY = 256, OPT_REPLAY_OUT, OPT_REPLAY_DROPS, OPT_STAY,
		OPT_VERSION, OPT_DRIVERS_CONFIG, OPT_CAPTURE_DIR };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "rpc-socket", required_argument, NULL, 's' },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "replay-out", required_argument, NULL, OPT_REPLAY_OUT },
		{ "replay-drops", required_argument, NULL, OPT_REPLAY_DROPS },
		{ "stay", no_argument, NULL, OPT_STAY },
		{ "drivers-config", required_argument, NULL, OPT_DRIVERS_CONFIG },
		{ "capture-dir", required_argument, NULL, OPT_CAPTURE_DIR },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->socket = DEFAULT_SOCKET;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":c:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 's':
			o->socket = optarg;
			o->socket_given = true;
			break;
		case OPT_REPLAY:
			o->replay_in = optarg;
			break;
		case OPT_REPLAY_OUT:
			o->replay_out = optarg;
			break;
		case OPT_REPLAY_DROPS:
			o->replay_drops = optarg;
			break;
		case OPT_STAY:
			o->stay = true;
			break;
		case OPT_DRIVERS_CONFIG:
			o->drivers_config = optarg;
			break;
		case OPT_CAPTURE_DIR:
			if (optarg[0] == '\0') {
				snprintf(err, err_len, "--capture-dir: empty");
				return -EINVAL;
			}
			o->capture_dir = optarg;
			break;
		case OPT_VERSION:
			printf("pktaccel %s (DPDK %s)\n", PA_VERSION, rte_version());
			exit(EXIT_SUCCESS);
		case 'h':
			usage(stdout, argv[0]);
			exit(EXIT_SUCCESS);
		case ':':
			snprintf(err, err_len, "option %s needs an argument (see --help)",
				argv[optind - 1]);
			return -EINVAL;
		default:
			snprintf(err, err_len, "unknown option '%s' (see --help)",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		snprintf(err, err_len, "unexpected argument '%s' (see --help)",
			argv[optind]);
		return -EINVAL;
	}
	if (o->replay_in == NULL &&
	    (o->replay_out != NULL || o->replay_drops != NULL || o->stay)) {
		snprintf(err, err_len, "%s needs --replay",
			o->replay_out != NULL ? "--replay-out" :
			o->replay_drops != NULL ? "--replay-drops" : "--stay");
		return -EINVAL;
	}
	return 0;
}

static bool
has_arg(int argc, char **argv, const char *const *names)
{
	int i, j;

	for (i = 1; i < argc; i++)
		for (j = 0; names[j] != NULL; j++)
			if (strcmp(argv[i], names[j]) == 0 ||
			    (strncmp(argv[i], names[j], strlen(names[j])) == 0 &&
			     names[j][1] == '-' && argv[i][strlen(names[j])] == '='))
				return true;
	return false;
}

/* NUMA node of the first PCI port (sysfs), or -1: where the lcores the
 * daemon maps itself should live. Virtual devices have no node. */
static int
ports_numa_node(const struct pa_config *cfg)
{
	char path[PATH_MAX], name[64];
	unsigned int i;
	FILE *f;
	long node;
	int ret = -1;

	for (i = 0; i < cfg->n_ports && ret < 0; i++) {
		if (cfg->ports[i].pci == NULL)
			continue;
		pa_port_pci_name(cfg->ports[i].pci, name, sizeof(name));
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node",
			name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%ld", &node) == 1 && node >= 0 && node < INT_MAX)
			ret = (int)node;
		fclose(f);
	}
	return ret;
}

/* CPUs this process may run on, those of the ports' NUMA node first. */
static unsigned int
allowed_cpus(const struct pa_config *cfg, unsigned int *cpus, unsigned int max)
{
	int nodes[PA_PLAN_MAX_CPUS];
	cpu_set_t set;
	unsigned int c, n = 0;
	int node;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	max = RTE_MIN(max, (unsigned int)PA_PLAN_MAX_CPUS);
	for (c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (numa_available() < 0)
		return n;
	node = ports_numa_node(cfg);
	if (node < 0)
		node = numa_node_of_cpu((int)cpus[0]);
	for (c = 0; c < n; c++)
		nodes[c] = numa_node_of_cpu((int)cpus[c]);
	pa_plan_order_cpus(cpus, nodes, n, node);
	return n;
}

/*
 * EAL arguments: the user's, plus in replay mode what a lab run needs, plus
 * an lcore map when the user gave none.
 */
static int
build_eal_args(int eal_argc, char **eal_argv, const struct options *o,
		const struct pa_config *cfg, char **out, int *out_argc,
		char *lcores_buf, size_t lcores_len, char *err, size_t err_len)
{
	static const char *const lcore_opts[] = { "-l", "-c", "--lcores", NULL };
	static const char *const huge_opts[] = { "--no-huge", NULL };
	static const char *const shconf_opts[] = { "--no-shconf",
		"--file-prefix", NULL };
	static const char *const pci_opts[] = { "--no-pci", "-a", "-b",
		"--allow", "--block", NULL };
	static const char *const mem_opts[] = { "-m", "--socket-mem", NULL };
	static const char *const tele_opts[] = { "--no-telemetry",
		"--telemetry", NULL };
	static const char *const log_opts[] = { "--log-level", NULL };
	unsigned int ids[PA_PIPELINE_MAX_LCORES];
	unsigned int cpus[PA_PLAN_MAX_CPUS];
	unsigned int n_ids, n_cpus;
	int i, n = 0;

	for (i = 0; i < eal_argc && n < MAX_EAL_ARGS - 16; i++)
		out[n++] = eal_argv[i];
	if (o->replay_in != NULL) {
		if (!has_arg(eal_argc, eal_argv, huge_opts))
			out[n++] = (char *)"--no-huge";
		if (!has_arg(eal_argc, eal_argv, shconf_opts))
			out[n++] = (char *)"--no-shconf";
		if (!has_arg(eal_argc, eal_argv, pci_opts))
			out[n++] = (char *)"--no-pci";
		if (!has_arg(eal_argc, eal_argv, mem_opts)) {
			out[n++] = (char *)"-m";
			out[n++] = (char *)REPLAY_MEM_MB;
		}
		if (!has_arg(eal_argc, eal_argv, tele_opts))
			out[n++] = (char *)"--no-telemetry";
	}
	/* EAL's start-up chatter is INFO; keep stderr to what matters. */
	if (!has_arg(eal_argc, eal_argv, log_opts))
		out[n++] = (char *)"--log-level=lib.eal:notice";
	if (!has_arg(eal_argc, eal_argv, lcore_opts)) {
		n_ids = pa_plan_wanted_lcores(&cfg->pipeline, ids, RTE_DIM(ids));
		n_cpus = allowed_cpus(cfg, cpus, RTE_DIM(cpus));
		if (n_cpus == 0 || pa_plan_lcores_arg(ids, n_ids, cpus, n_cpus,
				lcores_buf, lcores_len) != 0) {
			snprintf(err, err_len, "cannot map %u lcores onto the CPUs",
				n_ids + 1);
			return -EINVAL;
		}
		out[n++] = (char *)"--lcores";
		out[n++] = lcores_buf;
	}
	out[n] = NULL;
	*out_argc = n;
	return 0;
}

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit_signals++;
	quit_requested = true;
}

/*
 * Live mode: serve dpdk-dumpcap and dpdk-pdump (DPDK secondary processes
 * that copy the packets of a port's queues). They need the shared
 * runtime directory (no --no-shconf) and hugepages: a --no-huge primary
 * cannot be attached to (docs/capture.md). Not being able to serve them
 * is no reason not to run.
 */
static bool
live_capture_init(bool no_shconf)
{
	if (rte_pdump_init() != 0) {
		RTE_LOG(NOTICE, USER1,
			"pktaccel: dpdk-dumpcap cannot attach: %s\n",
			rte_strerror(rte_errno));
		return false;
	}
	if (no_shconf)
		RTE_LOG(NOTICE, USER1,
			"pktaccel: dpdk-dumpcap cannot attach to a --no-shconf or --in-memory daemon (no multi-process support)\n");
	else if (!rte_eal_has_hugepages())
		RTE_LOG(NOTICE, USER1,
			"pktaccel: dpdk-dumpcap cannot attach to a --no-huge daemon (secondary processes need hugepages)\n");
	return true;
}

static int
rpc_shutdown(const json_t *params, json_t **result, struct pa_rpc_error *err)
{
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	quit_requested = true;
	*result = json_true();
	return 0;
}
PA_RPC_REGISTER("shutdown", rpc_shutdown, "stop the daemon cleanly")

#define NEIGH_POLL_MS		10	/* control wait between neighbour polls */

/*
 * The control thread: the JSON-RPC server, the metrics HTTP server and the
 * telemetry mailbox, all waited on at once; whatever it serves reads the
 * tables as the only control-plane thread.
 */
struct ctrl_thread {
	struct pa_rpc_server *server;	/* may be NULL */
	struct pa_metrics_http *http;	/* may be NULL */
	bool telemetry;
	struct pa_metrics_sources src;
	struct pa_neigh *neigh;		/* may be NULL */
	pthread_t tid;
	volatile bool stop;
	bool running;
};

static int
metrics_render(void *arg, char **text, size_t *len)
{
	return pa_metrics_scrape(arg, text, len);
}

static void *
ctrl_thread_main(void *arg)
{
	struct ctrl_thread *t = arg;
	struct pollfd pfd[3];
	int n, timeout, ht;

	while (!t->stop) {
		n = 0;
		if (t->server != NULL)
			pfd[n++] = (struct pollfd){
				.fd = pa_rpc_server_fd(t->server), .events = POLLIN };
		if (t->http != NULL)
			pfd[n++] = (struct pollfd){
				.fd = pa_metrics_http_fd(t->http), .events = POLLIN };
		if (t->telemetry)
			pfd[n++] = (struct pollfd){
				.fd = pa_metrics_telemetry_fd(), .events = POLLIN };
		timeout = t->neigh != NULL ? NEIGH_POLL_MS : CTRL_POLL_MS;
		if (t->http != NULL) {
			ht = pa_metrics_http_timeout_ms(t->http);
			if (ht >= 0 && ht < timeout)
				timeout = ht;
		}
		(void)poll(pfd, (nfds_t)n, timeout);	/* EINTR: go round */
		if (t->neigh != NULL)
			pa_neigh_poll(t->neigh, pa_neigh_now_ms());
		/* the RPC server is polled at least every CTRL_POLL_MS, as
		 * when it had the thread to itself */
		if (t->server != NULL && pa_rpc_server_poll(t->server, 0) < 0)
			break;
		if (t->http != NULL)
			pa_metrics_http_run(t->http);
		if (t->telemetry)
			pa_metrics_telemetry_run();
	}
	return NULL;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
print_summary(json_t *summary)
{
	char *s;

	if (summary == NULL) {
		fprintf(stderr, "pktaccel: cannot build the replay summary\n");
		return;
	}
	s = json_dumps(summary, JSON_COMPACT);
	json_decref(summary);
	if (s != NULL) {
		printf("%s\n", s);
		fflush(stdout);
		free(s);
	}
}

static bool
replay_finished(const struct pa_pipeline *pl, const struct pa_port_set *ps,
		uint64_t expected)
{
	struct pa_lcore_stats sum;
	uint64_t lost = replay_port_losses(ps);

	pa_pipeline_stats_sum(pl, &sum);
	return sum.rx_packets + lost >= expected &&
		sum.tx_packets + pa_stats_total_drops(&sum) == sum.rx_packets;
}

static int
make_replay_devargs(const struct options *o, char *buf, size_t len,
		char *err, size_t err_len)
{
	int w;

	if (strchr(o->replay_in, ',') != NULL ||
	    (o->replay_out != NULL && strchr(o->replay_out, ',') != NULL)) {
		snprintf(err, err_len, "replay file names may not contain ','");
		return -EINVAL;
	}
	if (o->replay_out != NULL)
		w = snprintf(buf, len, REPLAY_DEVICE ",rx_pcap=%s,tx_pcap=%s",
			o->replay_in, o->replay_out);
	else
		w = snprintf(buf, len, REPLAY_DEVICE ",rx_pcap=%s", o->replay_in);
	if (w < 0 || (size_t)w >= len) {
		snprintf(err, err_len, "replay file names too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char err[ERR_LEN] = "";
	char lcores_arg[1024];
	char replay_devargs[PATH_MAX * 2 + 64];
	char *eal_args[MAX_EAL_ARGS];
	int eal_argc = 1, app_start = 1, n_eal, i, ret, status = EXIT_FAILURE;
	struct options opt;
	struct pa_config_opts copts = { .replay_port = REPLAY_PORT };
	struct pa_config *cfg = NULL;
	struct pa_port_set *ports = NULL;
	struct pa_pipeline *pl = NULL;
	struct pa_acl *acl = NULL;
	struct pa_lb *lb = NULL;
	struct pa_neigh *neigh = NULL;
	struct pa_pipeline_opts popts;
	struct ctrl_thread ctrl = { 0 };
	struct replay_input rin = { 0 };
	struct pa_capture *capture = NULL;
	struct sigaction sa;
	bool eal_up = false, replay_done = false, pdump_up = false;
	double t0 = 0;

	rte_openlog_stream(stderr);

	/* From here on a signal means a clean stop, during start-up too. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* EAL options before "--"; without "--" everything is ours. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			eal_argc = i;
			app_start = i + 1;
			break;
		}
	}
	if (i == argc) {
		eal_argc = 1;
		app_start = 1;
	}
	argv[app_start - 1] = argv[0];
	if (parse_options(argc - app_start + 1, argv + app_start - 1, &opt,
			err, sizeof(err)) != 0)
		goto out;
	argv[app_start - 1] = app_start > 1 ? (char *)"--" : argv[0];

	copts.replay = opt.replay_in != NULL;
	copts.profile_dir = opt.drivers_config;
	if (opt.config != NULL)
		cfg = pa_config_load_file(opt.config, &copts, err, sizeof(err));
	else
		cfg = pa_config_load_string("{}", &copts, err, sizeof(err));
	if (cfg == NULL)
		goto out;
	if (opt.replay_in != NULL) {
		if (replay_scan(opt.replay_in, &rin, err, sizeof(err)) != 0)
			goto out;
		if (make_replay_devargs(&opt, replay_devargs,
				sizeof(replay_devargs), err, sizeof(err)) != 0)
			goto out;
		free(cfg->ports[0].devargs);
		cfg->ports[0].devargs = strdup(replay_devargs);
		if (cfg->ports[0].devargs == NULL) {
			snprintf(err, sizeof(err), "out of memory");
			goto out;
		}
	} else if (cfg->n_ports == 0) {
		snprintf(err, sizeof(err),
			"$.ports: no ports configured (required outside --replay)");
		goto out;
	}

	eal_args[0] = argv[0];
	if (build_eal_args(eal_argc, argv, &opt, cfg, eal_args, &n_eal,
			lcores_arg, sizeof(lcores_arg), err, sizeof(err)) != 0)
		goto out;
	ret = rte_eal_init(n_eal, eal_args);
	if (ret < 0) {
		snprintf(err, sizeof(err), "EAL initialization failed: %s",
			rte_strerror(rte_errno));
		goto out;
	}
	eal_up = true;
	rte_openlog_stream(stderr);

	if (pa_pkt_init() != 0) {
		snprintf(err, sizeof(err), "cannot register packet metadata: %s",
			rte_strerror(rte_errno));
		goto out;
	}
	if (opt.replay_in == NULL) {
		static const char *const no_mp[] = { "--no-shconf",
			"--in-memory", NULL };

		pdump_up = live_capture_init(has_arg(n_eal, eal_args, no_mp));
	}
	ports = calloc(1, sizeof(*ports));
	if (ports == NULL) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	if (pa_port_probe(ports, cfg, err, sizeof(err)) != 0)
		goto out;

	/* Dropped packets to pcap files: --replay-drops and capture_start. */
	{
		struct pa_capture_opts co = {
			.dir = opt.capture_dir,
			.ring_size = CAPTURE_RING_SIZE,
			.socket = (int)rte_socket_id(),
			.wait = opt.replay_in != NULL,
			.set_group = cfg->rpc.has_group,
			.gid = cfg->rpc.gid,
		};

		capture = pa_capture_create(&co, err, sizeof(err));
		if (capture == NULL)
			goto out;
	}
	if (opt.replay_in != NULL && opt.replay_drops != NULL &&
	    pa_capture_open_drops(capture, opt.replay_drops, err,
			sizeof(err)) != 0)
		goto out;

	memset(&popts, 0, sizeof(popts));
	popts.cfg = cfg;
	popts.ports = ports;
	popts.replay = opt.replay_in != NULL;
	popts.capture = pa_capture_tap(capture);
	popts.segs_per_pkt = (uint16_t)RTE_MAX(1u, (rin.max_caplen +
		RTE_MBUF_DEFAULT_DATAROOM - 1) / RTE_MBUF_DEFAULT_DATAROOM);
	pl = pa_pipeline_create(&popts, err, sizeof(err));
	if (pl == NULL)
		goto out;
	pa_capture_set_rcu(capture, pa_pipeline_rcu(pl));
	{
		struct pa_acl_opts ao = {
			.rcu = pa_pipeline_rcu(pl),
			.n_lcores = pa_pipeline_lcore_count(pl),
			.socket = pa_pipeline_classify_socket(pl),
			.cfg = cfg,
			.port_index_of = ports->index_of,
		};

		acl = pa_acl_create(&ao, err, sizeof(err));
		if (acl == NULL)
			goto out;
	}
	pa_pipeline_set_acl(pl, acl);
	{
		bool runs_lb[PA_PIPELINE_MAX_LCORES] = { false };
		struct pa_lb_opts lo = {
			.rcu = pa_pipeline_rcu(pl),
			.n_lcores = pa_pipeline_lcore_count(pl),
			.runs_lb = runs_lb,
			.socket = pa_pipeline_classify_socket(pl),
			.cfg = cfg,
			.ports = ports,
		};

		pa_pipeline_lb_lcores(pl, runs_lb);
		lb = pa_lb_create(&lo, err, sizeof(err));
		if (lb == NULL)
			goto out;
	}
	pa_pipeline_set_lb(pl, lb);
	{
		struct pa_neigh_opts no = {
			.cfg = cfg,
			.ports = ports,
			.rcu = pa_pipeline_rcu(pl),
			.lb = lb,
			.replay = opt.replay_in != NULL,
			.capture = popts.capture,
			.socket = pa_pipeline_classify_socket(pl),
		};

		neigh = pa_neigh_create(&no, pa_neigh_now_ms(), err,
			sizeof(err));
		if (neigh == NULL)
			goto out;
	}
	pa_pipeline_set_neigh(pl, neigh);
	pa_neigh_rpc_set(neigh);
	pa_lb_rpc_set(lb, cfg);
	pa_pipeline_rpc_set(pl);
	pa_acl_rpc_set(acl, cfg);
	pa_config_rpc_set_running(cfg);
	pa_config_rpc_set_source(opt.config, &copts);
	pa_capture_rpc_set(capture);

	if (opt.replay_in == NULL || opt.socket_given) {
		struct pa_rpc_server_opts so = {
			.path = opt.socket,
			.max_request = (size_t)cfg->rpc.max_request_bytes,
			.max_conns = cfg->rpc.max_connections,
			.max_depth = cfg->rpc.max_depth,
			.idle_timeout_ms = cfg->rpc.idle_timeout * 1000u,
			.set_group = cfg->rpc.has_group,
			.gid = cfg->rpc.gid,
		};

		ctrl.server = pa_rpc_server_create(&so, err, sizeof(err));
		if (ctrl.server == NULL)
			goto out;
	}
	ctrl.neigh = neigh;
	ctrl.src = (struct pa_metrics_sources){ .pl = pl, .acl = acl, .lb = lb,
		.rpc = ctrl.server };
	if (cfg->metrics.enabled) {
		struct pa_metrics_http_opts mo = {
			.listen = cfg->metrics.listen,
			.render = metrics_render,
			.render_arg = &ctrl.src,
		};

		ctrl.http = pa_metrics_http_create(&mo, err, sizeof(err));
		if (ctrl.http == NULL)
			goto out;
		ctrl.src.http = ctrl.http;
	}
	ret = pa_metrics_telemetry_init();
	if (ret != 0)
		RTE_LOG(WARNING, USER1, "pktaccel: no /pktaccel telemetry commands: %s\n",
			strerror(-ret));
	ctrl.telemetry = ret == 0;

	t0 = now_s();
	if (pa_pipeline_start(pl) != 0) {
		snprintf(err, sizeof(err), "cannot launch the data-path lcores");
		goto out;
	}
	if (ctrl.server != NULL || ctrl.http != NULL) {
		if (ctrl.telemetry)
			pa_metrics_telemetry_serve(&ctrl.src);
		ret = rte_ctrl_thread_create(&ctrl.tid, "pa-ctrl", NULL,
			ctrl_thread_main, &ctrl);
		if (ret != 0) {
			snprintf(err, sizeof(err), "cannot start the control thread: %s",
				strerror(ret));
			goto out;
		}
		ctrl.running = true;
	}

	while (!quit_requested) {
		/* A replay is watched closely (its end, its drops), and so is
		 * a running capture (its ring is drained here); otherwise a
		 * live daemon's main lcore only waits for a signal, and its
		 * naps are its idle CPU cost (200 us naps: ~8% of a CPU). */
		struct timespec nap = { 0, (opt.replay_in != NULL &&
			!replay_done) || pa_capture_active(capture) ?
			200 * 1000 : 10 * 1000 * 1000 };

		if (!ctrl.running)
			pa_neigh_poll(neigh, pa_neigh_now_ms());
		pa_capture_poll(capture);
		/* done: every packet forwarded or dropped, and what the
		 * neighbour subsystem had to answer sent */
		if (opt.replay_in != NULL && !replay_done &&
		    replay_finished(pl, ports, rin.packets) &&
		    pa_neigh_idle(neigh)) {
			pa_capture_poll(capture);
			replay_done = true;
			if (!opt.stay)
				break;
			print_summary(replay_summary(pl, ports, lb, neigh,
				pa_port_mbufs_in_use(ports), now_s() - t0));
		}
		nanosleep(&nap, NULL);
	}
	status = EXIT_SUCCESS;

out:
	/* Nobody drains the capture ring while the lcores stop: they must
	 * not wait for room in it. */
	pa_capture_quiesce(capture);
	if (pl != NULL) {
		if (quit_signals > 1)
			pa_pipeline_abort(pl);
		pa_pipeline_stop(pl);
	}
	pa_capture_poll(capture);
	if (ctrl.running) {
		ctrl.stop = true;
		pthread_join(ctrl.tid, NULL);
	}
	pa_metrics_telemetry_serve(NULL);
	pa_metrics_http_destroy(ctrl.http);
	if (ctrl.server != NULL) {
		pa_rpc_server_flush(ctrl.server, 500);
		pa_rpc_server_destroy(ctrl.server);
	}
	pa_pipeline_rpc_set(NULL);
	pa_neigh_rpc_set(NULL);
	pa_acl_rpc_set(NULL, NULL);
	pa_lb_rpc_set(NULL, NULL);
	pa_config_rpc_set_running(NULL);
	pa_config_rpc_set_source(NULL, NULL);
	pa_capture_rpc_set(NULL);
	/* Before the ports: what is still queued goes back to their pools. */
	pa_capture_destroy(capture);
	if (ports != NULL) {
		json_t *summary = NULL;
		unsigned int in_use;

		if (pl != NULL && opt.replay_in != NULL && status == EXIT_SUCCESS)
			summary = replay_summary(pl, ports, lb, neigh, 0,
				now_s() - t0);
		/* its rings hold mbufs of the ports' pools */
		pa_neigh_destroy(neigh);
		neigh = NULL;
		pa_port_close_all(ports);
		in_use = pa_port_mbufs_in_use(ports);
		if (summary != NULL) {
			json_object_set_new(summary, "mbufs_in_use",
				json_integer(in_use));
			print_summary(summary);
		}
		if (in_use != 0)
			RTE_LOG(WARNING, USER1, "pktaccel: %u mbufs not returned to their pools\n",
				in_use);
	}
	pa_neigh_destroy(neigh);
	pa_pipeline_destroy(pl);
	pa_acl_destroy(acl);
	pa_lb_destroy(lb);
	if (ports != NULL) {
		pa_port_free_pools(ports);
		free(ports);
	}
	pa_config_free(cfg);
	if (pdump_up)
		rte_pdump_uninit();
	if (eal_up)
		rte_eal_cleanup();
	if (status != EXIT_SUCCESS)
		fprintf(stderr, "pktaccel: %s\n", err[0] != '\0' ? err :
			"start-up failed");
	return status;
}
