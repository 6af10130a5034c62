/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON-RPC client of pktaccelctl: connect to the daemon's Unix socket,
 * send one request as a line, read the one response line that answers it,
 * all within the call's deadline; reasons for failure go to stderr.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "pa_clock.h"
#include "pktaccelctl.h"

#define MAX_RESPONSE		(1u << 30)

/*
 * ctl_call() failing with -EPIPE means the request was not sent and
 * nothing answered: a retry on a new connection cannot run it twice.
 * No other step returns -EPIPE.
 */
#define SEND_FAILED		(-EPIPE)

static int
ms_left(int64_t deadline)
{
	int64_t left = deadline - pa_clock_ms();

	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

void
ctl_client_init(struct ctl_client *c, const char *path, int timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->timeout_ms = timeout_ms;
	c->fd = -1;
}

static void
ctl_disconnect(struct ctl_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = 0;
}

void
ctl_client_close(struct ctl_client *c)
{
	ctl_disconnect(c);
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
}

static int
ctl_connect(struct ctl_client *c)
{
	int64_t deadline = pa_clock_ms() + c->timeout_ms;
	struct sockaddr_un sa;
	size_t plen;
	int fd, e;

	plen = strlen(c->path);
	if (plen >= sizeof(sa.sun_path)) {
		fprintf(stderr, "%s: socket path %s is too long (limit %zu bytes)\n",
			ctl_progname, c->path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, c->path, plen + 1);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		fprintf(stderr, "%s: socket: %s\n", ctl_progname, strerror(e));
		return -e;
	}
	/* A Unix socket's non-blocking connect fails with EAGAIN while the
	 * listen backlog is full: retry until the deadline. */
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		if ((e == EAGAIN || e == EINTR) && ms_left(deadline) > 0) {
			usleep(10000);
			continue;
		}
		close(fd);
		if (e == EAGAIN)
			fprintf(stderr, "%s: cannot connect to %s: daemon busy (timed out)\n",
				ctl_progname, c->path);
		else
			fprintf(stderr, "%s: cannot connect to %s: %s%s\n",
				ctl_progname, c->path, strerror(e),
				(e == ENOENT || e == ECONNREFUSED) ?
				" (is pktaccel running with this RPC socket?)" :
				e == EACCES ? " (try as root or a member of the socket's group)" :
				"");
		return e == EAGAIN ? -ETIMEDOUT : -e;
	}
	c->fd = fd;
	c->len = 0;
	return 0;
}

/* Has the daemon closed the idle connection? */
static bool
ctl_peer_closed(struct ctl_client *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	char b;

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	if (pfd.revents & (POLLHUP | POLLERR))
		return true;
	return recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static int
send_all(struct ctl_client *c, const char *p, size_t len, int64_t deadline)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	ssize_t n;

	while (len > 0) {
		n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (ms_left(deadline) == 0) {
				fprintf(stderr, "%s: timed out sending to %s\n",
					ctl_progname, c->path);
				return -ETIMEDOUT;
			}
			poll(&pfd, 1, ms_left(deadline));
			continue;
		}
		/*
		 * The server acts on a request as soon as its closing bracket
		 * arrives, and may close before the final newline: then the
		 * answer is waiting to be read, and a retry would run it twice.
		 */
		if (len == 1 && *p == '\n')
			return 0;
		return SEND_FAILED;
	}
	return 0;
}

/* Read one response line into *v, parsed; or -errno, message printed. */
static int
read_line(struct ctl_client *c, int64_t deadline, json_t **v)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	size_t scanned = 0, l;
	json_error_t jerr;
	char *nl, *p;
	ssize_t n;
	int rc;

	*v = NULL;
	for (;;) {
		nl = c->len > scanned ?
			memchr(c->buf + scanned, '\n', c->len - scanned) :
			NULL;
		if (nl != NULL) {
			l = (size_t)(nl - c->buf);
			*v = json_loadb(c->buf, l, 0, &jerr);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			if (*v == NULL) {
				fprintf(stderr, "%s: invalid answer from %s: %s\n",
					ctl_progname, c->path, jerr.text);
				return -EPROTO;
			}
			return 0;
		}
		scanned = c->len;
		if (c->cap - c->len < 65536) {
			if (c->cap >= MAX_RESPONSE) {
				fprintf(stderr, "%s: answer from %s is too large\n",
					ctl_progname, c->path);
				return -EMSGSIZE;
			}
			p = realloc(c->buf, c->cap * 2 + 65536);
			if (p == NULL) {
				fprintf(stderr, "%s: out of memory\n", ctl_progname);
				return -ENOMEM;
			}
			c->buf = p;
			c->cap = c->cap * 2 + 65536;
		}
		rc = poll(&pfd, 1, ms_left(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			fprintf(stderr, "%s: no answer from %s within %.3g s\n",
				ctl_progname, c->path, c->timeout_ms / 1000.0);
			return -ETIMEDOUT;
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (n > 0) {
			c->len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		fprintf(stderr, "%s: %s closed the connection without answering%s%s\n",
			ctl_progname, c->path, n < 0 ? ": " : "",
			n < 0 ? strerror(errno) : "");
		return -ECONNRESET;
	}
}

/* The request as one newline-terminated line in *line (free it), its
 * length in *len; or -errno with a message printed. @p params is stolen. */
static int
request_line(const char *method, json_t *params, json_int_t id, char **line,
		size_t *len)
{
	json_t *req;
	char *txt;

	*line = NULL;
	req = json_pack("{s:s, s:s, s:I}", "jsonrpc", "2.0", "method", method,
		"id", id);
	if (req == NULL || (params != NULL &&
			json_object_set_new(req, "params", params) != 0)) {
		if (req == NULL)
			json_decref(params);
		json_decref(req);
		fprintf(stderr, "%s: cannot build the request (method name not UTF-8?)\n",
			ctl_progname);
		return -EINVAL;
	}
	txt = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	*len = txt != NULL ? strlen(txt) : 0;
	*line = txt != NULL ? realloc(txt, *len + 2) : NULL;
	if (*line == NULL) {
		free(txt);
		fprintf(stderr, "%s: out of memory\n", ctl_progname);
		return -ENOMEM;
	}
	(*line)[*len] = '\n';
	(*line)[*len + 1] = '\0';
	*len += 1;
	return 0;
}

/*
 * One call on the connection. @p params is stolen. @return 0 with *resp
 * the response, SEND_FAILED (nothing printed: may retry), or another
 * -errno with a message printed.
 */
static int
ctl_call(struct ctl_client *c, const char *method, json_t *params,
		json_t **resp)
{
	int64_t deadline = pa_clock_ms() + c->timeout_ms;
	json_int_t id = ++c->next_id;
	const json_t *rid;
	char *line;
	size_t len;
	int rc;

	*resp = NULL;
	rc = request_line(method, params, id, &line, &len);
	if (rc != 0)
		return rc;
	rc = send_all(c, line, len, deadline);
	free(line);
	if (rc != 0)
		return rc;

	for (;;) {
		rc = read_line(c, deadline, resp);
		if (rc != 0)
			return rc;
		rid = json_object_get(*resp, "id");
		if (json_is_object(*resp) && (json_is_null(rid) ||
				(json_is_integer(rid) &&
				 json_integer_value(rid) == id)))
			break;
		json_decref(*resp);	/* not ours: a stale answer */
	}
	if (json_object_get(*resp, "result") == NULL &&
			!json_is_object(json_object_get(*resp, "error"))) {
		fprintf(stderr, "%s: invalid answer from %s: neither result nor error\n",
			ctl_progname, c->path);
		json_decref(*resp);
		*resp = NULL;
		return -EPROTO;
	}
	return 0;
}

int
ctl_client_call(struct ctl_client *c, const char *method, json_t *params,
		json_t **resp)
{
	int rc;

	*resp = NULL;
	if (c->fd >= 0 && ctl_peer_closed(c))
		ctl_disconnect(c);
	if (c->fd < 0) {
		rc = ctl_connect(c);
		if (rc != 0) {
			json_decref(params);
			return rc;
		}
	}
	if (params != NULL)
		json_incref(params);
	rc = ctl_call(c, method, params, resp);
	if (rc == SEND_FAILED) {
		ctl_disconnect(c);
		if (ctl_connect(c) == 0) {
			if (params != NULL)
				json_incref(params);
			rc = ctl_call(c, method, params, resp);
		}
		if (rc == SEND_FAILED)
			fprintf(stderr, "%s: %s closed the connection before the request was sent\n",
				ctl_progname, c->path);
	}
	json_decref(params);
	if (rc != 0)
		ctl_disconnect(c);
	return rc;
}
