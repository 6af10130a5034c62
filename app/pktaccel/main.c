/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccel's entry point: the command line, the EAL arguments (an lcore
 * map when the user gave none), EAL, then the appliance object (app.c).
 *
 *   pktaccel [EAL options] -- [options]
 *   pktaccel --replay IN.pcap --replay-out OUT.pcap -c CONF.json
 *   pktaccel --check-config -c CONF.json
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <numa.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_version.h>

#include "app.h"
#include "pa_err.h"

#define DEFAULT_SOCKET		"/run/pktaccel/pktaccel.sock"
#define REPLAY_MEM_MB		"1024"
#define MAX_EAL_ARGS		128

static volatile sig_atomic_t quit_signals;
static volatile sig_atomic_t first_is_term;

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [EAL options] -- [options]\n"
"       %s --replay IN.pcap [--replay-out OUT.pcap] [-c CONF.json] [options]\n"
"       %s --check-config -c CONF.json [--replay IN.pcap]\n"
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
"                           pipeline on port '" PA_APP_REPLAY_PORT "', then exit; no EAL\n"
"                           options needed (--no-huge --no-shconf --no-pci and\n"
"                           the net_pcap device are supplied)\n"
"      --replay-out FILE    where forwarded packets go (default: discarded)\n"
"      --replay-drops FILE  write dropped packets here\n"
"      --stay               after the replay keep serving RPC until SIGTERM or\n"
"                           the 'shutdown' method\n"
"      --capture-dir DIR    where capture_start writes its files (default\n"
"                           " PA_CAPTURE_DEFAULT_DIR ")\n"
"      --check-config       validate the configuration of -c and exit: 0 when\n"
"                           valid, else 1 and the reason naming its JSON path;\n"
"                           starts nothing (no EAL, no device); as a live\n"
"                           configuration (ports required) unless --replay\n"
"                           is given too\n"
"      --withdraw-routes    remove the VIP routes (protocol 201) of the\n"
"                           configuration's announce.table, then exit: the\n"
"                           clean-up after a killed daemon (no EAL)\n"
"      --version            print the version and exit\n"
"  -h, --help               this help\n"
"\n"
"Replay prints a JSON summary as the last line of stdout:\n"
"  {\"rx_packets\":N,\"tx_packets\":N,\"dropped_packets\":N,\"drops\":{...},\"mbufs_in_use\":0}\n"
"SIGINT/SIGTERM stop cleanly (a second SIGINT stops waiting for full queues);\n"
"with \"announce\" SIGTERM drains first (VIPs withdrawn, forwarding kept for\n"
"announce.drain_s seconds), SIGINT stops at once; a second signal ends a drain.\n"
"Without -l/-c/--lcores among the EAL options the daemon maps the lcores its\n"
"configuration needs onto the CPUs it may run on.\n",
		prog, prog, prog);
}

static int
parse_options(int argc, char **argv, struct pa_app_opts *o, char *err,
		size_t err_len)
{
	enum { OPT_REPLAY = 256, OPT_REPLAY_OUT, OPT_REPLAY_DROPS, OPT_STAY,
		OPT_VERSION, OPT_DRIVERS_CONFIG, OPT_CAPTURE_DIR,
		OPT_WITHDRAW_ROUTES, OPT_CHECK_CONFIG };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "rpc-socket", required_argument, NULL, 's' },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "replay-out", required_argument, NULL, OPT_REPLAY_OUT },
		{ "replay-drops", required_argument, NULL, OPT_REPLAY_DROPS },
		{ "stay", no_argument, NULL, OPT_STAY },
		{ "drivers-config", required_argument, NULL, OPT_DRIVERS_CONFIG },
		{ "capture-dir", required_argument, NULL, OPT_CAPTURE_DIR },
		{ "withdraw-routes", no_argument, NULL, OPT_WITHDRAW_ROUTES },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
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
				pa_seterr(err, err_len, "--capture-dir: empty");
				return -EINVAL;
			}
			o->capture_dir = optarg;
			break;
		case OPT_WITHDRAW_ROUTES:
			o->withdraw_routes = true;
			break;
		case OPT_CHECK_CONFIG:
			o->check_config = true;
			break;
		case OPT_VERSION:
			printf("pktaccel %s (DPDK %s)\n", PA_VERSION, rte_version());
			exit(EXIT_SUCCESS);
		case 'h':
			usage(stdout, argv[0]);
			exit(EXIT_SUCCESS);
		case ':':
			pa_seterr(err, err_len, "option %s needs an argument (see --help)",
				argv[optind - 1]);
			return -EINVAL;
		default:
			pa_seterr(err, err_len, "unknown option '%s' (see --help)",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pa_seterr(err, err_len, "unexpected argument '%s' (see --help)",
			argv[optind]);
		return -EINVAL;
	}
	if (o->check_config && o->config == NULL) {
		pa_seterr(err, err_len, "--check-config needs -c FILE");
		return -EINVAL;
	}
	if (o->check_config && o->withdraw_routes) {
		pa_seterr(err, err_len,
			"--check-config and --withdraw-routes exclude each other");
		return -EINVAL;
	}
	if (o->replay_in == NULL &&
	    (o->replay_out != NULL || o->replay_drops != NULL || o->stay)) {
		pa_seterr(err, err_len, "%s needs --replay",
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
build_eal_args(int eal_argc, char **eal_argv, const struct pa_app_opts *o,
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
			pa_seterr(err, err_len, "cannot map %u lcores onto the CPUs",
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

/*
 * --withdraw-routes: what a killed daemon left in announce.table (its
 * routes of protocol PA_ANNOUNCE_RTPROT) removed, without EAL; for the
 * systemd unit's ExecStopPost. Nothing to do without "announce".
 */
static int
withdraw_routes(const struct pa_config *cfg, char *err, size_t err_len)
{
	struct pa_announce_nl nl;
	unsigned int removed = 0;
	int ret;

	if (!cfg->announce.present) {
		printf("pktaccel: no \"announce\" in the configuration: no routes to remove\n");
		return 0;
	}
	ret = pa_announce_nl_open(&nl, PA_ANNOUNCE_NL_TIMEOUT_MS);
	if (ret == 0) {
		ret = pa_announce_nl_flush(&nl, cfg->announce.table,
			PA_ANNOUNCE_RTPROT, &removed);
		pa_announce_nl_close(&nl);
	}
	if (ret != 0) {
		pa_seterr(err, err_len, "cannot remove the routes of table %u: %s",
			cfg->announce.table, strerror(-ret));
		return ret;
	}
	printf("pktaccel: removed %u route(s) of protocol %d from table %u\n",
		removed, PA_ANNOUNCE_RTPROT, cfg->announce.table);
	return 0;
}

static void
on_signal(int sig)
{
	if (quit_signals == 0)
		first_is_term = sig == SIGTERM;
	quit_signals++;
}

int
main(int argc, char **argv)
{
	static const char *const no_mp[] = { "--no-shconf", "--in-memory",
		NULL };
	static struct pa_app app;
	char err[PA_APP_ERR_LEN] = "";
	char lcores_arg[1024];
	char *eal_args[MAX_EAL_ARGS];
	int eal_argc = 1, app_start = 1, n_eal, i;
	struct sigaction sa;
	bool eal_up = false, ok = false;

	rte_openlog_stream(stderr);
	app.signals = &quit_signals;
	app.first_is_term = &first_is_term;

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
	if (parse_options(argc - app_start + 1, argv + app_start - 1,
			&app.opt, err, sizeof(err)) != 0)
		goto out;
	argv[app_start - 1] = app_start > 1 ? (char *)"--" : argv[0];

	if (pa_app_load(&app, err, sizeof(err)) != 0)
		goto out;
	if (app.opt.check_config) {
		printf("pktaccel: %s: configuration valid\n", app.opt.config);
		ok = true;
		goto out;
	}
	if (app.opt.withdraw_routes) {
		ok = withdraw_routes(app.cfg, err, sizeof(err)) == 0;
		goto out;
	}
	eal_args[0] = argv[0];
	if (build_eal_args(eal_argc, argv, &app.opt, app.cfg, eal_args,
			&n_eal, lcores_arg, sizeof(lcores_arg), err,
			sizeof(err)) != 0)
		goto out;
	if (rte_eal_init(n_eal, eal_args) < 0) {
		pa_seterr(err, sizeof(err), "EAL initialization failed: %s",
			rte_strerror(rte_errno));
		goto out;
	}
	eal_up = true;
	rte_openlog_stream(stderr);

	if (pa_app_start(&app, has_arg(n_eal, eal_args, no_mp), err,
			sizeof(err)) != 0)
		goto out;
	pa_app_run(&app);
	ok = true;
out:
	pa_app_stop(&app, ok);
	if (eal_up)
		rte_eal_cleanup();
	if (!ok)
		fprintf(stderr, "pktaccel: %s\n", err[0] != '\0' ? err :
			"start-up failed");
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
