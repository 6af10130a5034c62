/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /metrics endpoint: libmicrohttpd in external-epoll mode, driven by
 * the control thread (no thread of its own), over a listening socket we
 * open ourselves so that a bind failure has a plain reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include <rte_log.h>

#include "pa_err.h"
#include "pa_metrics.h"

#define LISTEN_BACKLOG		64
#define CONTENT_TYPE		"text/plain; version=0.0.4; charset=utf-8"

struct pa_metrics_http {
	struct MHD_Daemon *d;
	pa_metrics_render_cb render;
	void *render_arg;
	pa_metrics_health_cb health;
	void *health_arg;
	struct pa_metrics_http_counters cnt;
};

static const char index_page[] =
	"pktaccel: Prometheus metrics at /metrics\n";
static const char not_found_page[] = "not found (try /metrics)\n";
static const char bad_method_page[] = "method not allowed (GET or HEAD)\n";
static const char failed_page[] = "cannot render the metrics\n";

int
pa_metrics_parse_listen(const char *s, void *addr, unsigned int *addr_len)
{
	struct sockaddr_in6 *a6 = addr;
	struct sockaddr_in *a4 = addr;
	char host[INET6_ADDRSTRLEN];
	const char *h, *colon, *end;
	unsigned long port;
	char *endp;
	size_t hl;

	if (s == NULL || addr == NULL || addr_len == NULL)
		return -EINVAL;
	if (s[0] == '[') {
		h = s + 1;
		end = strchr(h, ']');
		if (end == NULL || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		h = s;
		colon = strrchr(s, ':');
		if (colon == NULL || memchr(s, ':', (size_t)(colon - s)) != NULL)
			return -EINVAL;
		end = colon;
	}
	hl = (size_t)(end - h);
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	/* digits only: strtoul would take a sign or blanks */
	if (colon[1] < '0' || colon[1] > '9' || strlen(colon + 1) > 5)
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &endp, 10);
	if (errno != 0 || *endp != '\0' || port == 0 || port > 65535)
		return -EINVAL;
	if (s[0] == '[') {
		memset(a6, 0, sizeof(*a6));
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*addr_len = sizeof(*a6);
	} else {
		memset(a4, 0, sizeof(*a4));
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return -EINVAL;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*addr_len = sizeof(*a4);
	}
	return 0;
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	RTE_SET_USED(cls);
	/* connection-level trouble (limits, timeouts) is the client's:
	 * keep it out of the daemon's log unless asked for */
	rte_vlog(RTE_LOG_DEBUG, pa_metrics_logtype, fmt, ap);
}

/* The paths served have nothing to unescape: compare them as sent, so that
 * "/metrics%00" is not "/metrics". */
static size_t
keep_escapes(void *cls, struct MHD_Connection *conn, char *s)
{
	RTE_SET_USED(cls);
	RTE_SET_USED(conn);
	return strlen(s);
}

static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned int code, const char *body,
		size_t len, enum MHD_ResponseMemoryMode mode, bool allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, mode);
	if (r == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free((void *)(uintptr_t)body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
		code == MHD_HTTP_OK && mode == MHD_RESPMEM_MUST_FREE ?
		CONTENT_TYPE : "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* GET /health: 200 when ready and not draining, else 503; the body says
 * why (JSON, one line). */
static enum MHD_Result
reply_health(struct pa_metrics_http *h, struct MHD_Connection *conn)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned int code = 0;
	char *text = NULL;
	size_t len = 0;

	if (h->health(h->health_arg, &text, &len, &code) != 0 || text == NULL) {
		free(text);
		h->cnt.failed++;
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, failed_page,
			sizeof(failed_page) - 1, MHD_RESPMEM_PERSISTENT, false);
	}
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
		"application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (code == MHD_HTTP_OK)
		h->cnt.ok++;
	else
		h->cnt.unavailable++;
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
		const char *method, const char *version,
		const char *upload_data, size_t *upload_data_size,
		void **con_cls)
{
	struct pa_metrics_http *h = cls;
	bool get_or_head;
	char *text = NULL;
	size_t len = 0;

	RTE_SET_USED(version);
	RTE_SET_USED(upload_data);
	RTE_SET_USED(upload_data_size);
	RTE_SET_USED(con_cls);

	/* answered on the first call, before any body is read: a body is
	 * never wanted, and libmicrohttpd closes the connection after the
	 * answer when one was left unread */
	if (strcmp(url, "/metrics") != 0 && strcmp(url, "/") != 0 &&
	    (strcmp(url, "/health") != 0 || h->health == NULL)) {
		h->cnt.not_found++;
		return reply(conn, MHD_HTTP_NOT_FOUND, not_found_page,
			sizeof(not_found_page) - 1, MHD_RESPMEM_PERSISTENT, false);
	}
	get_or_head = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	if (!get_or_head) {
		h->cnt.bad_method++;
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, bad_method_page,
			sizeof(bad_method_page) - 1, MHD_RESPMEM_PERSISTENT, true);
	}
	if (strcmp(url, "/") == 0) {
		h->cnt.ok++;
		return reply(conn, MHD_HTTP_OK, index_page,
			sizeof(index_page) - 1, MHD_RESPMEM_PERSISTENT, false);
	}
	if (strcmp(url, "/health") == 0)
		return reply_health(h, conn);
	if (h->render(h->render_arg, &text, &len) != 0 || text == NULL) {
		free(text);
		h->cnt.failed++;
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, failed_page,
			sizeof(failed_page) - 1, MHD_RESPMEM_PERSISTENT, false);
	}
	h->cnt.ok++;
	return reply(conn, MHD_HTTP_OK, text, len, MHD_RESPMEM_MUST_FREE, false);
}

static int
open_listener(const char *listen_s, char *err, size_t err_len)
{
	struct sockaddr_storage ss;
	unsigned int len = 0;
	int fd, one = 1;

	if (pa_metrics_parse_listen(listen_s, &ss, &len) != 0) {
		pa_seterr(err, err_len,
			"metrics: invalid listen address '%s' (expected IPV4:PORT or [IPV6]:PORT)",
			listen_s);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		goto fail_close;
	if (ss.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
			IPV6_V6ONLY, &one, sizeof(one)) != 0)
		goto fail_close;
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
	    listen(fd, LISTEN_BACKLOG) != 0)
		goto fail_close;
	return fd;
fail_close:
	close(fd);
fail:
	pa_seterr(err, err_len, "metrics: cannot listen on %s: %s", listen_s,
		strerror(errno));
	return -errno;
}

struct pa_metrics_http *
pa_metrics_http_create(const struct pa_metrics_http_opts *o, char *err,
		size_t err_len)
{
	struct pa_metrics_http *h;
	int fd;

	if (o == NULL || o->listen == NULL || o->render == NULL) {
		pa_seterr(err, err_len, "metrics: no listen address or renderer");
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		pa_seterr(err, err_len, "metrics: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	h->render = o->render;
	h->render_arg = o->render_arg;
	h->health = o->health;
	h->health_arg = o->health_arg;
	fd = open_listener(o->listen, err, err_len);
	if (fd < 0) {
		free(h);
		errno = -fd;
		return NULL;
	}
	h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG,
		0, NULL, NULL, on_request, h,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(o->max_conns != 0 ?
			o->max_conns : PA_METRICS_DEFAULT_MAX_CONNS),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(o->conn_memory != 0 ?
			o->conn_memory : PA_METRICS_DEFAULT_CONN_MEMORY),
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)(o->timeout_s != 0 ?
			o->timeout_s : PA_METRICS_DEFAULT_TIMEOUT_S),
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
		MHD_OPTION_UNESCAPE_CALLBACK, keep_escapes, NULL,
		MHD_OPTION_END);
	if (h->d == NULL) {
		close(fd);
		free(h);
		pa_seterr(err, err_len, "metrics: cannot start the HTTP server on %s",
			o->listen);
		errno = EIO;
		return NULL;
	}
	return h;
}

int
pa_metrics_http_fd(const struct pa_metrics_http *h)
{
	const union MHD_DaemonInfo *i;

	i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	return i != NULL ? i->epoll_fd : -1;
}

int
pa_metrics_http_timeout_ms(const struct pa_metrics_http *h)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (MHD_get_timeout(h->d, &t) != MHD_YES)
		return -1;
	return t > 60000 ? 60000 : (int)t;
}

void
pa_metrics_http_run(struct pa_metrics_http *h)
{
	MHD_run(h->d);
}

void
pa_metrics_http_counters(const struct pa_metrics_http *h,
		struct pa_metrics_http_counters *c)
{
	*c = h->cnt;
}

void
pa_metrics_http_destroy(struct pa_metrics_http *h)
{
	if (h == NULL)
		return;
	/* closes the connections and the listening socket */
	MHD_stop_daemon(h->d);
	free(h);
}
