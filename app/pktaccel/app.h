/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_APP_H
#define PA_APP_H

/**
 * @file
 * The appliance object: every subsystem of a running daemon, created in
 * order by pa_app_start() and torn down in reverse by pa_app_stop(), and
 * the RPC contexts the registry hands to the methods (pa_rpc_bind()).
 * main() parses the arguments, loads the configuration, starts EAL and
 * calls these. One per process; the main thread owns it.
 */

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "pa_acl.h"
#include "pa_blocklist.h"
#include "pa_offload.h"
#include "pa_announce.h"
#include "pa_capture.h"
#include "pa_config.h"
#include "pa_excp.h"
#include "pa_health_lb.h"
#include "pa_lb.h"
#include "pa_metrics.h"
#include "pa_neigh.h"
#include "pa_pipeline.h"
#include "pa_port.h"
#include "pa_rpc.h"
#include "pktaccel.h"

#define PA_APP_REPLAY_PORT	"replay0"
#define PA_APP_ERR_LEN		1024

/** The daemon's own options (after "--"). */
struct pa_app_opts {
	const char *config;		/**< -c, or NULL */
	const char *socket;		/**< -s, or the default */
	bool socket_given;
	const char *replay_in;		/**< --replay, or NULL: live mode */
	const char *replay_out;
	const char *replay_drops;
	const char *drivers_config;
	const char *capture_dir;
	bool stay;
	bool withdraw_routes;		/**< --withdraw-routes: clean up, exit */
	bool check_config;		/**< --check-config: validate, exit */
};

/**
 * The control thread: the JSON-RPC server, the metrics HTTP server, the
 * telemetry mailbox and the neighbour timers, all waited on at once
 * (ctrl.c). Whatever it serves reads the tables as the only control-plane
 * thread.
 */
struct pa_app_ctrl {
	struct pa_rpc_server *server;	/**< NULL: no socket (replay) */
	struct pa_metrics_http *http;	/**< NULL: metrics off */
	bool telemetry;
	struct pa_metrics_sources src;
	struct pa_neigh *neigh;
	struct pa_ready *ready;		/**< readiness and routes */
	pthread_t tid;
	volatile bool stop;
	bool running;
};

/** The control thread's body (rte_ctrl_thread_create), @p arg a
 * struct pa_app_ctrl. */
void *pa_app_ctrl_main(void *arg);

struct pa_app {
	struct pa_app_opts opt;
	struct pa_config_opts copts;
	struct pa_config *cfg;
	struct replay_input rin;	/**< replay mode: what the file holds */
	char replay_devargs[PATH_MAX * 2 + 64];

	/* the subsystems, in the order pa_app_start() creates them */
	bool pdump_up;
	struct pa_port_set *ports;
	struct pa_capture *capture;
	struct pa_pipeline *pl;
	struct pa_acl *acl;
	struct pa_blocklist *blocklist;	/**< the source blocklist */
	struct pa_offload *offload;	/**< its rte_flow share per port */
	struct pa_lb *lb;
	struct pa_neigh *neigh;
	struct pa_excp *excp;		/**< NULL: no kernel_if (or replay) */
	struct pa_ready *ready;		/**< readiness, drain, announce */
	struct pa_health_lb *checks;	/**< NULL in replay mode */
	/* contexts of the RPC subsystems that need more than one object */
	struct pa_acl_rpc_ctx acl_rpc;
	struct pa_lb_rpc_ctx lb_rpc;
	struct pa_blocklist_rpc_ctx blocklist_rpc;
	struct pa_config_rpc_ctx config_rpc;
	bool rpc_bound;
	struct pa_app_ctrl ctrl;

	/** Signals received (main's handler counts them): one asks for a
	 * clean stop, a second one stops waiting for full queues. */
	const volatile sig_atomic_t *signals;
	/** The first of them was SIGTERM (drains first, announce.drain_s). */
	const volatile sig_atomic_t *first_is_term;
	volatile bool quit;		/**< the "shutdown" method */
	double t0;			/**< when the lcores were launched */
	bool replay_done;
};

/**
 * Load the configuration the options name (the embedded default "{}"
 * without -c) and, in replay mode, scan the input and point the replay
 * port at it. Before EAL: the EAL arguments depend on the configuration.
 * @return 0, or -errno with a one-line reason in @p err.
 */
int pa_app_load(struct pa_app *app, char *err, size_t err_len);

/**
 * After rte_eal_init(): create the ports, the capture, the pipeline, the
 * ACL, the LB and the neighbour subsystem, bind the RPC contexts, open
 * the RPC socket and the metrics listener, launch the data-path lcores
 * and the control thread. What was created before a failure stays for
 * pa_app_stop().
 * @param no_mp  EAL runs without multi-process support (no dumpcap)
 * @return 0, or -errno with a one-line reason in @p err.
 */
int pa_app_start(struct pa_app *app, bool no_mp, char *err, size_t err_len);

/** The main lcore's loop until a signal or "shutdown" (or the end of a
 * replay without --stay). */
void pa_app_run(struct pa_app *app);

/**
 * Stop and free everything pa_app_start() created, in reverse order;
 * safe after a partial start. In replay mode a successful run prints its
 * summary line here, once every mbuf is back in its pool.
 * @param ok  the run ended as it should (prints the replay summary)
 */
void pa_app_stop(struct pa_app *app, bool ok);

#endif /* PA_APP_H */
