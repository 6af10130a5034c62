/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The appliance object: the subsystems of a running daemon created in
 * order (ports, capture, pipeline, ACL, LB, neighbours, RPC bindings,
 * control thread) and torn down in reverse, and the main lcore's loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>

#include "app.h"
#include "pa_clock.h"
#include "pa_err.h"
#include "pa_pkt.h"

#define REPLAY_DEVICE		"net_pcap_" PA_APP_REPLAY_PORT
#define CAPTURE_RING_SIZE	1024

static int
rpc_shutdown(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_app *app = ctx;

	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	app->quit = true;
	*result = json_true();
	return 0;
}
PA_RPC_SUBSYSTEM(app, "app", "daemon not running");
PA_RPC_METHOD_SCHEMA(app, "shutdown", rpc_shutdown, "stop the daemon cleanly",
	.result_json = "{\"const\": true}")

static int
make_replay_devargs(struct pa_app *app, char *err, size_t err_len)
{
	const struct pa_app_opts *o = &app->opt;
	char *buf = app->replay_devargs;
	size_t len = sizeof(app->replay_devargs);
	int w;

	if (strchr(o->replay_in, ',') != NULL ||
	    (o->replay_out != NULL && strchr(o->replay_out, ',') != NULL)) {
		pa_seterr(err, err_len, "replay file names may not contain ','");
		return -EINVAL;
	}
	if (o->replay_out != NULL)
		w = snprintf(buf, len, REPLAY_DEVICE ",rx_pcap=%s,tx_pcap=%s",
			o->replay_in, o->replay_out);
	else
		w = snprintf(buf, len, REPLAY_DEVICE ",rx_pcap=%s", o->replay_in);
	if (w < 0 || (size_t)w >= len) {
		pa_seterr(err, err_len, "replay file names too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

int
pa_app_load(struct pa_app *app, char *err, size_t err_len)
{
	int ret;

	app->copts.replay_port = PA_APP_REPLAY_PORT;
	app->copts.replay = app->opt.replay_in != NULL;
	app->copts.profile_dir = app->opt.drivers_config;
	if (app->opt.config != NULL)
		app->cfg = pa_config_load_file(app->opt.config, &app->copts,
			err, err_len);
	else
		app->cfg = pa_config_load_string("{}", &app->copts, err,
			err_len);
	if (app->cfg == NULL)
		return -EINVAL;
	if (app->opt.replay_in == NULL) {
		if (app->cfg->n_ports == 0) {
			pa_seterr(err, err_len,
				"$.ports: no ports configured (required outside --replay)");
			return -EINVAL;
		}
		return 0;
	}
	/* --check-config checks the document, not the capture it would read */
	if (app->opt.check_config)
		return 0;
	ret = replay_scan(app->opt.replay_in, &app->rin, err, err_len);
	if (ret != 0)
		return ret;
	ret = make_replay_devargs(app, err, err_len);
	if (ret != 0)
		return ret;
	free(app->cfg->ports[0].devargs);
	app->cfg->ports[0].devargs = strdup(app->replay_devargs);
	if (app->cfg->ports[0].devargs == NULL) {
		pa_seterr(err, err_len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/*
 * Live mode: serve dpdk-dumpcap and dpdk-pdump (DPDK secondary processes
 * that copy the packets of a port's queues). They need the shared
 * runtime directory (no --no-shconf) and hugepages: a --no-huge primary
 * cannot be attached to (docs/capture.md). Not being able to serve them
 * is no reason not to run.
 */
static bool
live_capture_init(bool no_mp)
{
	if (rte_pdump_init() != 0) {
		RTE_LOG(NOTICE, USER1,
			"pktaccel: dpdk-dumpcap cannot attach: %s\n",
			rte_strerror(rte_errno));
		return false;
	}
	if (no_mp)
		RTE_LOG(NOTICE, USER1,
			"pktaccel: dpdk-dumpcap cannot attach to a --no-shconf or --in-memory daemon (no multi-process support)\n");
	else if (!rte_eal_has_hugepages())
		RTE_LOG(NOTICE, USER1,
			"pktaccel: dpdk-dumpcap cannot attach to a --no-huge daemon (secondary processes need hugepages)\n");
	return true;
}

static int
start_ports(struct pa_app *app, char *err, size_t err_len)
{
	app->ports = calloc(1, sizeof(*app->ports));
	if (app->ports == NULL) {
		pa_seterr(err, err_len, "out of memory");
		return -ENOMEM;
	}
	return pa_port_probe(app->ports, app->cfg, err, err_len);
}

/* Dropped packets to pcap files: --replay-drops and capture_start. */
static int
start_capture(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_capture_opts co = {
		.dir = app->opt.capture_dir,
		.ring_size = CAPTURE_RING_SIZE,
		.socket = (int)rte_socket_id(),
		.wait = app->opt.replay_in != NULL,
		.set_group = app->cfg->rpc.has_group,
		.gid = app->cfg->rpc.gid,
	};

	app->capture = pa_capture_create(&co, err, err_len);
	if (app->capture == NULL)
		return -EINVAL;
	if (app->opt.replay_in != NULL && app->opt.replay_drops != NULL)
		return pa_capture_open_drops(app->capture,
			app->opt.replay_drops, err, err_len);
	return 0;
}

static int
start_pipeline(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_pipeline_opts popts = {
		.cfg = app->cfg,
		.ports = app->ports,
		.replay = app->opt.replay_in != NULL,
		.capture = pa_capture_tap(app->capture),
		.segs_per_pkt = (uint16_t)RTE_MAX(1u, (app->rin.max_caplen +
			RTE_MBUF_DEFAULT_DATAROOM - 1) /
			RTE_MBUF_DEFAULT_DATAROOM),
	};

	app->pl = pa_pipeline_create(&popts, err, err_len);
	if (app->pl == NULL)
		return -EINVAL;
	pa_capture_set_rcu(app->capture, pa_pipeline_rcu(app->pl));
	return 0;
}

static int
start_acl(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_acl_opts ao = {
		.rcu = pa_pipeline_rcu(app->pl),
		.n_lcores = pa_pipeline_lcore_count(app->pl),
		.socket = pa_pipeline_classify_socket(app->pl),
		.cfg = app->cfg,
		.port_index_of = app->ports->index_of,
	};

	app->acl = pa_acl_create(&ao, err, err_len);
	if (app->acl == NULL)
		return -EINVAL;
	pa_pipeline_set_acl(app->pl, app->acl);
	return 0;
}

/* The source blocklist, and protect.blocklist loaded into it: a bad file
 * stops the start with its JSON path and line. */
static int
start_blocklist(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_blocklist_opts bo = {
		.rcu = pa_pipeline_rcu(app->pl),
		.n_lcores = pa_pipeline_lcore_count(app->pl),
	};
	const char *path = app->cfg->protect.blocklist;
	char why[512];
	int ret;

	app->blocklist = pa_blocklist_create(&bo);
	if (app->blocklist == NULL) {
		pa_seterr(err, err_len, "cannot create the blocklist: %s",
			strerror(errno));
		return -ENOMEM;
	}
	pa_pipeline_set_blocklist(app->pl, app->blocklist);
	if (path == NULL)
		return 0;
	ret = pa_blocklist_replace_file(app->blocklist, path, why,
		sizeof(why));
	if (ret != 0) {
		pa_seterr(err, err_len, "$.protect.blocklist: %s", why);
		return ret;
	}
	return 0;
}

/* Probe each port's rte_flow for dropping by source prefix; where it
 * can, the blocklist's prefixes (up to a bound) go to the NIC too. */
static int
start_offload(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_offload_opts oo = { .n_ports = app->ports->n };
	unsigned int i;

	for (i = 0; i < app->ports->n && i < PA_OFFLOAD_MAX_PORTS; i++) {
		oo.port_id[i] = app->ports->port[i].port_id;
		oo.name[i] = app->ports->port[i].name;
	}
	app->offload = pa_offload_create(&oo);
	if (app->offload == NULL) {
		pa_seterr(err, err_len, "cannot probe the ports' rte_flow: %s",
			strerror(errno));
		return -ENOMEM;
	}
	pa_pipeline_set_offload(app->pl, app->offload);
	pa_blocklist_set_offload(app->blocklist, app->offload);
	if (app->acl != NULL) {
		struct pa_acl_hook h = { .pre = pa_offload_acl_pre,
			.post = pa_offload_acl_post, .arg = app->offload };

		pa_acl_set_hook(app->acl, &h);
	}
	return 0;
}

static int
start_lb(struct pa_app *app, char *err, size_t err_len)
{
	bool runs_lb[PA_PIPELINE_MAX_LCORES] = { false };
	struct pa_lb_opts lo = {
		.rcu = pa_pipeline_rcu(app->pl),
		.n_lcores = pa_pipeline_lcore_count(app->pl),
		.runs_lb = runs_lb,
		.socket = pa_pipeline_classify_socket(app->pl),
		.cfg = app->cfg,
		.ports = app->ports,
	};

	pa_pipeline_lb_lcores(app->pl, runs_lb);
	app->lb = pa_lb_create(&lo, err, err_len);
	if (app->lb == NULL)
		return -EINVAL;
	pa_pipeline_set_lb(app->pl, app->lb);
	return 0;
}

static int
start_neigh(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_neigh_opts no = {
		.cfg = app->cfg,
		.ports = app->ports,
		.rcu = pa_pipeline_rcu(app->pl),
		.lb = app->lb,
		.replay = app->opt.replay_in != NULL,
		.capture = pa_capture_tap(app->capture),
		.socket = pa_pipeline_classify_socket(app->pl),
	};

	app->neigh = pa_neigh_create(&no, pa_neigh_now_ms(), err, err_len);
	if (app->neigh == NULL)
		return -EINVAL;
	pa_pipeline_set_neigh(app->pl, app->neigh);
	return 0;
}

/* The exception path (kernel_if TAPs), live mode only: a replay port
 * passes everything through. */
static int
start_excp(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_excp_opts xo = {
		.cfg = app->cfg,
		.ports = app->ports,
		.neigh = app->neigh,
		.n_lcores = pa_pipeline_lcore_count(app->pl),
		.n_rx_lcores = pa_pipeline_rx_lcore_count(app->pl),
		.socket = pa_pipeline_classify_socket(app->pl),
	};

	if (app->opt.replay_in != NULL || pa_excp_count(app->cfg) == 0)
		return 0;
	app->excp = pa_excp_create(&xo, err, err_len);
	if (app->excp == NULL)
		return -EINVAL;
	pa_pipeline_set_excp(app->pl, app->excp);
	return 0;
}

/* The backends' health checks, live mode only: a replay's outcome depends
 * on its packets alone (every backend's health stays "unknown"). */
static int
start_checks(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_health_lb_opts ho = { .lb = app->lb, .cfg = app->cfg };

	if (app->opt.replay_in != NULL)
		return 0;
	app->checks = pa_health_lb_create(&ho, err, err_len);
	return app->checks == NULL ? -EINVAL : 0;
}

/* Readiness, drain and (live mode, "announce") the VIP routes: stale
 * routes of a killed daemon are removed here. */
static int
start_ready(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_ready_opts ho = {
		.cfg = app->cfg,
		.ports = app->ports,
		.pl = app->pl,
		.lb = app->lb,
		.tables_loaded = app->acl != NULL && app->lb != NULL,
		.announce = app->opt.replay_in == NULL,
	};

	app->ready = pa_ready_create(&ho, err, err_len);
	return app->ready == NULL ? -EINVAL : 0;
}

/* The RPC subsystems and the context the registry hands their methods. */
static void
bind_rpc(struct pa_app *app, bool bind)
{
	app->acl_rpc = (struct pa_acl_rpc_ctx){ app->acl, app->cfg };
	app->lb_rpc = (struct pa_lb_rpc_ctx){ app->lb, app->cfg };
	app->blocklist_rpc = (struct pa_blocklist_rpc_ctx){ app->blocklist };
	app->config_rpc = (struct pa_config_rpc_ctx){
		.running = app->cfg,
		.path = app->opt.config,
		.opts = app->copts,
	};
	pa_rpc_bind("app", bind ? app : NULL);
	pa_rpc_bind("config", bind ? &app->config_rpc : NULL);
	pa_rpc_bind("pipeline", bind ? app->pl : NULL);
	pa_rpc_bind("acl", bind ? &app->acl_rpc : NULL);
	pa_rpc_bind("lb", bind ? &app->lb_rpc : NULL);
	pa_rpc_bind("blocklist", bind ? &app->blocklist_rpc : NULL);
	pa_rpc_bind("neigh", bind ? app->neigh : NULL);
	pa_rpc_bind("capture", bind ? app->capture : NULL);
	pa_rpc_bind("health", bind ? app->ready : NULL);
	pa_rpc_bind("lb_health", bind ? app->checks : NULL);
	app->rpc_bound = bind;
}

static int
metrics_render(void *arg, char **text, size_t *len)
{
	return pa_metrics_scrape(arg, text, len);
}

static int
health_render(void *arg, char **text, size_t *len, unsigned int *code)
{
	return pa_ready_http(arg, text, len, code);
}

/* The RPC socket (live mode, or a replay given -s) and the metrics
 * listener, served by the control thread. */
static int
start_servers(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_app_ctrl *ctrl = &app->ctrl;
	const struct pa_config *cfg = app->cfg;
	int ret;

	if (app->opt.replay_in == NULL || app->opt.socket_given) {
		struct pa_rpc_server_opts so = {
			.path = app->opt.socket,
			.max_request = (size_t)cfg->rpc.max_request_bytes,
			.max_conns = cfg->rpc.max_connections,
			.max_depth = cfg->rpc.max_depth,
			.idle_timeout_ms = cfg->rpc.idle_timeout * 1000u,
			.set_group = cfg->rpc.has_group,
			.gid = cfg->rpc.gid,
		};

		ctrl->server = pa_rpc_server_create(&so, err, err_len);
		if (ctrl->server == NULL)
			return -EINVAL;
	}
	ctrl->neigh = app->neigh;
	ctrl->ready = app->ready;
	ctrl->src = (struct pa_metrics_sources){ .pl = app->pl,
		.acl = app->acl, .lb = app->lb, .rpc = ctrl->server,
		.ready = app->ready, .checks = app->checks };
	if (cfg->metrics.enabled) {
		struct pa_metrics_http_opts mo = {
			.listen = cfg->metrics.listen,
			.render = metrics_render,
			.render_arg = &ctrl->src,
			.health = health_render,
			.health_arg = app->ready,
		};

		ctrl->http = pa_metrics_http_create(&mo, err, err_len);
		if (ctrl->http == NULL)
			return -EINVAL;
		ctrl->src.http = ctrl->http;
	}
	ret = pa_metrics_telemetry_init();
	if (ret != 0)
		RTE_LOG(WARNING, USER1, "pktaccel: no /pktaccel telemetry commands: %s\n",
			strerror(-ret));
	ctrl->telemetry = ret == 0;
	return 0;
}

/* Launch the data-path lcores, then the control thread. */
static int
start_threads(struct pa_app *app, char *err, size_t err_len)
{
	struct pa_app_ctrl *ctrl = &app->ctrl;
	int ret;

	app->t0 = pa_clock_s();
	if (pa_pipeline_start(app->pl) != 0) {
		pa_seterr(err, err_len, "cannot launch the data-path lcores");
		return -EINVAL;
	}
	pa_ready_set_started(app->ready);
	ret = pa_excp_start(app->excp, err, err_len);
	if (ret != 0)
		return ret;
	ret = pa_health_lb_start(app->checks, err, err_len);
	if (ret != 0)
		return ret;
	if (ctrl->server == NULL && ctrl->http == NULL)
		return 0;
	if (ctrl->telemetry)
		pa_metrics_telemetry_serve(&ctrl->src);
	ret = rte_ctrl_thread_create(&ctrl->tid, "pa-ctrl", NULL,
		pa_app_ctrl_main, ctrl);
	if (ret != 0) {
		pa_seterr(err, err_len, "cannot start the control thread: %s",
			strerror(ret));
		return -ret;
	}
	ctrl->running = true;
	return 0;
}

int
pa_app_start(struct pa_app *app, bool no_mp, char *err, size_t err_len)
{
	static int (*const steps[])(struct pa_app *, char *, size_t) = {
		start_ports, start_capture, start_pipeline, start_acl,
		start_blocklist, start_offload, start_lb, start_neigh, start_excp, start_checks, start_ready,
	};
	unsigned int i;
	int ret;

	if (pa_pkt_init() != 0) {
		pa_seterr(err, err_len, "cannot register packet metadata: %s",
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	if (app->opt.replay_in == NULL)
		app->pdump_up = live_capture_init(no_mp);
	for (i = 0; i < RTE_DIM(steps); i++) {
		ret = steps[i](app, err, err_len);
		if (ret != 0)
			return ret;
	}
	bind_rpc(app, true);
	ret = start_servers(app, err, err_len);
	if (ret != 0)
		return ret;
	return start_threads(app, err, err_len);
}

static bool
same_terminal(int a, int b)
{
	struct stat sa, sb;

	return isatty(a) && isatty(b) && fstat(a, &sa) == 0 &&
		fstat(b, &sb) == 0 && sa.st_rdev == sb.st_rdev;
}

static void
print_summary(json_t *summary)
{
	char *s;

	if (summary == NULL) {
		fprintf(stderr, "pktaccel: cannot build the replay summary\n");
		return;
	}
	/* for people: on stderr, and on stdout too when that is a terminal
	 * other than stderr's; the JSON line stays stdout's last */
	replay_summary_table(stderr, summary);
	if (isatty(STDOUT_FILENO) && !same_terminal(STDOUT_FILENO,
			STDERR_FILENO))
		replay_summary_table(stdout, summary);
	s = json_dumps(summary, JSON_COMPACT);
	json_decref(summary);
	if (s != NULL) {
		printf("%s\n", s);
		fflush(stdout);
		free(s);
	}
}

static bool
replay_finished(const struct pa_app *app)
{
	struct pa_lcore_stats sum;
	uint64_t lost = replay_port_losses(app->ports);

	pa_pipeline_stats_sum(app->pl, &sum);
	/* every packet forwarded or dropped, and the ICMP errors made of
	 * them out of the rings before the ports close */
	return sum.rx_packets + lost >= app->rin.packets &&
		sum.tx_packets + pa_stats_total_drops(&sum) == sum.rx_packets &&
		pa_pipeline_rings_empty(app->pl);
}

/*
 * A signal arrived: stop now (false) or drain first (true while the
 * drain lasts). SIGTERM with "announce" drains: the VIPs are withdrawn
 * and the data path keeps forwarding for announce.drain_s seconds (the
 * routers move the flows away meanwhile). SIGINT, a second signal, or no
 * drain_s: stop now (the stop withdraws first anyway).
 */
static bool
draining_on_signal(struct pa_app *app, double *drain_t0)
{
	uint32_t drain_s = app->cfg->announce.drain_s;

	if (*app->signals > 1 || !*app->first_is_term ||
	    !app->cfg->announce.present || drain_s == 0 ||
	    app->opt.replay_in != NULL || app->ready == NULL)
		return false;
	if (*drain_t0 == 0) {
		*drain_t0 = pa_clock_s();
		pa_ready_request_drain(app->ready);
		RTE_LOG(NOTICE, USER1,
			"pktaccel: SIGTERM: VIPs withdrawn, forwarding for %u s before stopping (a second signal stops now)\n",
			drain_s);
	}
	return pa_clock_s() - *drain_t0 < (double)drain_s;
}

void
pa_app_run(struct pa_app *app)
{
	bool replay = app->opt.replay_in != NULL;
	double drain_t0 = 0;

	while (!app->quit &&
	       (*app->signals == 0 || draining_on_signal(app, &drain_t0))) {
		/* A replay is watched closely (its end, its drops), and so is
		 * a running capture (its ring is drained here); otherwise a
		 * live daemon's main lcore only waits for a signal, and its
		 * naps are its idle CPU cost (200 us naps: ~8% of a CPU). */
		struct timespec nap = { 0, (replay && !app->replay_done) ||
			pa_capture_active(app->capture) ?
			200 * 1000 : 10 * 1000 * 1000 };

		if (!app->ctrl.running)
			pa_neigh_poll(app->neigh, pa_neigh_now_ms());
		else
			(void)pa_ready_backstop(app->ready,
				(uint64_t)pa_clock_ms(), false);
		pa_capture_poll(app->capture);
		/* done: every packet forwarded or dropped, and what the
		 * neighbour subsystem had to answer sent */
		if (replay && !app->replay_done && replay_finished(app) &&
		    pa_neigh_idle(app->neigh)) {
			pa_capture_poll(app->capture);
			app->replay_done = true;
			if (!app->opt.stay)
				break;
			print_summary(replay_summary(app->pl, app->ports,
				app->lb, app->neigh,
				pa_port_mbufs_in_use(app->ports),
				pa_clock_s() - app->t0));
		}
		nanosleep(&nap, NULL);
	}
}

static void
stop_ctrl(struct pa_app_ctrl *ctrl)
{
	if (ctrl->running) {
		ctrl->stop = true;
		pthread_join(ctrl->tid, NULL);
		ctrl->running = false;
	}
	pa_metrics_telemetry_serve(NULL);
	pa_metrics_http_destroy(ctrl->http);
	ctrl->http = NULL;
	if (ctrl->server != NULL) {
		pa_rpc_server_flush(ctrl->server, 500);
		pa_rpc_server_destroy(ctrl->server);
		ctrl->server = NULL;
	}
}

/* Close the ports (every mbuf back in its pool), printing the replay
 * summary of a good run with the pools' final count. */
static void
stop_ports(struct pa_app *app, bool ok)
{
	json_t *summary = NULL;
	unsigned int in_use;

	if (app->ports == NULL)
		return;
	if (app->pl != NULL && app->opt.replay_in != NULL && ok)
		summary = replay_summary(app->pl, app->ports, app->lb,
			app->neigh, 0, pa_clock_s() - app->t0);
	/* its rings hold mbufs of the ports' pools */
	pa_neigh_destroy(app->neigh);
	app->neigh = NULL;
	pa_port_close_all(app->ports);
	in_use = pa_port_mbufs_in_use(app->ports);
	if (summary != NULL) {
		json_object_set_new(summary, "mbufs_in_use",
			json_integer(in_use));
		print_summary(summary);
	}
	if (in_use != 0)
		RTE_LOG(WARNING, USER1, "pktaccel: %u mbufs not returned to their pools\n",
			in_use);
}

/* Withdraw the VIPs before anything stops: the control thread does it
 * at its next poll (bounded), and pa_ready_destroy() is the backstop. */
static void
stop_announcing(struct pa_app *app)
{
	double t0 = pa_clock_s();
	struct timespec nap = { 0, 1000 * 1000 };

	pa_ready_set_stopping(app->ready);
	while (app->ctrl.running && pa_ready_routes(app->ready) != 0 &&
	       pa_clock_s() - t0 < 0.5)
		nanosleep(&nap, NULL);
	/* the control thread could not (blocked behind a stalled lcore) */
	if (app->ctrl.running && pa_ready_routes(app->ready) != 0)
		(void)pa_ready_backstop(app->ready, (uint64_t)pa_clock_ms(),
			true);
}

void
pa_app_stop(struct pa_app *app, bool ok)
{
	stop_announcing(app);
	/* Nobody drains the capture ring while the lcores stop: they must
	 * not wait for room in it. */
	pa_capture_quiesce(app->capture);
	if (app->pl != NULL) {
		if (*app->signals > 1)
			pa_pipeline_abort(app->pl);
		pa_pipeline_stop(app->pl);
	}
	pa_capture_poll(app->capture);
	/* after the lcores: a table it publishes meanwhile waits for their
	 * quiescence, which a stalled lcore gives only once stopped */
	pa_health_lb_stop(app->checks);
	/* the TAPs' traffic: nothing leaves once the lcores have stopped */
	pa_excp_stop(app->excp);
	stop_ctrl(&app->ctrl);
	if (app->rpc_bound)
		bind_rpc(app, false);
	pa_ready_destroy(app->ready);
	app->ready = NULL;
	/* after the control thread that read its counters */
	pa_health_lb_destroy(app->checks);
	app->checks = NULL;
	/* Before the ports: what is still queued goes back to their pools. */
	pa_capture_destroy(app->capture);
	app->capture = NULL;
	pa_excp_close(app->excp);
	/* the NIC's rules, while their ports still exist */
	if (app->blocklist != NULL) {
		/* its merges publish through the pipeline's RCU, freed below */
		pa_blocklist_stop_merger(app->blocklist);
		pa_blocklist_set_offload(app->blocklist, NULL);
	}
	/* the ACL's folds publish through the pipeline's RCU too */
	pa_acl_stop_folder(app->acl);
	if (app->acl != NULL && app->offload != NULL)
		pa_acl_set_hook(app->acl, NULL);
	if (app->pl != NULL)
		pa_pipeline_set_offload(app->pl, NULL);
	pa_offload_destroy(app->offload);
	app->offload = NULL;
	stop_ports(app, ok);
	/* its pool: after lib/neigh's TX rings and the ports' TX queues,
	 * which may hold its mbufs, are gone */
	pa_excp_destroy(app->excp);
	app->excp = NULL;
	pa_neigh_destroy(app->neigh);
	app->neigh = NULL;
	pa_pipeline_destroy(app->pl);
	app->pl = NULL;
	pa_acl_destroy(app->acl);
	app->acl = NULL;
	pa_blocklist_destroy(app->blocklist);
	app->blocklist = NULL;
	/* the process ends next (main): its flow tables go with the EAL */
	pa_lb_destroy_at_exit(app->lb);
	app->lb = NULL;
	if (app->ports != NULL) {
		pa_port_free_pools(app->ports);
		free(app->ports);
		app->ports = NULL;
	}
	pa_config_free(app->cfg);
	app->cfg = NULL;
	if (app->pdump_up)
		rte_pdump_uninit();
	app->pdump_up = false;
}
