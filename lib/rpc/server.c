/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON-RPC over a Unix stream socket, for one control thread: a
 * non-blocking listening socket and its connections in one epoll set.
 *
 * Each connection's input goes through an incremental scanner that tracks
 * the nesting outside strings (a stack of bracket kinds, one bit a level),
 * so that the end of every top-level value is known without rescanning
 * bytes already seen; only complete values are handed to jansson. A value
 * whose brackets balance but whose content is invalid is answered with a
 * parse error and the stream goes on; anything that loses the value
 * boundaries (a bare scalar, a mismatched bracket, too deep, too long) is
 * answered and the connection closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "pa_rpc.h"

#ifndef TAILQ_FOREACH_SAFE	/* glibc's sys/queue.h lacks it */
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	     (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	     (var) = (tvar))
#endif

#define RPC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pa_rpc_logtype, "pa.rpc: " fmt "\n", ##__VA_ARGS__)

#define DEFAULT_MAX_REQUEST	(32u * 1024 * 1024)	/* a 100k-rule ACL is ~12 MB */
#define DEFAULT_MAX_CONNS	64u
#define DEFAULT_MAX_DEPTH	64u
#define DEFAULT_MODE		0660
#define DIR_MODE		0750

#define READ_CHUNK		(64u << 10)	/* bytes per read() */
#define READ_BUDGET		(256u << 10)	/* bytes per connection per poll */
#define REQ_BUDGET		64u		/* values per connection per poll */
#define ACCEPT_BUDGET		32u		/* accepts per poll */
#define OUT_HIGH		(4u << 20)	/* stop reading above this output */
#define IN_KEEP			(64u << 10)	/* idle input buffer kept */
#define OUT_KEEP		(64u << 10)	/* idle output buffer kept */
#define MAX_EVENTS		64

/* epoll data for the two server fds; connections carry their pointer. */
#define TAG_LISTEN		((void *)1)
#define TAG_WAKE		((void *)2)

enum scan_state {
	SCAN_BETWEEN,		/* between values: skipping whitespace */
	SCAN_VALUE,		/* inside a value that started at start */
};

struct conn {
	TAILQ_ENTRY(conn) next;
	int fd;
	uint32_t events;	/* registered with epoll */

	char *in;		/* received bytes */
	size_t in_len;
	size_t in_cap;
	size_t scan_pos;	/* bytes before this are scanned */
	size_t start;		/* start of the current value */
	enum scan_state state;
	unsigned int depth;
	uint8_t *kinds;		/* bit per level: 1 = '{', 0 = '[' */
	bool in_string;
	bool escape;

	char *out;		/* responses not yet written */
	size_t out_off;
	size_t out_len;
	size_t out_cap;

	bool rd_eof;		/* peer will send nothing more */
	bool closing;		/* protocol error: close once flushed */
	bool dead;		/* drop now */
	uint64_t poll_gen;	/* last poll that served this connection */
};

TAILQ_HEAD(conn_list, conn);

struct pa_rpc_server {
	int epfd;
	int lfd;
	int wakefd;		/* eventfd: readable while input is pending */
	int lockfd;
	bool wake_set;
	char *path;
	char *lock_path;
	size_t max_request;
	unsigned int max_conns;
	unsigned int max_depth;
	unsigned int nconns;
	uint64_t poll_gen;
	int64_t accept_err_ms;	/* last accept failure logged */
	struct conn_list conns;
	struct pa_rpc_counters counters;
};

static void
set_err(char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
set_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

static char *
str_concat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s;

	s = malloc(la + lb + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b, lb + 1);
	return s;
}

/* mkdir -p of the directory part of @p path (missing components only). */
static int
make_parent_dir(const char *path, char *err, size_t err_len)
{
	char *dir, *p, ch;
	struct stat st;
	int ret = 0;

	dir = strdup(path);
	if (dir == NULL)
		return -ENOMEM;
	p = strrchr(dir, '/');
	if (p == NULL || p == dir)
		goto out_free;
	*p = '\0';

	for (p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		ch = *p;
		*p = '\0';
		if (mkdir(dir, DIR_MODE) != 0 && errno != EEXIST) {
			ret = -errno;
			set_err(err, err_len, "cannot create directory %s: %s",
				dir, strerror(errno));
			goto out_free;
		}
		*p = ch;
		if (ch == '\0')
			break;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		ret = -ENOTDIR;
		set_err(err, err_len, "%s is not a directory", dir);
	}
out_free:
	free(dir);
	return ret;
}

/*
 * Take "<path>.lock". The lock proves that no live server uses the socket;
 * the inode check closes the race with a server that unlinks the lock file
 * between our open() and flock().
 */
static int
take_lock(struct pa_rpc_server *s, char *err, size_t err_len)
{
	struct stat fst, pst;
	int fd, tries;

	for (tries = 0; tries < 8; tries++) {
		fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			int e = errno;

			set_err(err, err_len, "cannot open lock file %s: %s",
				s->lock_path, strerror(e));
			return -e;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int e = errno;

			close(fd);
			if (e == EWOULDBLOCK) {
				set_err(err, err_len,
					"RPC socket %s is in use by another pktaccel (lock %s held)",
					s->path, s->lock_path);
				return -EADDRINUSE;
			}
			set_err(err, err_len, "cannot lock %s: %s",
				s->lock_path, strerror(e));
			return -e;
		}
		if (fstat(fd, &fst) == 0 && stat(s->lock_path, &pst) == 0 &&
				fst.st_dev == pst.st_dev &&
				fst.st_ino == pst.st_ino) {
			s->lockfd = fd;
			return 0;
		}
		close(fd);	/* locked a file that was just removed */
	}
	set_err(err, err_len, "cannot lock %s: lock file keeps changing",
		s->lock_path);
	return -EAGAIN;
}

static int
open_listener(struct pa_rpc_server *s, int mode, char *err, size_t err_len)
{
	struct sockaddr_un sa;
	struct stat st;
	size_t len;
	int e;

	len = strlen(s->path);
	if (len >= sizeof(sa.sun_path)) {
		set_err(err, err_len,
			"RPC socket path %s is too long (%zu bytes, limit %zu)",
			s->path, len, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, s->path, len + 1);

	/* We hold the lock: whatever socket is there is stale. */
	if (lstat(s->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			set_err(err, err_len,
				"%s exists and is not a socket; not replacing it",
				s->path);
			return -EEXIST;
		}
		if (unlink(s->path) != 0 && errno != ENOENT) {
			e = errno;
			set_err(err, err_len, "cannot remove stale socket %s: %s",
				s->path, strerror(e));
			return -e;
		}
		RPC_LOG(INFO, "replaced stale socket %s", s->path);
	}

	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		e = errno;
		set_err(err, err_len, "socket: %s", strerror(e));
		return -e;
	}
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		set_err(err, err_len, "cannot bind RPC socket %s: %s",
			s->path, strerror(e));
		return -e;
	}
	if (chmod(s->path, (mode_t)mode) != 0) {
		e = errno;
		set_err(err, err_len, "cannot chmod RPC socket %s: %s",
			s->path, strerror(e));
		unlink(s->path);
		return -e;
	}
	if (listen(s->lfd, SOMAXCONN) != 0) {
		e = errno;
		set_err(err, err_len, "cannot listen on RPC socket %s: %s",
			s->path, strerror(e));
		unlink(s->path);
		return -e;
	}
	return 0;
}

static int
ep_add(int epfd, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

struct pa_rpc_server *
pa_rpc_server_create(const struct pa_rpc_server_opts *o, char *err,
		size_t err_len)
{
	struct pa_rpc_server *s;
	int ret, mode;

	set_err(err, err_len, "%s", "");
	if (o == NULL || o->path == NULL || o->path[0] == '\0') {
		set_err(err, err_len, "no RPC socket path");
		ret = -EINVAL;
		goto out_errno;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		set_err(err, err_len, "out of memory");
		ret = -ENOMEM;
		goto out_errno;
	}
	s->epfd = s->lfd = s->wakefd = s->lockfd = -1;
	TAILQ_INIT(&s->conns);
	s->max_request = o->max_request != 0 ? o->max_request :
		DEFAULT_MAX_REQUEST;
	s->max_conns = o->max_conns != 0 ? o->max_conns : DEFAULT_MAX_CONNS;
	s->max_depth = o->max_depth != 0 ? o->max_depth : DEFAULT_MAX_DEPTH;
	mode = o->mode != 0 ? o->mode : DEFAULT_MODE;

	s->path = strdup(o->path);
	s->lock_path = str_concat(o->path, ".lock");
	if (s->path == NULL || s->lock_path == NULL) {
		set_err(err, err_len, "out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	if (strlen(s->path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		set_err(err, err_len,
			"RPC socket path %s is too long (%zu bytes, limit %zu)",
			s->path, strlen(s->path),
			sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		ret = -ENAMETOOLONG;
		goto out_free;
	}

	ret = make_parent_dir(s->path, err, err_len);
	if (ret != 0)
		goto out_free;
	ret = take_lock(s, err, err_len);
	if (ret != 0)
		goto out_free;
	ret = open_listener(s, mode, err, err_len);
	if (ret != 0)
		goto out_unlock;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epfd < 0 || s->wakefd < 0) {
		ret = -errno;
		set_err(err, err_len, "epoll/eventfd: %s", strerror(-ret));
		goto out_unlink;
	}
	ret = ep_add(s->epfd, s->lfd, EPOLLIN, TAG_LISTEN);
	if (ret == 0)
		ret = ep_add(s->epfd, s->wakefd, EPOLLIN, TAG_WAKE);
	if (ret != 0) {
		set_err(err, err_len, "epoll_ctl: %s", strerror(-ret));
		goto out_unlink;
	}
	RPC_LOG(INFO, "listening on %s", s->path);
	return s;

out_unlink:
	unlink(s->path);
out_unlock:
	unlink(s->lock_path);
out_free:
	if (s->wakefd >= 0)
		close(s->wakefd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->lockfd >= 0)
		close(s->lockfd);
	free(s->lock_path);
	free(s->path);
	free(s);
out_errno:
	rte_errno = -ret;
	errno = -ret;
	return NULL;
}

int
pa_rpc_server_fd(const struct pa_rpc_server *s)
{
	return s != NULL ? s->epfd : -1;
}

void
pa_rpc_server_counters(const struct pa_rpc_server *s,
		struct pa_rpc_counters *c)
{
	if (c == NULL)
		return;
	if (s == NULL) {
		memset(c, 0, sizeof(*c));
		return;
	}
	*c = s->counters;
}

/* ---- connections ---- */

static size_t
out_pending(const struct conn *c)
{
	return c->out_len - c->out_off;
}

static bool
has_backlog(const struct conn *c)
{
	return !c->dead && !c->closing && c->scan_pos < c->in_len &&
		out_pending(c) < OUT_HIGH;
}

static void
conn_destroy(struct pa_rpc_server *s, struct conn *c)
{
	TAILQ_REMOVE(&s->conns, c, next);
	s->nconns--;
	/* close() removes the fd from the epoll set */
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c->kinds);
	free(c);
}

static int
reserve(char **buf, size_t *cap, size_t need)
{
	size_t ncap;
	char *p;

	if (need <= *cap)
		return 0;
	ncap = *cap != 0 ? *cap : 4096;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	p = realloc(*buf, ncap);
	if (p == NULL)
		return -ENOMEM;
	*buf = p;
	*cap = ncap;
	return 0;
}

/* Queue one response line; a connection that cannot take it is dropped. */
static void
queue_json(struct conn *c, const json_t *resp)
{
	static const char oom[] = "{\"jsonrpc\":\"2.0\",\"id\":null,"
		"\"error\":{\"code\":-32603,\"message\":\"internal error: "
		"cannot encode the response\"}}";
	char *txt;
	const char *line;
	size_t len;

	if (c->dead)
		return;
	txt = json_dumps(resp, JSON_COMPACT);
	line = txt != NULL ? txt : oom;
	len = strlen(line);
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
	} else if (c->out_off >= c->out_len - c->out_off) {
		/* move the unsent tail down once as much has been sent */
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (reserve(&c->out, &c->out_cap, c->out_len + len + 1) != 0) {
		RPC_LOG(ERR, "out of memory queueing a response, dropping client");
		c->dead = true;
		goto out_free;
	}
	memcpy(c->out + c->out_len, line, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
out_free:
	free(txt);
}

static void
queue_error(struct pa_rpc_server *s, struct conn *c, int code,
		const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
queue_error(struct pa_rpc_server *s, struct conn *c, int code,
		const char *fmt, ...)
{
	char msg[PA_RPC_MSG_MAX];
	json_t *resp;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->counters.requests++;
	s->counters.errors++;
	resp = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
		"id", "error", "code", code, "message", msg);
	if (resp == NULL)	/* message not valid UTF-8 */
		resp = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
			"id", "error", "code", code, "message",
			code == PA_RPC_PARSE_ERROR ? "parse error" :
			"invalid request");
	if (resp != NULL) {
		queue_json(c, resp);
		json_decref(resp);
	}
}

/* A protocol error after which the stream cannot be resynchronised. */
static void
fail_stream(struct conn *c)
{
	c->closing = true;
	c->in_len = c->scan_pos = c->start = 0;
	c->state = SCAN_BETWEEN;
}

/* Write what the socket takes now. */
static void
conn_flush(struct conn *c)
{
	ssize_t n;

	while (!c->dead && c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		c->dead = true;	/* EPIPE, ECONNRESET: peer gone */
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		if (c->out_cap > OUT_KEEP) {
			free(c->out);
			c->out = NULL;
			c->out_cap = 0;
		}
	}
}

static void
handle_value(struct pa_rpc_server *s, struct conn *c, const char *buf,
		size_t len)
{
	json_error_t jerr;
	json_t *req, *resp;

	req = json_loadb(buf, len, 0, &jerr);
	if (req == NULL) {
		queue_error(s, c, PA_RPC_PARSE_ERROR,
			"parse error: %s (line %d, column %d)",
			jerr.text, jerr.line, jerr.column);
		return;
	}
	resp = pa_rpc_handle_count(req, &s->counters);
	json_decref(req);
	if (resp != NULL) {
		queue_json(c, resp);
		json_decref(resp);
	}
}

static void
kind_set(struct conn *c, unsigned int level, bool brace)
{
	if (brace)
		c->kinds[level / 8] |= (uint8_t)(1u << (level % 8));
	else
		c->kinds[level / 8] &= (uint8_t)~(1u << (level % 8));
}

static bool
kind_get(const struct conn *c, unsigned int level)
{
	return (c->kinds[level / 8] >> (level % 8)) & 1;
}

static bool
is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/*
 * Scan from scan_pos; hand each complete value to the dispatcher, within
 * the per-poll budget and while the output is below OUT_HIGH.
 */
static void
drain_values(struct pa_rpc_server *s, struct conn *c, unsigned int *nreq)
{
	const size_t max_req = s->max_request;
	size_t pos, end, limit;
	char ch;

	while (c->scan_pos < c->in_len && !c->closing && !c->dead) {
		if (*nreq >= REQ_BUDGET || out_pending(c) >= OUT_HIGH)
			return;
		if (c->state == SCAN_BETWEEN) {
			ch = c->in[c->scan_pos];
			if (is_ws(ch)) {
				c->scan_pos++;
				continue;
			}
			if (ch != '{' && ch != '[') {
				queue_error(s, c, PA_RPC_PARSE_ERROR,
					"parse error: expected a request object or a batch array, got '%c'",
					(ch >= 0x20 && ch < 0x7f) ? ch : '?');
				fail_stream(c);
				return;
			}
			c->state = SCAN_VALUE;
			c->start = c->scan_pos;
			c->depth = 0;
			c->in_string = false;
			c->escape = false;
		}

		/* Only look as far as the size limit allows. */
		end = c->in_len;
		limit = c->start + max_req;
		if (limit < c->start)
			limit = SIZE_MAX;
		if (end > limit)
			end = limit;
		for (pos = c->scan_pos; pos < end; pos++) {
			ch = c->in[pos];
			if (c->in_string) {
				if (c->escape)
					c->escape = false;
				else if (ch == '\\')
					c->escape = true;
				else if (ch == '"')
					c->in_string = false;
				continue;
			}
			if (ch == '"') {
				c->in_string = true;
			} else if (ch == '{' || ch == '[') {
				if (c->depth >= s->max_depth) {
					queue_error(s, c, PA_RPC_PARSE_ERROR,
						"parse error: nesting too deep (limit %u levels)",
						s->max_depth);
					fail_stream(c);
					return;
				}
				kind_set(c, c->depth++, ch == '{');
			} else if (ch == '}' || ch == ']') {
				if (kind_get(c, --c->depth) != (ch == '}')) {
					queue_error(s, c, PA_RPC_PARSE_ERROR,
						"parse error: mismatched '%c'", ch);
					fail_stream(c);
					return;
				}
				if (c->depth == 0)
					break;
			}
		}
		if (pos < end) {	/* complete: [start, pos] */
			c->scan_pos = pos + 1;
			c->state = SCAN_BETWEEN;
			(*nreq)++;
			handle_value(s, c, c->in + c->start,
				c->scan_pos - c->start);
			continue;
		}
		c->scan_pos = end;
		if (end - c->start >= max_req && end < c->in_len) {
			queue_error(s, c, PA_RPC_INVALID_REQUEST,
				"request too large (limit %zu bytes)", max_req);
			fail_stream(c);
			return;
		}
	}
}

/* Make room to read: drop consumed bytes, grow for a partial value. */
static int
make_room(struct conn *c)
{
	size_t keep_from;

	/* A partial value moves at most once: afterwards it starts at 0. */
	keep_from = c->state == SCAN_VALUE ? c->start : c->scan_pos;
	if (keep_from > 0) {
		c->in_len -= keep_from;
		if (c->in_len > 0)
			memmove(c->in, c->in + keep_from, c->in_len);
		c->scan_pos -= keep_from;
		c->start = 0;
	}
	if (c->in_len == 0 && c->in_cap > IN_KEEP) {
		free(c->in);
		c->in = NULL;
		c->in_cap = 0;
	}
	return reserve(&c->in, &c->in_cap, c->in_len + READ_CHUNK);
}

/* Read, scan and dispatch within this poll's budget. */
static void
conn_serve(struct pa_rpc_server *s, struct conn *c)
{
	unsigned int nreq = 0;
	size_t budget = READ_BUDGET;
	ssize_t n;

	for (;;) {
		drain_values(s, c, &nreq);
		if (c->dead || c->closing || c->rd_eof)
			break;
		if (c->scan_pos < c->in_len)	/* budget or output bound */
			break;
		if (budget == 0 || out_pending(c) >= OUT_HIGH)
			break;
		if (make_room(c) != 0) {
			RPC_LOG(ERR, "out of memory reading a request, dropping client");
			c->dead = true;
			break;
		}
		n = read(c->fd, c->in + c->in_len, READ_CHUNK);
		if (n > 0) {
			c->in_len += (size_t)n;
			budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
			continue;
		}
		if (n == 0) {
			c->rd_eof = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			c->dead = true;
		break;
	}
	conn_flush(c);
}

/* Decide the connection's fate and its epoll interest after serving it. */
static void
conn_update(struct pa_rpc_server *s, struct conn *c)
{
	struct epoll_event ev;
	uint32_t want = 0;

	if (!c->dead && c->rd_eof && !has_backlog(c) &&
			(c->closing || c->scan_pos >= c->in_len)) {
		/* nothing more will be answered; a partial value is dropped */
		if (out_pending(c) == 0)
			c->dead = true;
		else
			c->closing = true;
	}
	if (!c->dead && c->closing && out_pending(c) == 0)
		c->dead = true;
	if (c->dead) {
		conn_destroy(s, c);
		return;
	}
	if (!c->closing && !c->rd_eof && c->scan_pos >= c->in_len &&
			out_pending(c) < OUT_HIGH)
		want |= EPOLLIN;
	if (out_pending(c) > 0)
		want |= EPOLLOUT;
	if (want == c->events)
		return;
	ev.events = want;
	ev.data.ptr = c;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
		RPC_LOG(ERR, "epoll_ctl: %s, dropping client", strerror(errno));
		conn_destroy(s, c);
		return;
	}
	c->events = want;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
accept_conns(struct pa_rpc_server *s)
{
	struct conn *c;
	unsigned int i;
	int fd, ret;

	for (i = 0; i < ACCEPT_BUDGET; i++) {
		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			switch (errno) {
			case EAGAIN:
#if EAGAIN != EWOULDBLOCK
			case EWOULDBLOCK:
#endif
				return 0;
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
				continue;
			case EMFILE:
			case ENFILE:
			case ENOBUFS:
			case ENOMEM:
				/* transient: retried at the next poll; log
				 * at most once a second */
				if (now_ms() - s->accept_err_ms >= 1000) {
					s->accept_err_ms = now_ms();
					RPC_LOG(WARNING, "accept on %s: %s",
						s->path, strerror(errno));
				}
				return 0;
			default:
				ret = -errno;
				RPC_LOG(ERR, "accept on %s: %s", s->path,
					strerror(errno));
				return ret;
			}
		}
		if (s->nconns >= s->max_conns) {
			s->counters.rejected_connections++;
			/* log the 1st, 2nd, 4th, 8th... refusal: no log flood */
			if ((s->counters.rejected_connections &
					(s->counters.rejected_connections - 1)) == 0)
				RPC_LOG(WARNING, "too many RPC connections (limit %u), closed a new one (%"
					PRIu64 " so far)", s->max_conns,
					s->counters.rejected_connections);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->kinds = calloc(s->max_depth / 8 + 1, 1);
		if (c->kinds == NULL) {
			close(fd);
			free(c);
			continue;
		}
		c->fd = fd;
		c->events = EPOLLIN;
		if (ep_add(s->epfd, fd, EPOLLIN, c) != 0) {
			close(fd);
			free(c->kinds);
			free(c);
			continue;
		}
		TAILQ_INSERT_TAIL(&s->conns, c, next);
		s->nconns++;
		s->counters.connections++;
	}
	return 0;
}

static void
wake_update(struct pa_rpc_server *s)
{
	struct conn *c;
	uint64_t v = 1;
	bool pending = false;

	TAILQ_FOREACH(c, &s->conns, next) {
		if (has_backlog(c)) {
			pending = true;
			break;
		}
	}
	if (pending == s->wake_set)
		return;
	if (pending) {
		if (write(s->wakefd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			s->wake_set = true;
	} else {
		if (read(s->wakefd, &v, sizeof(v)) == (ssize_t)sizeof(v) ||
				errno == EAGAIN)
			s->wake_set = false;
	}
}

int
pa_rpc_server_poll(struct pa_rpc_server *s, int timeout_ms)
{
	struct epoll_event evs[MAX_EVENTS];
	struct conn *c, *tmp;
	int n, i, ret = 0;

	if (s == NULL)
		return -EINVAL;
	if (s->wake_set)
		timeout_ms = 0;
	n = epoll_wait(s->epfd, evs, MAX_EVENTS, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;

	s->poll_gen++;
	for (i = 0; i < n; i++) {
		if (evs[i].data.ptr == TAG_LISTEN) {
			if (evs[i].events & (EPOLLERR | EPOLLHUP)) {
				RPC_LOG(ERR, "listening socket %s failed",
					s->path);
				ret = -EIO;
			}
			continue;
		}
		if (evs[i].data.ptr == TAG_WAKE)
			continue;
		c = evs[i].data.ptr;
		if (evs[i].events & EPOLLERR) {
			c->dead = true;	/* reset by the peer */
		} else if (evs[i].events & EPOLLHUP) {
			/* Peer closed: run what it sent, answer nothing. */
			c->out_off = c->out_len = 0;
			conn_serve(s, c);
			c->dead = true;
		} else {
			conn_serve(s, c);
		}
		c->poll_gen = s->poll_gen;
		conn_update(s, c);
	}
	/* Input left over by the budget of an earlier poll. */
	TAILQ_FOREACH_SAFE(c, &s->conns, next, tmp) {
		if (c->poll_gen == s->poll_gen || !has_backlog(c))
			continue;
		c->poll_gen = s->poll_gen;
		conn_serve(s, c);
		conn_update(s, c);
	}
	/* Accept last: hang-ups seen in this poll free their slots first. */
	for (i = 0; i < n; i++)
		if (evs[i].data.ptr == TAG_LISTEN && ret == 0)
			ret = accept_conns(s);
	wake_update(s);
	return ret;
}

void
pa_rpc_server_flush(struct pa_rpc_server *s, int timeout_ms)
{
	struct pollfd pfd[MAX_EVENTS];
	struct conn *c, *tmp;
	int64_t deadline;
	int n, left;

	if (s == NULL)
		return;
	deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		n = 0;
		TAILQ_FOREACH_SAFE(c, &s->conns, next, tmp) {
			conn_flush(c);
			if (c->dead || (c->closing && out_pending(c) == 0)) {
				conn_destroy(s, c);
				continue;
			}
			if (out_pending(c) > 0 && n < MAX_EVENTS) {
				pfd[n].fd = c->fd;
				pfd[n].events = POLLOUT;
				n++;
			}
		}
		left = (int)(deadline - now_ms());
		if (n == 0 || left <= 0)
			break;
		if (poll(pfd, (nfds_t)n, left) < 0 && errno != EINTR)
			break;
	}
	TAILQ_FOREACH_SAFE(c, &s->conns, next, tmp)
		conn_update(s, c);
	wake_update(s);
}

void
pa_rpc_server_destroy(struct pa_rpc_server *s)
{
	struct conn *c;

	if (s == NULL)
		return;
	while ((c = TAILQ_FIRST(&s->conns)) != NULL)
		conn_destroy(s, c);
	close(s->lfd);
	unlink(s->path);
	unlink(s->lock_path);
	close(s->lockfd);
	close(s->wakefd);
	close(s->epfd);
	RPC_LOG(DEBUG, "closed %s", s->path);
	free(s->lock_path);
	free(s->path);
	free(s);
}
