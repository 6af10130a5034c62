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
 *
 * No client can hold the control thread or grow the server's memory
 * without bound: each poll gives each connection a budget of calls, time
 * and input; a batch is run and answered element by element across polls
 * (its response line is streamed, never built whole); output above
 * OUT_HIGH stops the connection's input; and a connection that keeps the
 * server waiting (a partial request, or responses it does not read) with
 * no byte moving for the idle timeout is closed (a timerfd in the epoll
 * set makes the server fd readable when a deadline passes).
 *
 * jansson needs up to ~0.4 us per byte (and ~70 bytes of memory) for
 * dense input such as [{},{},...]: values longer than PARSE_INLINE_MAX
 * are parsed, and their trees freed, by a parser thread, so that a big
 * request delays only its own connection; the scanner also caps the
 * number of containers and of commas in a value, which bounds a tree's
 * size and its parse time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "pa_clock.h"
#include "pa_err.h"
#include "pa_rpc.h"

#ifndef TAILQ_FOREACH_SAFE	/* glibc's sys/queue.h lacks it */
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	     (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	     (var) = (tvar))
#endif

#define RPC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pa_rpc_logtype, "pa.rpc: " fmt "\n", ##__VA_ARGS__)

#define DEFAULT_MAX_REQUEST	PA_RPC_DEFAULT_MAX_REQUEST
#define DEFAULT_MAX_CONNS	PA_RPC_DEFAULT_MAX_CONNS
#define DEFAULT_MAX_DEPTH	PA_RPC_DEFAULT_MAX_DEPTH
#define DEFAULT_IDLE_TIMEOUT_MS	PA_RPC_DEFAULT_IDLE_TIMEOUT_MS
#define DEFAULT_MODE		0660
#define DIR_MODE		0750

#define READ_CHUNK		(64u << 10)	/* bytes per read() */
#define READ_BUDGET		(256u << 10)	/* bytes per connection per poll */
#define REQ_BUDGET		64u		/* calls per connection per poll */
#define TIME_BUDGET_NS		(2u * 1000 * 1000)	/* calls' time, same */
#define ACCEPT_BUDGET		32u		/* accepts per poll */
#define OUT_HIGH		(4u << 20)	/* stop reading above this output */
#define IN_KEEP			(64u << 10)	/* idle input buffer kept */
#define IN_MAP_MIN		(256u << 10)	/* larger input buffers: mmap */
#define OUT_KEEP		(64u << 10)	/* idle output buffer kept */
#define MAX_EVENTS		64
#define PARSE_INLINE_MAX	(8u << 10)	/* longer: the parser thread */
#define CONTAINER_BYTES		64u	/* max_request / this: '{' and '[' */
#define MIN_CONTAINERS		4096u
#define COMMA_BYTES		8u	/* max_request / this: ',' */
#define MIN_COMMAS		32768u
#define PARSER_NICE		10	/* below the control thread it shares a CPU with */
#define BIG_BATCH_MAX		2u	/* parsed or running batches > PARSE_INLINE_MAX */

/* epoll data for the two server fds; connections carry their pointer. */
#define TAG_LISTEN		((void *)1)
#define TAG_WAKE		((void *)2)
#define TAG_TIMER		((void *)3)
#define TAG_PARSED		((void *)4)

struct conn;

/*
 * A value for the parser thread (text != NULL), or a tree for it to free.
 * The text lies in buf, the connection's input buffer as it was when the
 * value completed (handed over, not copied: see handle_value()).
 */
struct parse_job {
	TAILQ_ENTRY(parse_job) next;
	struct conn *c;		/* NULL once the connection is gone */
	char *buf;		/* owned; freed with buf_free() */
	size_t buf_cap;
	bool buf_mapped;
	const char *text;	/* in buf */
	size_t len;
	bool slot;		/* a batch: holds one of the BIG_BATCH_MAX */
	json_t *doc;		/* the parsed value, or the tree to free */
	json_error_t err;
};

TAILQ_HEAD(job_list, parse_job);

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
	bool in_mapped;		/* in is mmap()ed (grows with mremap()) */
	size_t scan_pos;	/* bytes before this are scanned */
	size_t start;		/* start of the current value */
	enum scan_state state;
	unsigned int depth;
	size_t n_containers;	/* '{' and '[' in the current value */
	size_t n_commas;	/* ',' in the current value */
	uint8_t *kinds;		/* bit per level: 1 = '{', 0 = '[' */
	bool in_string;
	bool escape;

	char *out;		/* responses not yet written */
	size_t out_off;
	size_t out_len;
	size_t out_cap;

	json_t *batch;		/* batch whose calls are running, or NULL */
	size_t batch_next;	/* its next element */
	bool batch_open;	/* the '[' of its response is queued */
	bool batch_big;		/* its tree goes to the parser thread to free */
	bool batch_slot;	/* it holds one of the BIG_BATCH_MAX */
	struct parse_job *job;	/* value with the parser thread, or NULL */
	size_t held_len;	/* a long batch at start, waiting for a slot */

	int64_t last_io_ms;	/* last byte read or written (or accept) */

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
	int timerfd;		/* readable when an idle deadline passes */
	int64_t timer_ms;	/* deadline armed (CLOCK_MONOTONIC), 0 = none */
	int lockfd;
	bool wake_set;
	char *path;
	char *lock_path;
	size_t max_request;
	unsigned int max_conns;
	unsigned int max_depth;
	size_t max_containers;
	size_t max_commas;
	unsigned int idle_timeout_ms;
	bool set_group;		/* socket and directory to gid */
	unsigned int gid;
	unsigned int nconns;
	unsigned int big_batches;	/* BIG_BATCH_MAX slots taken */
	uint64_t poll_gen;
	int64_t accept_err_ms;	/* last accept failure logged */
	struct conn_list conns;
	struct pa_rpc_counters counters;

	/* parser thread: todo and done under plock; donefd signals done */
	pthread_t parser;
	bool parser_running;
	bool parser_stop;
	pthread_mutex_t plock;
	pthread_cond_t pcond;
	struct job_list ptodo;
	struct job_list pdone;
	int donefd;
};

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
			pa_seterr(err, err_len, "cannot create directory %s: %s",
				dir, strerror(errno));
			goto out_free;
		}
		*p = ch;
		if (ch == '\0')
			break;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		ret = -ENOTDIR;
		pa_seterr(err, err_len, "%s is not a directory", dir);
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

			pa_seterr(err, err_len, "cannot open lock file %s: %s",
				s->lock_path, strerror(e));
			return -e;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int e = errno;

			close(fd);
			if (e == EWOULDBLOCK) {
				pa_seterr(err, err_len,
					"RPC socket %s is in use by another pktaccel (lock %s held)",
					s->path, s->lock_path);
				return -EADDRINUSE;
			}
			pa_seterr(err, err_len, "cannot lock %s: %s",
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
	pa_seterr(err, err_len, "cannot lock %s: lock file keeps changing",
		s->lock_path);
	return -EAGAIN;
}

/* Give the socket's directory to @p gid too: members of the group need to
 * traverse it (0750) to reach the socket. */
static int
chown_dir(const char *path, gid_t gid)
{
	char *dir = strdup(path);
	char *slash;
	int ret = 0;

	if (dir == NULL) {
		errno = ENOMEM;
		return -1;
	}
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		ret = chown(dir, (uid_t)-1, gid);
	}
	free(dir);
	return ret;
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
		pa_seterr(err, err_len,
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
			pa_seterr(err, err_len,
				"%s exists and is not a socket; not replacing it",
				s->path);
			return -EEXIST;
		}
		if (unlink(s->path) != 0 && errno != ENOENT) {
			e = errno;
			pa_seterr(err, err_len, "cannot remove stale socket %s: %s",
				s->path, strerror(e));
			return -e;
		}
		RPC_LOG(INFO, "replaced stale socket %s", s->path);
	}

	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		e = errno;
		pa_seterr(err, err_len, "socket: %s", strerror(e));
		return -e;
	}
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		pa_seterr(err, err_len, "cannot bind RPC socket %s: %s",
			s->path, strerror(e));
		return -e;
	}
	if (chmod(s->path, (mode_t)mode) != 0) {
		e = errno;
		pa_seterr(err, err_len, "cannot chmod RPC socket %s: %s",
			s->path, strerror(e));
		unlink(s->path);
		return -e;
	}
	if (s->set_group && (chown(s->path, (uid_t)-1, (gid_t)s->gid) != 0 ||
	    chown_dir(s->path, (gid_t)s->gid) != 0)) {
		e = errno;
		pa_seterr(err, err_len, "cannot give RPC socket %s to group %u: %s",
			s->path, s->gid, strerror(e));
		unlink(s->path);
		return -e;
	}
	if (listen(s->lfd, SOMAXCONN) != 0) {
		e = errno;
		pa_seterr(err, err_len, "cannot listen on RPC socket %s: %s",
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

static void
limits_set(struct pa_rpc_server *s)
{
	s->max_containers = s->max_request / CONTAINER_BYTES;
	if (s->max_containers < MIN_CONTAINERS)
		s->max_containers = MIN_CONTAINERS;
	s->max_commas = s->max_request / COMMA_BYTES;
	if (s->max_commas < MIN_COMMAS)
		s->max_commas = MIN_COMMAS;
}

/*
 * Input buffers of IN_MAP_MIN and more are mapped: growing one moves its
 * pages (mremap) instead of copying them into fresh memory, whose page
 * faults cost milliseconds per MB on some machines.
 */
static void
buf_free(char *buf, size_t cap, bool mapped)
{
	if (mapped)
		munmap(buf, cap);
	else
		free(buf);
}

static void *
parser_main(void *arg)
{
	struct pa_rpc_server *s = arg;
	struct parse_job *j;
	uint64_t one = 1;
	bool parse;

	/* Linux: a thread's own nice value. The control thread (the caller of
	 * pa_rpc_server_poll()) must win the CPU they usually share. */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), PARSER_NICE) != 0)
		RPC_LOG(DEBUG, "cannot lower the parser thread's priority: %s",
			strerror(errno));
	pthread_mutex_lock(&s->plock);
	for (;;) {
		while (!s->parser_stop && TAILQ_EMPTY(&s->ptodo))
			pthread_cond_wait(&s->pcond, &s->plock);
		if (s->parser_stop)
			break;
		j = TAILQ_FIRST(&s->ptodo);
		TAILQ_REMOVE(&s->ptodo, j, next);
		pthread_mutex_unlock(&s->plock);
		parse = j->text != NULL;
		if (parse) {
			j->doc = json_loadb(j->text, j->len, 0, &j->err);
			buf_free(j->buf, j->buf_cap, j->buf_mapped);
			j->buf = NULL;
			j->text = NULL;
		} else {
			json_decref(j->doc);
			free(j);
		}
		pthread_mutex_lock(&s->plock);
		if (parse) {
			TAILQ_INSERT_TAIL(&s->pdone, j, next);
			if (write(s->donefd, &one, sizeof(one)) < 0 &&
					errno != EAGAIN)
				RPC_LOG(ERR, "eventfd: %s", strerror(errno));
		}
	}
	pthread_mutex_unlock(&s->plock);
	return NULL;
}

/* Queue a job; trees to free go first, so that they do not pile up
 * behind parses. */
static void
job_queue(struct pa_rpc_server *s, struct parse_job *j)
{
	pthread_mutex_lock(&s->plock);
	if (j->text == NULL)
		TAILQ_INSERT_HEAD(&s->ptodo, j, next);
	else
		TAILQ_INSERT_TAIL(&s->ptodo, j, next);
	pthread_cond_signal(&s->pcond);
	pthread_mutex_unlock(&s->plock);
}

static void
job_free(struct parse_job *j)
{
	if (j->buf != NULL)
		buf_free(j->buf, j->buf_cap, j->buf_mapped);
	json_decref(j->doc);
	free(j);
}

/* Free a request tree; a big one in the parser thread. */
static void
tree_free(struct pa_rpc_server *s, json_t *doc, bool big)
{
	struct parse_job *j;

	if (doc == NULL)
		return;
	if (!big || !s->parser_running) {
		json_decref(doc);
		return;
	}
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		json_decref(doc);
		return;
	}
	j->doc = doc;
	job_queue(s, j);
}

/* Stop the parser thread (after its current job) and free every job. */
static void
parser_stop(struct pa_rpc_server *s)
{
	struct parse_job *j;

	if (s->parser_running) {
		pthread_mutex_lock(&s->plock);
		s->parser_stop = true;
		pthread_cond_signal(&s->pcond);
		pthread_mutex_unlock(&s->plock);
		pthread_join(s->parser, NULL);
		s->parser_running = false;
	}
	while ((j = TAILQ_FIRST(&s->ptodo)) != NULL) {
		TAILQ_REMOVE(&s->ptodo, j, next);
		job_free(j);
	}
	while ((j = TAILQ_FIRST(&s->pdone)) != NULL) {
		TAILQ_REMOVE(&s->pdone, j, next);
		job_free(j);
	}
}

struct pa_rpc_server *
pa_rpc_server_create(const struct pa_rpc_server_opts *o, char *err,
		size_t err_len)
{
	struct pa_rpc_server *s;
	int ret, mode;

	pa_seterr(err, err_len, "%s", "");
	if (o == NULL || o->path == NULL || o->path[0] == '\0') {
		pa_seterr(err, err_len, "no RPC socket path");
		ret = -EINVAL;
		goto out_errno;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		pa_seterr(err, err_len, "out of memory");
		ret = -ENOMEM;
		goto out_errno;
	}
	s->epfd = s->lfd = s->wakefd = s->timerfd = s->lockfd = s->donefd = -1;
	TAILQ_INIT(&s->conns);
	TAILQ_INIT(&s->ptodo);
	TAILQ_INIT(&s->pdone);
	pthread_mutex_init(&s->plock, NULL);
	pthread_cond_init(&s->pcond, NULL);
	s->max_request = o->max_request != 0 ? o->max_request :
		DEFAULT_MAX_REQUEST;
	s->max_conns = o->max_conns != 0 ? o->max_conns : DEFAULT_MAX_CONNS;
	s->max_depth = o->max_depth != 0 ? o->max_depth : DEFAULT_MAX_DEPTH;
	s->idle_timeout_ms = o->idle_timeout_ms != 0 ? o->idle_timeout_ms :
		DEFAULT_IDLE_TIMEOUT_MS;
	limits_set(s);
	mode = o->mode != 0 ? o->mode : DEFAULT_MODE;
	s->set_group = o->set_group;
	s->gid = o->gid;

	s->path = strdup(o->path);
	s->lock_path = str_concat(o->path, ".lock");
	if (s->path == NULL || s->lock_path == NULL) {
		pa_seterr(err, err_len, "out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	if (strlen(s->path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		pa_seterr(err, err_len,
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
	s->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	s->donefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epfd < 0 || s->wakefd < 0 || s->timerfd < 0 || s->donefd < 0) {
		ret = -errno;
		pa_seterr(err, err_len, "epoll/eventfd/timerfd: %s",
			strerror(-ret));
		goto out_unlink;
	}
	ret = ep_add(s->epfd, s->lfd, EPOLLIN, TAG_LISTEN);
	if (ret == 0)
		ret = ep_add(s->epfd, s->wakefd, EPOLLIN, TAG_WAKE);
	if (ret == 0)
		ret = ep_add(s->epfd, s->timerfd, EPOLLIN, TAG_TIMER);
	if (ret == 0)
		ret = ep_add(s->epfd, s->donefd, EPOLLIN, TAG_PARSED);
	if (ret != 0) {
		pa_seterr(err, err_len, "epoll_ctl: %s", strerror(-ret));
		goto out_unlink;
	}
	ret = -pthread_create(&s->parser, NULL, parser_main, s);
	if (ret != 0) {
		pa_seterr(err, err_len, "cannot start the RPC parser thread: %s",
			strerror(-ret));
		goto out_unlink;
	}
	s->parser_running = true;
	RPC_LOG(INFO, "listening on %s", s->path);
	return s;

out_unlink:
	unlink(s->path);
out_unlock:
	unlink(s->lock_path);
out_free:
	if (s->donefd >= 0)
		close(s->donefd);
	if (s->timerfd >= 0)
		close(s->timerfd);
	if (s->wakefd >= 0)
		close(s->wakefd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->lockfd >= 0)
		close(s->lockfd);
	pthread_cond_destroy(&s->pcond);
	pthread_mutex_destroy(&s->plock);
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

/* Input not yet processed: unscanned bytes, a value being parsed or
 * waiting for a slot, a batch's calls. */
static bool
has_input(const struct conn *c)
{
	return c->scan_pos < c->in_len || c->batch != NULL || c->job != NULL ||
		c->held_len != 0;
}

/* Work the server can do for the connection now. */
static bool
has_backlog(const struct pa_rpc_server *s, const struct conn *c)
{
	if (c->dead || c->closing || c->job != NULL ||
			out_pending(c) >= OUT_HIGH)
		return false;
	if (c->held_len != 0)
		return s->big_batches < BIG_BATCH_MAX;
	return has_input(c);
}

static void
slot_release(struct pa_rpc_server *s)
{
	if (s->big_batches > 0)
		s->big_batches--;
}

static void
batch_end(struct pa_rpc_server *s, struct conn *c)
{
	tree_free(s, c->batch, c->batch_big);
	if (c->batch_slot)
		slot_release(s);
	c->batch = NULL;
	c->batch_next = 0;
	c->batch_open = false;
	c->batch_big = false;
	c->batch_slot = false;
}

static void
conn_destroy(struct pa_rpc_server *s, struct conn *c)
{
	TAILQ_REMOVE(&s->conns, c, next);
	s->nconns--;
	/* close() removes the fd from the epoll set */
	close(c->fd);
	if (c->job != NULL)
		c->job->c = NULL;	/* the parser's result is dropped */
	batch_end(s, c);
	if (c->in != NULL)
		buf_free(c->in, c->in_cap, c->in_mapped);
	free(c->out);
	free(c->kinds);
	free(c);
}

/* The capacity that holds @p need bytes, grown from @p cap: doubling
 * (from 4096), but to no more than @p max when @p need fits in it. */
static int
grow_cap(size_t cap, size_t need, size_t max, size_t *ncap)
{
	size_t n = cap != 0 ? cap : 4096;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > max && need <= max)
		n = max;
	*ncap = n;
	return 0;
}

/* Grow @p buf to hold @p need bytes (grow_cap()). */
static int
reserve_max(char **buf, size_t *cap, size_t need, size_t max)
{
	size_t ncap;
	char *p;

	if (need <= *cap)
		return 0;
	if (grow_cap(*cap, need, max, &ncap) != 0)
		return -ENOMEM;
	p = realloc(*buf, ncap);
	if (p == NULL)
		return -ENOMEM;
	*buf = p;
	*cap = ncap;
	return 0;
}

static int
reserve(char **buf, size_t *cap, size_t need)
{
	return reserve_max(buf, cap, need, SIZE_MAX);
}

/* Queue @p lead (if not NUL), @p text, @p tail (if not NUL); a connection
 * that cannot take them is dropped. */
static void
out_put(struct conn *c, char lead, const char *text, size_t len, char tail)
{
	size_t need;

	if (c->dead)
		return;
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
	} else if (c->out_off >= c->out_len - c->out_off) {
		/* move the unsent tail down once as much has been sent */
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	need = c->out_len + len + (lead != '\0') + (tail != '\0');
	if (reserve(&c->out, &c->out_cap, need) != 0) {
		RPC_LOG(ERR, "out of memory queueing a response, dropping client");
		c->dead = true;
		return;
	}
	if (lead != '\0')
		c->out[c->out_len++] = lead;
	memcpy(c->out + c->out_len, text, len);
	c->out_len += len;
	if (tail != '\0')
		c->out[c->out_len++] = tail;
}

/* A response whose result the handler rendered itself
 * (pa_rpc_raw_result()): the envelope by jansson, then the text.
 * @return a string to free(), or NULL. */
static char *
raw_response(const json_t *resp, const char *raw, size_t raw_len)
{
	static const char key[] = ",\"result\":";
	json_t *env = json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id",
		json_object_get(resp, "id"));
	char *head = env != NULL ? json_dumps(env, JSON_COMPACT) : NULL, *txt;
	size_t n;

	json_decref(env);
	if (head == NULL)
		return NULL;
	n = strlen(head) - 1;		/* without its '}' */
	txt = malloc(n + sizeof(key) - 1 + raw_len + 2);
	if (txt != NULL) {
		memcpy(txt, head, n);
		memcpy(txt + n, key, sizeof(key) - 1);
		memcpy(txt + n + sizeof(key) - 1, raw, raw_len);
		memcpy(txt + n + sizeof(key) - 1 + raw_len, "}", 2);
	}
	free(head);
	return txt;
}

/* Queue one response, with @p lead before it and @p tail after it. */
static void
queue_part(struct conn *c, const json_t *resp, char lead, char tail)
{
	static const char oom[] = "{\"jsonrpc\":\"2.0\",\"id\":null,"
		"\"error\":{\"code\":-32603,\"message\":\"internal error: "
		"cannot encode the response\"}}";
	const char *raw;
	size_t raw_len;
	char *txt;

	if (c->dead)
		return;
	raw = pa_rpc_raw_text(json_object_get(resp, "result"), &raw_len);
	txt = raw != NULL ? raw_response(resp, raw, raw_len) :
		json_dumps(resp, JSON_COMPACT);
	if (txt != NULL)
		out_put(c, lead, txt, strlen(txt), tail);
	else
		out_put(c, lead, oom, sizeof(oom) - 1, tail);
	free(txt);
}

/* Queue one response line. */
static void
queue_json(struct conn *c, const json_t *resp)
{
	queue_part(c, resp, '\0', '\n');
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
fail_stream(struct pa_rpc_server *s, struct conn *c)
{
	batch_end(s, c);
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
			c->last_io_ms = pa_clock_ms();
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

/* What one connection may still do in this poll. */
struct budget {
	unsigned int calls;
	uint64_t deadline_ns;
};

static void
budget_init(struct budget *b)
{
	b->calls = REQ_BUDGET;
	b->deadline_ns = pa_clock_ns() + TIME_BUDGET_NS;
}

/* May the connection run one more call (and its output take it)? */
static bool
budget_left(const struct budget *b, const struct conn *c)
{
	return b->calls > 0 && out_pending(c) < OUT_HIGH &&
		pa_clock_ns() < b->deadline_ns;
}

/*
 * Run the calls of the current batch within the budget, streaming the
 * response: '[' before the first answer, ',' between, "]\n" at the end
 * (nothing at all when every call was a notification).
 */
static void
batch_run(struct pa_rpc_server *s, struct conn *c, struct budget *b)
{
	size_t n = json_array_size(c->batch);
	json_t *resp;

	while (c->batch_next < n) {
		if (c->dead || !budget_left(b, c))
			return;
		b->calls--;
		resp = pa_rpc_handle_call(json_array_get(c->batch,
			c->batch_next++), &s->counters);
		if (resp == NULL)
			continue;
		queue_part(c, resp, c->batch_open ? ',' : '[', '\0');
		c->batch_open = true;
		json_decref(resp);
	}
	if (c->batch_open)
		out_put(c, ']', "", 0, '\n');
	batch_end(s, c);
}

/* Dispatch a parsed value (req NULL: @p jerr says why it did not parse);
 * @p slot: it holds a big-batch slot, kept if it is a batch to run. */
static void
value_parsed(struct pa_rpc_server *s, struct conn *c, json_t *req,
		const json_error_t *jerr, bool big, bool slot, struct budget *b)
{
	json_t *resp;

	if (slot && !(json_is_array(req) && json_array_size(req) > 0))
		slot_release(s);
	if (req == NULL) {
		b->calls--;
		queue_error(s, c, PA_RPC_PARSE_ERROR,
			"parse error: %s (line %d, column %d)",
			jerr->text, jerr->line, jerr->column);
		return;
	}
	if (json_is_array(req) && json_array_size(req) > 0) {
		c->batch = req;		/* run by batch_run(), budget allowing */
		c->batch_next = 0;
		c->batch_open = false;
		c->batch_big = big;
		c->batch_slot = slot;
		return;
	}
	b->calls--;
	resp = pa_rpc_handle_count(req, &s->counters);
	tree_free(s, req, big);
	if (resp != NULL) {
		queue_json(c, resp);
		json_decref(resp);
	}
}

/*
 * Hand the value that ends at scan_pos to the parser thread together with
 * the input buffer that holds it; the connection keeps a new buffer with
 * the bytes read after the value (less than a read).
 * @return 0, or -ENOMEM (nothing changed).
 */
static int
value_to_parser(struct pa_rpc_server *s, struct conn *c, const char *buf,
		size_t len, bool slot)
{
	size_t rest = c->in_len - c->scan_pos, cap;
	struct parse_job *j;
	char *nbuf;

	cap = rest > READ_CHUNK ? rest : READ_CHUNK;
	j = calloc(1, sizeof(*j));
	nbuf = malloc(cap);
	if (j == NULL || nbuf == NULL) {
		free(j);
		free(nbuf);
		return -ENOMEM;
	}
	memcpy(nbuf, c->in + c->scan_pos, rest);
	j->buf = c->in;
	j->buf_cap = c->in_cap;
	j->buf_mapped = c->in_mapped;
	j->text = buf;
	j->len = len;
	j->slot = slot;
	if (slot)
		s->big_batches++;
	j->c = c;
	c->in = nbuf;
	c->in_cap = cap;
	c->in_mapped = false;
	c->in_len = rest;
	c->scan_pos = c->start = 0;
	c->job = j;
	job_queue(s, j);
	return 0;
}

/*
 * Parse a complete value (at c->start) here, or hand a long one to the
 * parser thread (the connection then waits for it: see parsed_collect()).
 * A long batch needs one of BIG_BATCH_MAX slots, as its tree lives while
 * its calls run: without one, it waits in the input buffer (held_len).
 */
static void
handle_value(struct pa_rpc_server *s, struct conn *c, const char *buf,
		size_t len, struct budget *b)
{
	json_error_t jerr;
	bool batch = buf[0] == '[';

	if (len > PARSE_INLINE_MAX && s->parser_running) {
		if (batch && s->big_batches >= BIG_BATCH_MAX) {
			c->held_len = len;
			return;
		}
		if (value_to_parser(s, c, buf, len, batch) == 0)
			return;
	}
	value_parsed(s, c, json_loadb(buf, len, 0, &jerr), &jerr, false,
		false, b);
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
 * Finish the current batch, then scan from scan_pos and hand each complete
 * value to the dispatcher, within the budget (which also stops at
 * OUT_HIGH bytes of output).
 */
static void
drain_values(struct pa_rpc_server *s, struct conn *c, struct budget *b)
{
	const size_t max_req = s->max_request;
	size_t pos, end, limit, held;
	char ch;

	for (;;) {
		if (c->job != NULL)
			return;		/* ordering: wait for the parser */
		if (c->held_len != 0) {
			if (s->big_batches >= BIG_BATCH_MAX)
				return;
			held = c->held_len;
			c->held_len = 0;
			handle_value(s, c, c->in + c->start, held, b);
			continue;
		}
		if (c->batch != NULL) {
			batch_run(s, c, b);
			if (c->batch != NULL)
				return;
		}
		if (c->closing || c->dead)
			return;
		if (c->state == SCAN_BETWEEN)
			while (c->scan_pos < c->in_len &&
					is_ws(c->in[c->scan_pos]))
				c->scan_pos++;
		if (c->scan_pos >= c->in_len || !budget_left(b, c))
			return;
		if (c->state == SCAN_BETWEEN) {
			ch = c->in[c->scan_pos];
			if (ch != '{' && ch != '[') {
				queue_error(s, c, PA_RPC_PARSE_ERROR,
					"parse error: expected a request object or a batch array, got '%c'",
					(ch >= 0x20 && ch < 0x7f) ? ch : '?');
				fail_stream(s, c);
				return;
			}
			c->state = SCAN_VALUE;
			c->start = c->scan_pos;
			c->depth = 0;
			c->n_containers = 0;
			c->n_commas = 0;
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
			} else if (ch == ',') {
				if (++c->n_commas > s->max_commas) {
					queue_error(s, c, PA_RPC_INVALID_REQUEST,
						"request too complex (limit %zu values)",
						s->max_commas);
					fail_stream(s, c);
					return;
				}
			} else if (ch == '{' || ch == '[') {
				if (c->depth >= s->max_depth) {
					queue_error(s, c, PA_RPC_PARSE_ERROR,
						"parse error: nesting too deep (limit %u levels)",
						s->max_depth);
					fail_stream(s, c);
					return;
				}
				if (++c->n_containers > s->max_containers) {
					queue_error(s, c, PA_RPC_INVALID_REQUEST,
						"request too complex (limit %zu objects and arrays)",
						s->max_containers);
					fail_stream(s, c);
					return;
				}
				kind_set(c, c->depth++, ch == '{');
			} else if (ch == '}' || ch == ']') {
				if (kind_get(c, --c->depth) != (ch == '}')) {
					queue_error(s, c, PA_RPC_PARSE_ERROR,
						"parse error: mismatched '%c'", ch);
					fail_stream(s, c);
					return;
				}
				if (c->depth == 0)
					break;
			}
		}
		if (pos < end) {	/* complete: [start, pos] */
			c->scan_pos = pos + 1;
			c->state = SCAN_BETWEEN;
			handle_value(s, c, c->in + c->start,
				c->scan_pos - c->start, b);
			continue;
		}
		c->scan_pos = end;
		if (end - c->start >= max_req && end < c->in_len) {
			queue_error(s, c, PA_RPC_INVALID_REQUEST,
				"request too large (limit %zu bytes)", max_req);
			fail_stream(s, c);
			return;
		}
	}
}

/* Grow the input buffer to at least @p need bytes (doubling, to no more
 * than @p max when @p need fits in it); mapped from IN_MAP_MIN on. */
static int
in_reserve(struct conn *c, size_t need, size_t max)
{
	size_t ncap, page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (need <= c->in_cap)
		return 0;
	if (grow_cap(c->in_cap, need, max, &ncap) != 0)
		return -ENOMEM;
	if (ncap < IN_MAP_MIN && !c->in_mapped)
		return reserve_max(&c->in, &c->in_cap, need, ncap);
	ncap = (ncap + page - 1) / page * page;
	if (c->in_mapped) {
		p = mremap(c->in, c->in_cap, ncap, MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			return -ENOMEM;
	} else {
		p = mmap(NULL, ncap, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -ENOMEM;
		if (c->in_len > 0)
			memcpy(p, c->in, c->in_len);
		free(c->in);
	}
	c->in = p;
	c->in_cap = ncap;
	c->in_mapped = true;
	return 0;
}

/* Make room to read: drop consumed bytes, grow for a partial value (to
 * no more than the request limit and two reads). */
static int
make_room(struct conn *c, size_t max_request)
{
	size_t keep_from, max;

	/* A partial value moves at most once: afterwards it starts at 0. */
	keep_from = c->state == SCAN_VALUE || c->held_len != 0 ? c->start :
		c->scan_pos;
	if (keep_from > 0) {
		c->in_len -= keep_from;
		if (c->in_len > 0)
			memmove(c->in, c->in + keep_from, c->in_len);
		c->scan_pos -= keep_from;
		c->start = 0;
	}
	if (c->in_len == 0 && c->in_cap > IN_KEEP) {
		buf_free(c->in, c->in_cap, c->in_mapped);
		c->in = NULL;
		c->in_cap = 0;
		c->in_mapped = false;
	}
	max = max_request < SIZE_MAX - 2 * READ_CHUNK ?
		max_request + 2 * READ_CHUNK : SIZE_MAX;
	return in_reserve(c, c->in_len + READ_CHUNK, max);
}

/* Read, scan and dispatch within this poll's budget. */
static void
conn_serve(struct pa_rpc_server *s, struct conn *c)
{
	struct budget b;
	size_t budget = READ_BUDGET;
	ssize_t n;

	budget_init(&b);
	for (;;) {
		drain_values(s, c, &b);
		if (c->dead || c->closing || c->rd_eof)
			break;
		if (has_input(c))	/* budget or output bound */
			break;
		if (budget == 0 || out_pending(c) >= OUT_HIGH)
			break;
		if (make_room(c, s->max_request) != 0) {
			RPC_LOG(ERR, "out of memory reading a request, dropping client");
			c->dead = true;
			break;
		}
		n = read(c->fd, c->in + c->in_len, READ_CHUNK);
		if (n > 0) {
			c->in_len += (size_t)n;
			c->last_io_ms = pa_clock_ms();
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

	if (!c->dead && c->rd_eof && !has_backlog(s, c) &&
			(c->closing || !has_input(c))) {
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
	if (!c->closing && !c->rd_eof && !has_input(c) &&
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
				if (pa_clock_ms() - s->accept_err_ms >= 1000) {
					s->accept_err_ms = pa_clock_ms();
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
		c->last_io_ms = pa_clock_ms();
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

/* Does the server wait on the client: the rest of a request, or room to
 * write its responses? */
static bool
waits_on_client(const struct pa_rpc_server *s, const struct conn *c)
{
	if (c->dead || c->job != NULL || c->held_len != 0 || has_backlog(s, c))
		return false;
	return out_pending(c) > 0 || (c->state == SCAN_VALUE && !c->closing);
}

static void
timer_arm(struct pa_rpc_server *s, int64_t at_ms)
{
	struct itimerspec its;

	if (at_ms == s->timer_ms)
		return;
	memset(&its, 0, sizeof(its));
	if (at_ms != 0) {
		its.it_value.tv_sec = at_ms / 1000;
		its.it_value.tv_nsec = (at_ms % 1000) * 1000000;
	}
	if (timerfd_settime(s->timerfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		s->timer_ms = at_ms;
}

/* Close the connections idle past the timeout; arm the timer for the next. */
static void
expire_idle(struct pa_rpc_server *s)
{
	struct conn *c, *tmp;
	int64_t now = pa_clock_ms(), next = INT64_MAX, due;
	bool partial;

	TAILQ_FOREACH_SAFE(c, &s->conns, next, tmp) {
		if (!waits_on_client(s, c))
			continue;
		due = c->last_io_ms + (int64_t)s->idle_timeout_ms;
		if (due > now) {
			if (due < next)
				next = due;
			continue;
		}
		s->counters.timed_out_connections++;
		partial = out_pending(c) == 0;
		if ((s->counters.timed_out_connections &
				(s->counters.timed_out_connections - 1)) == 0)
			RPC_LOG(WARNING, "closed an RPC connection idle for %u ms with %s (%"
				PRIu64 " so far)", s->idle_timeout_ms,
				partial ? "a partial request" :
				"unread responses",
				s->counters.timed_out_connections);
		if (partial) {
			/* tell it why; it is not reading much otherwise */
			queue_error(s, c, PA_RPC_INVALID_REQUEST,
				"request incomplete after %u ms idle (idle timeout), closing",
				s->idle_timeout_ms);
			conn_flush(c);
		}
		conn_destroy(s, c);
	}
	timer_arm(s, next == INT64_MAX ? 0 : next);
}

/* Take the parser thread's results and go on with their connections. */
static void
parsed_collect(struct pa_rpc_server *s)
{
	struct job_list done;
	struct parse_job *j;
	struct budget b;
	struct conn *c;
	uint64_t v;

	if (read(s->donefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		RPC_LOG(ERR, "eventfd: %s", strerror(errno));
	TAILQ_INIT(&done);
	pthread_mutex_lock(&s->plock);
	while ((j = TAILQ_FIRST(&s->pdone)) != NULL) {
		TAILQ_REMOVE(&s->pdone, j, next);
		TAILQ_INSERT_TAIL(&done, j, next);
	}
	pthread_mutex_unlock(&s->plock);
	while ((j = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, j, next);
		c = j->c;
		if (c == NULL) {	/* the connection went away */
			if (j->slot)
				slot_release(s);
			tree_free(s, j->doc, true);
			free(j);
			continue;
		}
		c->job = NULL;
		budget_init(&b);
		value_parsed(s, c, j->doc, &j->err, true, j->slot, &b);
		free(j);
		c->poll_gen = s->poll_gen;
		conn_serve(s, c);
		conn_update(s, c);
	}
}

static void
wake_update(struct pa_rpc_server *s)
{
	struct conn *c;
	uint64_t v = 1;
	bool pending = false;

	TAILQ_FOREACH(c, &s->conns, next) {
		if (has_backlog(s, c)) {
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
	bool parsed = false;
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
		if (evs[i].data.ptr == TAG_PARSED) {
			parsed = true;
			continue;
		}
		if (evs[i].data.ptr == TAG_TIMER) {
			uint64_t ticks;

			if (read(s->timerfd, &ticks, sizeof(ticks)) < 0 &&
					errno != EAGAIN)
				RPC_LOG(ERR, "timerfd: %s", strerror(errno));
			s->timer_ms = 0;	/* fired: disarmed */
			continue;
		}
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
	/* After the events: serving a parsed value may close its connection,
	 * which must not have an event still to come in evs[]. */
	if (parsed)
		parsed_collect(s);
	/* Input left over by the budget of an earlier poll. */
	TAILQ_FOREACH_SAFE(c, &s->conns, next, tmp) {
		if (c->poll_gen == s->poll_gen || !has_backlog(s, c))
			continue;
		c->poll_gen = s->poll_gen;
		conn_serve(s, c);
		conn_update(s, c);
	}
	/* Accept last: hang-ups seen in this poll free their slots first. */
	for (i = 0; i < n; i++)
		if (evs[i].data.ptr == TAG_LISTEN && ret == 0)
			ret = accept_conns(s);
	expire_idle(s);
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
	deadline = pa_clock_ms() + (timeout_ms > 0 ? timeout_ms : 0);
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
		left = (int)(deadline - pa_clock_ms());
		if (n == 0 || left <= 0)
			break;
		if (poll(pfd, (nfds_t)n, left) < 0 && errno != EINTR)
			break;
	}
	TAILQ_FOREACH_SAFE(c, &s->conns, next, tmp)
		conn_update(s, c);
	wake_update(s);
}

int
pa_rpc_server_feed(const struct pa_rpc_server_opts *o, const char *buf,
		size_t len, char **out, size_t *out_len,
		struct pa_rpc_counters *counters)
{
	struct pa_rpc_server s;
	struct conn c;
	char *res = NULL;
	size_t res_len = 0, res_cap = 0, n;
	struct budget b;
	int ret = 0;

	if (out != NULL)
		*out = NULL;
	if (out_len != NULL)
		*out_len = 0;
	memset(&s, 0, sizeof(s));
	s.max_request = o != NULL && o->max_request != 0 ? o->max_request :
		DEFAULT_MAX_REQUEST;
	s.max_depth = o != NULL && o->max_depth != 0 ? o->max_depth :
		DEFAULT_MAX_DEPTH;
	limits_set(&s);		/* no parser thread: values parsed here */
	memset(&c, 0, sizeof(c));
	c.fd = -1;
	c.kinds = calloc(s.max_depth / 8 + 1, 1);
	if (c.kinds == NULL)
		return -ENOMEM;
	/* drain_values() only reads the input */
	c.in = (char *)(uintptr_t)buf;
	c.in_len = buf != NULL ? len : 0;
	c.in_cap = c.in_len;

	while (has_input(&c) && !c.closing && !c.dead) {
		budget_init(&b);
		drain_values(&s, &c, &b);
		/* the responses leave at once: no output bound */
		n = out_pending(&c);
		if (n > 0 && out != NULL) {
			if (reserve(&res, &res_cap, res_len + n + 1) != 0) {
				ret = -ENOMEM;
				break;
			}
			memcpy(res + res_len, c.out + c.out_off, n);
			res_len += n;
			res[res_len] = '\0';
		}
		c.out_off = c.out_len = 0;
	}
	if (c.dead && ret == 0)
		ret = -ENOMEM;	/* a response could not be queued */
	batch_end(&s, &c);
	free(c.out);
	free(c.kinds);
	if (counters != NULL) {
		counters->requests += s.counters.requests;
		counters->errors += s.counters.errors;
	}
	if (ret != 0) {
		free(res);
		return ret;
	}
	if (out != NULL)
		*out = res;
	else
		free(res);
	if (out_len != NULL)
		*out_len = res_len;
	return 0;
}

void
pa_rpc_server_destroy(struct pa_rpc_server *s)
{
	struct conn *c;

	if (s == NULL)
		return;
	while ((c = TAILQ_FIRST(&s->conns)) != NULL)
		conn_destroy(s, c);
	parser_stop(s);
	pthread_cond_destroy(&s->pcond);
	pthread_mutex_destroy(&s->plock);
	close(s->lfd);
	unlink(s->path);
	unlink(s->lock_path);
	close(s->lockfd);
	close(s->wakefd);
	close(s->timerfd);
	close(s->donefd);
	close(s->epfd);
	RPC_LOG(DEBUG, "closed %s", s->path);
	free(s->lock_path);
	free(s->path);
	free(s);
}
