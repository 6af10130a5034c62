/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_METRICS_H
#define PA_METRICS_H

/**
 * @file
 * Observability: the Prometheus exporter (text exposition format 0.0.4
 * over HTTP, served by libmicrohttpd) and the DPDK telemetry commands
 * /pktaccel/... (docs/metrics.md lists every metric and command).
 *
 * Three parts:
 * - A renderer (struct pa_metrics): metric families with HELP and TYPE,
 *   samples with labels, rendered as text with names validated, label
 *   values and help escaped, families sorted by name, samples sorted by
 *   their labels and unique within a family. Pure; any thread that owns it.
 * - A collector (pa_metrics_collect()) filling a renderer from the typed
 *   snapshots that stats_get, pipeline_get, acl_rule_list and
 *   lb_service_list also render (pa_pipeline_snapshot(),
 *   pa_acl_snapshot(), pa_lb_snapshot()), plus the RPC and HTTP
 *   counters. Control thread only.
 * - An HTTP server (struct pa_metrics_http) without threads of its own:
 *   the control thread waits on pa_metrics_http_fd() and calls
 *   pa_metrics_http_run(). And a telemetry mailbox
 *   (pa_metrics_telemetry_*): DPDK's telemetry thread hands each
 *   /pktaccel/... request to the control thread and waits for its answer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* Renderer                                                            */

enum pa_metrics_type {
	PA_METRICS_COUNTER = 0,	/**< only goes up (name ends in _total) */
	PA_METRICS_GAUGE,	/**< a level */
};

/** Most labels of one sample. */
#define PA_METRICS_MAX_LABELS	8

/** A set of metric families being built. Not thread-safe. */
struct pa_metrics;

/** @return an empty set, or NULL (rte_errno = ENOMEM). */
struct pa_metrics *pa_metrics_new(void);

void pa_metrics_free(struct pa_metrics *m);

/**
 * Add one sample. The family @p name is created by its first sample (with
 * @p type and @p help); later samples must give the same type (help is
 * taken from the first). The variable arguments are label name / label
 * value pairs (const char *), ended by NULL; values may hold any bytes
 * (escaped on output; invalid UTF-8 replaced by '?').
 *
 * Labels are kept sorted by name. A sample whose label set equals an
 * earlier sample's in the same family is left out of the rendering (the
 * first is kept; pa_metrics_duplicates() counts them): every series is
 * unique.
 * @return 0, -EINVAL (bad metric or label name, more than
 *         PA_METRICS_MAX_LABELS labels, a label named twice, type
 *         differing from the family's) or -ENOMEM.
 */
int pa_metrics_add_u64(struct pa_metrics *m, enum pa_metrics_type type,
		const char *name, const char *help, uint64_t value, ...)
	__attribute__((sentinel));

/** Same as pa_metrics_add_u64() with a floating-point value (NaN and
 * infinities are written as Prometheus spells them). */
int pa_metrics_add_f64(struct pa_metrics *m, enum pa_metrics_type type,
		const char *name, const char *help, double value, ...)
	__attribute__((sentinel));

/** Same as pa_metrics_add_u64(), labels as arrays of @p n_labels. */
int pa_metrics_add_u64_v(struct pa_metrics *m, enum pa_metrics_type type,
		const char *name, const char *help, uint64_t value,
		unsigned int n_labels, const char *const *label_names,
		const char *const *label_values);

/** Number of samples added so far (duplicates included). */
size_t pa_metrics_count(const struct pa_metrics *m);

/** Samples the last pa_metrics_render() left out as duplicates. */
size_t pa_metrics_duplicates(const struct pa_metrics *m);

/**
 * Render the exposition text: for each family (sorted by name) a
 * "# HELP name text" and a "# TYPE name counter|gauge" line, then its
 * samples sorted by label set, "name{l="v",...} value\n". Sorts @p m in
 * place.
 * @param text  set to a malloc'd NUL-terminated buffer (free() it)
 * @param len   its length without the NUL
 * @return 0 or -ENOMEM.
 */
int pa_metrics_render(struct pa_metrics *m, char **text, size_t *len);

/** True if @p s is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). */
bool pa_metrics_valid_name(const char *s);

/** True if @p s is a valid label name ([a-zA-Z_][a-zA-Z0-9_]*, not
 * starting with "__", which Prometheus reserves). */
bool pa_metrics_valid_label(const char *s);

/* ------------------------------------------------------------------ */
/* Collector                                                           */

struct pa_pipeline;
struct pa_acl;
struct pa_lb;
struct pa_rpc_server;
struct pa_metrics_http;
struct pa_ready;
struct pa_health_lb;

/** Where the collector and the telemetry commands read from; any may be
 * NULL (its metrics are left out). Control thread only. */
struct pa_metrics_sources {
	struct pa_pipeline *pl;
	struct pa_acl *acl;
	struct pa_lb *lb;
	struct pa_rpc_server *rpc;
	struct pa_metrics_http *http;
	struct pa_ready *ready;		/**< readiness, drain, routes */
	struct pa_health_lb *checks;	/**< NULL: no health checks (replay) */
};

/**
 * Add every pktaccel_* metric (docs/metrics.md) of @p src to @p m.
 * @return 0 or -ENOMEM.
 */
int pa_metrics_collect(struct pa_metrics *m,
		const struct pa_metrics_sources *src);

/**
 * pa_metrics_collect() into a new set, rendered.
 * @return 0 or -ENOMEM; @p text as for pa_metrics_render().
 */
int pa_metrics_scrape(const struct pa_metrics_sources *src, char **text,
		size_t *len);

/* ------------------------------------------------------------------ */
/* HTTP server                                                         */

/* Defaults of struct pa_metrics_http_opts. */
#define PA_METRICS_DEFAULT_MAX_CONNS		16u
#define PA_METRICS_DEFAULT_CONN_MEMORY		(32u * 1024)
#define PA_METRICS_DEFAULT_TIMEOUT_S		10u

/**
 * Produce the body of GET /metrics: set @p text to a malloc'd buffer (it is
 * handed to libmicrohttpd, which free()s it) and @p len.
 * @return 0, or -errno (answered 500).
 */
typedef int (*pa_metrics_render_cb)(void *arg, char **text, size_t *len);

/**
 * Produce the body (malloc'd, JSON) and the status of GET /health.
 * @return 0, or -errno (answered 500).
 */
typedef int (*pa_metrics_health_cb)(void *arg, char **text, size_t *len,
		unsigned int *code);

/**
 * Listener and limits; 0 in a field means its default. Limits a client
 * meets (docs/metrics.md, "Limits"): at most max_conns connections at once
 * (more are accepted and closed at once), conn_memory bytes per connection
 * for the request line, headers and buffers (a longer header block gets
 * 431 and the connection is closed), timeout_s seconds without a byte
 * moving before a connection is closed.
 */
struct pa_metrics_http_opts {
	const char *listen;		/**< "IPV4:PORT" or "[IPV6]:PORT" */
	unsigned int max_conns;
	size_t conn_memory;
	unsigned int timeout_s;
	pa_metrics_render_cb render;
	void *render_arg;
	/** GET /health (NULL: 404) */
	pa_metrics_health_cb health;
	void *health_arg;
};

/** Responses counted by status (pa_metrics_http_counters()). */
struct pa_metrics_http_counters {
	uint64_t ok;			/**< 200: /metrics, /health and / */
	uint64_t unavailable;		/**< 503: /health, not ready or draining */
	uint64_t not_found;		/**< 404: any other path */
	uint64_t bad_method;		/**< 405: not GET or HEAD */
	uint64_t failed;		/**< 500: rendering failed */
};

/**
 * Parse a listen address "A.B.C.D:PORT" or "[IPV6]:PORT" (PORT 1..65535)
 * into @p addr (at least sizeof(struct sockaddr_in6) bytes).
 * @return 0 and the address length in @p addr_len, or -EINVAL.
 */
int pa_metrics_parse_listen(const char *s, void *addr, unsigned int *addr_len);

/**
 * Bind and listen on o->listen and start a libmicrohttpd daemon in
 * external-epoll mode (no thread of its own).
 * @return the server, or NULL with the reason in @p err (e.g. "cannot
 *         listen on 127.0.0.1:9469: Address already in use").
 */
struct pa_metrics_http *pa_metrics_http_create(
		const struct pa_metrics_http_opts *o, char *err, size_t err_len);

/** File descriptor to wait on for reading (libmicrohttpd's epoll fd). */
int pa_metrics_http_fd(const struct pa_metrics_http *h);

/** Milliseconds until pa_metrics_http_run() is due even without activity
 * (a connection timeout), or -1 when nothing is pending. */
int pa_metrics_http_timeout_ms(const struct pa_metrics_http *h);

/** Serve what is ready without waiting. Same thread as create. */
void pa_metrics_http_run(struct pa_metrics_http *h);

/** Copy the response counters. */
void pa_metrics_http_counters(const struct pa_metrics_http *h,
		struct pa_metrics_http_counters *c);

/** Close every connection and the listener. NULL is ignored. */
void pa_metrics_http_destroy(struct pa_metrics_http *h);

/* ------------------------------------------------------------------ */
/* DPDK telemetry                                                      */

/**
 * Register the /pktaccel/... telemetry commands (once per process; later
 * calls do nothing) and open the mailbox through which DPDK's telemetry
 * thread hands them to the control thread.
 * @return 0 or -errno.
 */
int pa_metrics_telemetry_init(void);

/** File descriptor (an eventfd) readable when a telemetry request waits. */
int pa_metrics_telemetry_fd(void);

/**
 * Start (@p src not NULL) or stop (NULL) answering. While stopped, the
 * commands answer at once with an error (telemetry prints null). @p src is
 * copied. Control thread.
 */
void pa_metrics_telemetry_serve(const struct pa_metrics_sources *src);

/** Answer the waiting request, if any. Control thread. */
void pa_metrics_telemetry_run(void);

/** Milliseconds a telemetry request waits for the control thread. */
#define PA_METRICS_TELEMETRY_WAIT_MS	2000

/** Log type "pa.metrics". */
extern int pa_metrics_logtype;

#endif /* PA_METRICS_H */
