/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccelctl: the operator console of pktaccel (CONTRACT section 6).
 *
 *   pktaccelctl [-s SOCKET] [-j] [-t TIMEOUT_S] METHOD [JSON-PARAMS | key=value ...]
 *   pktaccelctl [-s SOCKET] [-j]            (interactive console)
 *
 * Exit status: 0 success, 1 JSON-RPC error, 2 daemon unreachable,
 * 64 bad usage.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <editline/readline.h>
#include <jansson.h>

#ifndef PA_VERSION
#define PA_VERSION "unknown"
#endif

#define DEFAULT_SOCKET		"/run/pktaccel/pktaccel.sock"
#define SOCKET_ENV		"PKTACCEL_SOCKET"
#define DEFAULT_TIMEOUT_S	30.0
#define MAX_TIMEOUT_S		86400.0
#define HISTORY_FILE		".pktaccelctl_history"
#define HISTORY_MAX		1000
#define PROMPT			"pktaccel> "
#define MAX_RESPONSE		(1u << 30)

#define EXIT_OK			0
#define EXIT_RPC_ERROR		1
#define EXIT_UNREACHABLE	2
#define EXIT_USAGE		64

/* ctl_call() outcomes */
#define CALL_OK			0
#define CALL_UNREACHABLE	(-1)	/* message printed */
#define CALL_SEND_FAILED	(-2)	/* nothing answered: may retry */

struct ctl {
	const char *path;
	int timeout_ms;
	bool json_out;
	int fd;			/* -1 when not connected */
	char *buf;		/* bytes received and not yet consumed */
	size_t len;
	size_t cap;
	json_int_t next_id;
};

static const char *progname = "pktaccelctl";

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-s SOCKET] [-j] [-t TIMEOUT_S] METHOD [JSON-PARAMS | key=value ...]\n"
		"       %s [-s SOCKET] [-j] [-t TIMEOUT_S]     (interactive console)\n"
		"\n"
		"Send one JSON-RPC call to pktaccel and print the result.\n"
		"\n"
		"  -s, --socket PATH    RPC socket (default $%s, else %s)\n"
		"  -j, --json           print the raw result as JSON\n"
		"  -t, --timeout SECS   how long to wait for the answer (default %.0f)\n"
		"  -h, --help           this text\n"
		"  -V, --version        print the version\n"
		"\n"
		"Parameters: one JSON object or array ('{\"id\": 10}'), or key=value pairs\n"
		"whose values are JSON when they parse (10, true, null, \"10\") and\n"
		"strings otherwise (src=10.0.0.0/8 action=drop).\n"
		"\n"
		"Without METHOD, reads commands (METHOD [params], help, quit) from the\n"
		"terminal with line editing, history and completion, or line by line\n"
		"from a pipe.\n"
		"\n"
		"Exit status: 0 success, 1 JSON-RPC error, 2 daemon unreachable, 64 usage.\n",
		progname, progname, SOCKET_ENV, DEFAULT_SOCKET, DEFAULT_TIMEOUT_S);
}

/* ---- transport ---- */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
ms_left(int64_t deadline)
{
	int64_t left = deadline - now_ms();

	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

static void
ctl_disconnect(struct ctl *ctl)
{
	if (ctl->fd >= 0)
		close(ctl->fd);
	ctl->fd = -1;
	ctl->len = 0;
}

static int
ctl_connect(struct ctl *ctl)
{
	int64_t deadline = now_ms() + ctl->timeout_ms;
	struct sockaddr_un sa;
	size_t plen;
	int fd, e;

	plen = strlen(ctl->path);
	if (plen >= sizeof(sa.sun_path)) {
		fprintf(stderr, "%s: socket path %s is too long (limit %zu bytes)\n",
			progname, ctl->path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, ctl->path, plen + 1);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "%s: socket: %s\n", progname, strerror(errno));
		return -1;
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
				progname, ctl->path);
		else
			fprintf(stderr, "%s: cannot connect to %s: %s%s\n",
				progname, ctl->path, strerror(e),
				(e == ENOENT || e == ECONNREFUSED) ?
				" (is pktaccel running with this RPC socket?)" :
				e == EACCES ? " (try as root or a member of the socket's group)" :
				"");
		return -1;
	}
	ctl->fd = fd;
	ctl->len = 0;
	return 0;
}

/* Has the daemon closed the idle connection? */
static bool
ctl_peer_closed(struct ctl *ctl)
{
	struct pollfd pfd = { .fd = ctl->fd, .events = POLLIN };
	char b;

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	if (pfd.revents & (POLLHUP | POLLERR))
		return true;
	return recv(ctl->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static int
send_all(struct ctl *ctl, const char *p, size_t len, int64_t deadline)
{
	struct pollfd pfd = { .fd = ctl->fd, .events = POLLOUT };
	ssize_t n;

	while (len > 0) {
		n = send(ctl->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
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
					progname, ctl->path);
				return CALL_UNREACHABLE;
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
			return CALL_OK;
		return CALL_SEND_FAILED;
	}
	return CALL_OK;
}

/* Read one response line; return it parsed or NULL (message printed). */
static json_t *
read_line(struct ctl *ctl, int64_t deadline)
{
	struct pollfd pfd = { .fd = ctl->fd, .events = POLLIN };
	size_t scanned = 0, l;
	json_error_t jerr;
	json_t *v;
	char *nl, *p;
	ssize_t n;
	int rc;

	for (;;) {
		nl = ctl->len > scanned ?
			memchr(ctl->buf + scanned, '\n', ctl->len - scanned) :
			NULL;
		if (nl != NULL) {
			l = (size_t)(nl - ctl->buf);
			v = json_loadb(ctl->buf, l, 0, &jerr);
			memmove(ctl->buf, nl + 1, ctl->len - l - 1);
			ctl->len -= l + 1;
			if (v == NULL)
				fprintf(stderr, "%s: invalid answer from %s: %s\n",
					progname, ctl->path, jerr.text);
			return v;
		}
		scanned = ctl->len;
		if (ctl->cap - ctl->len < 65536) {
			if (ctl->cap >= MAX_RESPONSE) {
				fprintf(stderr, "%s: answer from %s is too large\n",
					progname, ctl->path);
				return NULL;
			}
			p = realloc(ctl->buf, ctl->cap * 2 + 65536);
			if (p == NULL) {
				fprintf(stderr, "%s: out of memory\n", progname);
				return NULL;
			}
			ctl->buf = p;
			ctl->cap = ctl->cap * 2 + 65536;
		}
		rc = poll(&pfd, 1, ms_left(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			fprintf(stderr, "%s: no answer from %s within %.3g s\n",
				progname, ctl->path, ctl->timeout_ms / 1000.0);
			return NULL;
		}
		n = recv(ctl->fd, ctl->buf + ctl->len, ctl->cap - ctl->len,
			MSG_DONTWAIT);
		if (n > 0) {
			ctl->len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		fprintf(stderr, "%s: %s closed the connection without answering%s%s\n",
			progname, ctl->path, n < 0 ? ": " : "",
			n < 0 ? strerror(errno) : "");
		return NULL;
	}
}

/*
 * One call. @p params is stolen. On CALL_OK *resp is the response object
 * (its "id" ours, or null for an error the server could not tie to it).
 */
static int
ctl_call(struct ctl *ctl, const char *method, json_t *params, json_t **resp)
{
	int64_t deadline = now_ms() + ctl->timeout_ms;
	json_int_t id = ++ctl->next_id;
	const json_t *rid;
	char *txt, *line;
	json_t *req;
	size_t len;
	int rc;

	*resp = NULL;
	req = json_pack("{s:s, s:s, s:I}", "jsonrpc", "2.0", "method", method,
		"id", id);
	if (req == NULL || (params != NULL &&
			json_object_set_new(req, "params", params) != 0)) {
		if (req == NULL)
			json_decref(params);
		json_decref(req);
		fprintf(stderr, "%s: cannot build the request (method name not UTF-8?)\n",
			progname);
		return CALL_UNREACHABLE;
	}
	txt = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	len = txt != NULL ? strlen(txt) : 0;
	line = txt != NULL ? realloc(txt, len + 2) : NULL;
	if (line == NULL) {
		free(txt);
		fprintf(stderr, "%s: out of memory\n", progname);
		return CALL_UNREACHABLE;
	}
	line[len] = '\n';
	line[len + 1] = '\0';
	rc = send_all(ctl, line, len + 1, deadline);
	free(line);
	if (rc != CALL_OK)
		return rc;

	for (;;) {
		*resp = read_line(ctl, deadline);
		if (*resp == NULL)
			return CALL_UNREACHABLE;
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
			progname, ctl->path);
		json_decref(*resp);
		*resp = NULL;
		return CALL_UNREACHABLE;
	}
	return CALL_OK;
}

/* Call, connecting first and reconnecting once if the daemon dropped us. */
static int
ctl_call_retry(struct ctl *ctl, const char *method, json_t *params,
		json_t **resp)
{
	int rc;

	if (ctl->fd >= 0 && ctl_peer_closed(ctl))
		ctl_disconnect(ctl);
	if (ctl->fd < 0 && ctl_connect(ctl) != 0) {
		json_decref(params);
		return CALL_UNREACHABLE;
	}
	if (params != NULL)
		json_incref(params);
	rc = ctl_call(ctl, method, params, resp);
	if (rc == CALL_SEND_FAILED) {
		ctl_disconnect(ctl);
		if (ctl_connect(ctl) == 0) {
			if (params != NULL)
				json_incref(params);
			rc = ctl_call(ctl, method, params, resp);
		}
		if (rc == CALL_SEND_FAILED)
			fprintf(stderr, "%s: %s closed the connection before the request was sent\n",
				progname, ctl->path);
	}
	json_decref(params);
	if (rc != CALL_OK) {
		ctl_disconnect(ctl);
		return CALL_UNREACHABLE;
	}
	return CALL_OK;
}

/* ---- parameters ---- */

static bool
starts_json(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '{' || *s == '[';
}

/*
 * argv → params: nothing, one JSON document (several arguments starting
 * with '{' or '[' are joined, for unquoted shell words), or key=value.
 * @return 0, or -1 with a message printed.
 */
static int
build_params(int argc, char *const argv[], json_t **params)
{
	json_error_t jerr;
	size_t total, off, l;
	json_t *obj, *v;
	char *doc, *eq;
	int i;

	*params = NULL;
	if (argc <= 0)
		return 0;
	if (starts_json(argv[0])) {
		for (i = 0, total = 1; i < argc; i++)
			total += strlen(argv[i]) + 1;
		doc = malloc(total);
		if (doc == NULL)
			return -1;
		for (i = 0, off = 0; i < argc; i++) {
			l = strlen(argv[i]);
			memcpy(doc + off, argv[i], l);
			off += l;
			doc[off++] = i + 1 < argc ? ' ' : '\0';
		}
		*params = json_loads(doc, 0, &jerr);
		free(doc);
		if (*params == NULL) {
			fprintf(stderr, "%s: invalid JSON params: %s (column %d)\n",
				progname, jerr.text, jerr.column);
			return -1;
		}
		return 0;
	}

	obj = json_object();
	if (obj == NULL)
		return -1;
	for (i = 0; i < argc; i++) {
		eq = strchr(argv[i], '=');
		if (eq == NULL || eq == argv[i]) {
			fprintf(stderr, "%s: parameter '%s' is not key=value (or give one JSON object)\n",
				progname, argv[i]);
			goto out_err;
		}
		v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
		if (v == NULL)
			v = json_string(eq + 1);
		if (v == NULL) {
			fprintf(stderr, "%s: parameter '%s' is not valid UTF-8\n",
				progname, argv[i]);
			goto out_err;
		}
		if (json_object_setn_new(obj, argv[i], (size_t)(eq - argv[i]),
				v) != 0) {
			fprintf(stderr, "%s: bad parameter name in '%s'\n",
				progname, argv[i]);
			goto out_err;
		}
	}
	*params = obj;
	return 0;
out_err:
	json_decref(obj);
	return -1;
}

/* ---- output ---- */

/* Text of a value in a table cell or after "key: ". */
static char *
value_text(const json_t *v)
{
	char num[64];

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strdup(json_string_value(v));
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			json_integer_value(v));
		return strdup(num);
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.10g", json_real_value(v));
		return strdup(num);
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	case JSON_NULL:
		return strdup("-");
	default:
		return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

/* Display width: code points (wide characters count as one). */
static size_t
text_width(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void
print_padded(const char *s, size_t width, bool right, bool last)
{
	size_t w = text_width(s), pad = width > w ? width - w : 0;

	if (right)
		printf("%*s%s", (int)pad, "", s);
	else if (last)
		fputs(s, stdout);
	else
		printf("%s%*s", s, (int)pad, "");
}

static bool
all_objects(const json_t *arr)
{
	size_t i;
	json_t *v;

	if (json_array_size(arr) == 0)
		return false;
	json_array_foreach(arr, i, v)
		if (!json_is_object(v))
			return false;
	return true;
}

static bool
all_scalars(const json_t *arr)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_object(v) || json_is_array(v))
			return false;
	return true;
}

/* Array of objects → aligned table; columns in first-seen key order. */
static void
print_table(const json_t *arr, int indent)
{
	size_t ncols = 0, nrows = json_array_size(arr), i, c, last;
	const char **cols = NULL;
	size_t *width = NULL;
	bool *numeric = NULL;
	char **cell = NULL;
	json_t *seen, *row, *v;
	const char *key;

	seen = json_object();
	if (seen == NULL)
		return;
	json_array_foreach(arr, i, row) {
		json_object_foreach(row, key, v) {
			if (json_object_get(seen, key) == NULL) {
				json_object_set_new(seen, key, json_integer(
					(json_int_t)json_object_size(seen)));
				ncols++;
			}
		}
	}
	cols = calloc(ncols + 1, sizeof(*cols));
	width = calloc(ncols + 1, sizeof(*width));
	numeric = calloc(ncols + 1, sizeof(*numeric));
	cell = calloc(ncols * nrows + 1, sizeof(*cell));
	if (cols == NULL || width == NULL || numeric == NULL || cell == NULL)
		goto out_free;
	json_object_foreach(seen, key, v) {
		c = (size_t)json_integer_value(v);
		cols[c] = key;
		width[c] = text_width(key);
		numeric[c] = true;
	}
	json_array_foreach(arr, i, row) {
		for (c = 0; c < ncols; c++) {
			v = json_object_get(row, cols[c]);
			cell[i * ncols + c] = v != NULL ? value_text(v) :
				strdup("");
			if (cell[i * ncols + c] == NULL)
				goto out_free;
			if (v != NULL && !json_is_number(v))
				numeric[c] = false;
			if (text_width(cell[i * ncols + c]) > width[c])
				width[c] = text_width(cell[i * ncols + c]);
		}
	}

	printf("%*s", indent, "");
	for (c = 0; c < ncols; c++) {
		print_padded(cols[c], width[c], numeric[c], c + 1 == ncols);
		if (c + 1 < ncols)
			fputs("  ", stdout);
	}
	putchar('\n');
	for (i = 0; i < nrows; i++) {
		/* no trailing blanks: stop after the last non-empty cell */
		last = 0;
		for (c = 0; c < ncols; c++)
			if (cell[i * ncols + c][0] != '\0')
				last = c;
		printf("%*s", indent, "");
		for (c = 0; c <= last; c++) {
			v = json_object_get(json_array_get(arr, i), cols[c]);
			print_padded(cell[i * ncols + c], width[c],
				v != NULL && json_is_number(v), c == last);
			if (c < last)
				fputs("  ", stdout);
		}
		putchar('\n');
	}
out_free:
	if (cell != NULL)
		for (i = 0; i < ncols * nrows; i++)
			free(cell[i]);
	free(cell);
	free(numeric);
	free(width);
	free(cols);
	json_decref(seen);
}

static void print_object(const json_t *obj, int indent);

/* "key: value" for one member; nested objects and tables indented. */
static void
print_member(const char *key, const json_t *v, int indent)
{
	size_t i;
	json_t *e;
	char *t;

	if (json_is_object(v) && json_object_size(v) > 0) {
		printf("%*s%s:\n", indent, "", key);
		print_object(v, indent + 2);
		return;
	}
	if (all_objects(v)) {
		printf("%*s%s:\n", indent, "", key);
		print_table(v, indent + 2);
		return;
	}
	printf("%*s%s: ", indent, "", key);
	if (json_is_array(v) && json_array_size(v) > 0 && all_scalars(v)) {
		json_array_foreach(v, i, e) {
			t = value_text(e);
			printf("%s%s", i > 0 ? ", " : "", t != NULL ? t : "?");
			free(t);
		}
		putchar('\n');
		return;
	}
	t = value_text(v);
	printf("%s\n", t != NULL ? t : "?");
	free(t);
}

static void
print_object(const json_t *obj, int indent)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v)
		print_member(key, v, indent);
}

/* ---- per-method formatters ---- */

/*
 * A formatter turns a method's result into what the generic printer shows
 * (a new reference), or returns NULL to leave the result as it is (an
 * answer of another shape, e.g. from a newer daemon). -j never uses them.
 */

/* Port field of a rule: "any", "N", "LO-HI" (a string, or an integer). */
static void
ports_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else
		snprintf(buf, len, "any");
}

/*
 * One side of a rule's match: "any" when both address and ports are any,
 * else ADDR:PORTS with "any" for the part that is. Host prefixes (/32,
 * /128) lose their length; an IPv6 address before a port is bracketed.
 */
static void
endpoint_text(const json_t *addr, const json_t *ports, char *buf, size_t len)
{
	const char *a = json_is_string(addr) ? json_string_value(addr) : "any";
	bool v6 = strchr(a, ':') != NULL;
	const char *host = v6 ? "/128" : "/32";
	size_t alen = strlen(a), hlen = strlen(host);
	char p[32];

	ports_text(ports, p, sizeof(p));
	if (alen > hlen && strcmp(a + alen - hlen, host) == 0)
		alen -= hlen;
	if (strcmp(a, "any") == 0 && strcmp(p, "any") == 0)
		snprintf(buf, len, "any");
	else if (v6)
		snprintf(buf, len, "[%.*s]:%s", (int)alen, a, p);
	else
		snprintf(buf, len, "%.*s:%s", (int)alen, a, p);
}

/* "udp 10.0.0.0/8:any -> any:53 in wan0": what an ACL rule matches,
 * leaving out what is "any". */
static json_t *
acl_match_text(const json_t *rule)
{
	const json_t *proto = json_object_get(rule, "proto");
	const json_t *in = json_object_get(rule, "in_port");
	char src[96], dst[96], pr[24], buf[320];

	endpoint_text(json_object_get(rule, "src"),
		json_object_get(rule, "sport"), src, sizeof(src));
	endpoint_text(json_object_get(rule, "dst"),
		json_object_get(rule, "dport"), dst, sizeof(dst));
	pr[0] = '\0';
	if (json_is_integer(proto))
		snprintf(pr, sizeof(pr), "proto %" JSON_INTEGER_FORMAT " ",
			json_integer_value(proto));
	else if (json_is_string(proto) &&
			strcmp(json_string_value(proto), "any") != 0)
		snprintf(pr, sizeof(pr), "%s ", json_string_value(proto));
	snprintf(buf, sizeof(buf), "%s%s -> %s%s%s", pr, src, dst,
		json_is_string(in) ? " in " : "",
		json_is_string(in) ? json_string_value(in) : "");
	return json_string(buf);
}

/* "drop", "mark dscp 46", "police 1000pps/100". */
static json_t *
acl_action_text(const json_t *rule)
{
	const json_t *a = json_object_get(rule, "action");
	const char *name = json_is_string(a) ? json_string_value(a) : "?";
	char buf[96];

	if (strcmp(name, "mark") == 0)
		snprintf(buf, sizeof(buf), "mark dscp %" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(rule, "dscp")));
	else if (strcmp(name, "police") == 0)
		snprintf(buf, sizeof(buf), "police %" JSON_INTEGER_FORMAT
			"pps/%" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(rule, "rate_pps")),
			json_integer_value(json_object_get(rule, "burst")));
	else
		snprintf(buf, sizeof(buf), "%s", name);
	return json_string(buf);
}

/* acl_rule_list: id, priority, match, action, hits, bytes. */
static json_t *
format_acl_rule_list(const json_t *r)
{
	static const char *const nums[] = { "hits", "bytes" };
	json_t *out, *row, *rule;
	size_t i, k;

	if (!all_objects(r))
		return NULL;
	out = json_array();
	if (out == NULL)
		return NULL;
	json_array_foreach(r, i, rule) {
		row = json_object();
		if (row == NULL || json_array_append_new(out, row) != 0)
			goto fail;
		if (json_object_set(row, "id", json_object_get(rule, "id")) != 0 ||
		    json_object_set(row, "priority",
				json_object_get(rule, "priority")) != 0 ||
		    json_object_set_new(row, "match", acl_match_text(rule)) != 0 ||
		    json_object_set_new(row, "action", acl_action_text(rule)) != 0)
			goto fail;
		for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
			if (json_object_get(rule, nums[k]) != NULL &&
			    json_object_set(row, nums[k],
					json_object_get(rule, nums[k])) != 0)
				goto fail;
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

/* Copy the members @p keys of @p from that it has into @p to. */
static int
copy_keys(json_t *to, const json_t *from, const char *const *keys)
{
	const json_t *v;

	for (; *keys != NULL; keys++) {
		v = json_object_get(from, *keys);
		if (v != NULL && json_object_set(to, *keys, (json_t *)v) != 0)
			return -1;
	}
	return 0;
}

/* "192.0.2.10:80 tcp", "[2001:db8::10]:443 tcp": a service's address. */
static void
service_addr_text(const json_t *svc, char *buf, size_t len)
{
	const json_t *vip = json_object_get(svc, "vip");
	const json_t *port = json_object_get(svc, "port");
	const json_t *proto = json_object_get(svc, "proto");
	const char *a = json_is_string(vip) ? json_string_value(vip) : "?";
	const char *pr = json_is_string(proto) ? json_string_value(proto) : "?";
	char p[32];

	ports_text(port, p, sizeof(p));
	if (strchr(a, ':') != NULL)
		snprintf(buf, len, "[%s]:%s %s", a, p, pr);
	else
		snprintf(buf, len, "%s:%s %s", a, p, pr);
}

/* A service's backends as table rows: addr, port, weight, state, mac
 * (only when one of them has a MAC), flows, packets, bytes. */
static json_t *
lb_backend_rows(const json_t *bes)
{
	static const char *const head[] = {
		"addr", "port", "weight", "state", NULL
	};
	static const char *const tail[] = {
		"flows", "packets", "bytes", NULL
	};
	json_t *out, *row, *be;
	bool macs = false;
	size_t i;

	json_array_foreach(bes, i, be)
		if (json_object_get(be, "mac") != NULL)
			macs = true;
	out = json_array();
	if (out == NULL)
		return NULL;
	json_array_foreach(bes, i, be) {
		row = json_object();
		if (row == NULL || json_array_append_new(out, row) != 0 ||
		    copy_keys(row, be, head) != 0 ||
		    (macs && json_object_set_new(row, "mac",
				json_object_get(be, "mac") != NULL ?
				json_incref(json_object_get(be, "mac")) :
				json_null()) != 0) ||
		    copy_keys(row, be, tail) != 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/*
 * lb_service_list: a table of the services (name, vip, port, proto,
 * scheduler, forward, backends, usable, flows), then for each service the
 * table of its backends. @return false (nothing printed) for a result of
 * another shape, which the generic printer then shows.
 */
static bool
print_lb_service_list(const json_t *r)
{
	static const char *const head[] = {
		"name", "vip", "port", "proto", "scheduler", "forward", NULL
	};
	json_t *rows, *row, *svc, *bes;
	char where[128];
	const json_t *n;
	size_t i;

	if (!all_objects(r))
		return false;
	json_array_foreach(r, i, svc)
		if (!json_is_string(json_object_get(svc, "name")) ||
		    !json_is_array(json_object_get(svc, "backends")))
			return false;
	rows = json_array();
	if (rows == NULL)
		return false;
	json_array_foreach(r, i, svc) {
		row = json_object();
		if (row == NULL || json_array_append_new(rows, row) != 0 ||
		    copy_keys(row, svc, head) != 0 ||
		    json_object_set_new(row, "backends", json_integer(
				(json_int_t)json_array_size(json_object_get(svc,
					"backends")))) != 0) {
			json_decref(rows);
			return false;
		}
		n = json_object_get(svc, "usable_backends");
		if (n != NULL)
			json_object_set(row, "usable", (json_t *)n);
		n = json_object_get(svc, "flows");
		if (n != NULL)
			json_object_set(row, "flows", (json_t *)n);
	}
	print_table(rows, 0);
	json_decref(rows);
	json_array_foreach(r, i, svc) {
		service_addr_text(svc, where, sizeof(where));
		printf("\nbackends of %s (%s):\n",
			json_string_value(json_object_get(svc, "name")), where);
		bes = json_object_get(svc, "backends");
		if (json_array_size(bes) == 0 || !all_objects(bes)) {
			printf("  (none)\n");
			continue;
		}
		rows = lb_backend_rows(bes);
		if (rows == NULL)
			continue;
		print_table(rows, 2);
		json_decref(rows);
	}
	return true;
}

/*
 * Per-method output: either a formatter (result → what the generic
 * printer shows) or a printer of its own (true: printed).
 */
static const struct {
	const char *method;
	json_t *(*format)(const json_t *result);
	bool (*print)(const json_t *result);
} formatters[] = {
	{ "acl_rule_list", format_acl_rule_list, NULL },
	{ "lb_service_list", NULL, print_lb_service_list },
};

/* The method's entry in formatters[], or -1. */
static int
find_formatter(const char *method)
{
	size_t i;

	if (method == NULL)
		return -1;
	for (i = 0; i < sizeof(formatters) / sizeof(formatters[0]); i++)
		if (strcmp(formatters[i].method, method) == 0)
			return (int)i;
	return -1;
}

/* The result as the method's formatter shows it (new reference), or NULL. */
static json_t *
format_result(const char *method, const json_t *r)
{
	int i = find_formatter(method);

	if (i < 0 || formatters[i].format == NULL)
		return NULL;
	return formatters[i].format(r);
}

/* Print the result with the method's own printer; false: it has none,
 * or the result is not of the shape it knows. */
static bool
print_special(const char *method, const json_t *r)
{
	int i = find_formatter(method);

	return i >= 0 && formatters[i].print != NULL && formatters[i].print(r);
}

static void
print_result(const struct ctl *ctl, const char *method, const json_t *r)
{
	json_t *shown = NULL;
	size_t i;
	json_t *e;
	char *t;

	if (ctl->json_out) {
		t = json_dumps(r, JSON_INDENT(2) | JSON_ENCODE_ANY);
		if (t != NULL)
			printf("%s\n", t);
		free(t);
		return;
	}
	if (print_special(method, r))
		return;
	shown = format_result(method, r);
	if (shown != NULL)
		r = shown;
	if (json_is_true(r)) {
		printf("ok\n");
	} else if (json_is_object(r)) {
		if (json_object_size(r) == 0)
			printf("{}\n");
		print_object(r, 0);
	} else if (json_is_array(r)) {
		if (json_array_size(r) == 0)
			printf("(empty)\n");
		else if (all_objects(r))
			print_table(r, 0);
		else
			json_array_foreach(r, i, e) {
				t = value_text(e);
				printf("%s\n", t != NULL ? t : "?");
				free(t);
			}
	} else {
		t = value_text(r);
		printf("%s\n", json_is_null(r) ? "null" : t != NULL ? t : "?");
		free(t);
	}
	json_decref(shown);
}

/* Print the response of @p method (NULL: no formatter); return the exit
 * status it means. */
static int
report(const struct ctl *ctl, const char *method, const json_t *resp)
{
	const json_t *err = json_object_get(resp, "error"), *data;
	const char *msg;
	char *t;

	if (err == NULL) {
		print_result(ctl, method, json_object_get(resp, "result"));
		fflush(stdout);
		return EXIT_OK;
	}
	msg = json_string_value(json_object_get(err, "message"));
	fflush(stdout);
	fprintf(stderr, "error %" JSON_INTEGER_FORMAT ": %s\n",
		json_integer_value(json_object_get(err, "code")),
		msg != NULL ? msg : "(no message)");
	data = json_object_get(err, "data");
	if (data != NULL) {
		t = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
		if (t != NULL)
			fprintf(stderr, "  data: %s\n", t);
		free(t);
	}
	return EXIT_RPC_ERROR;
}

/* Run METHOD with its arguments; return the exit status. */
static int
run_command(struct ctl *ctl, const char *method, int argc, char *const argv[])
{
	json_t *params, *resp;
	int status;

	if (build_params(argc, argv, &params) != 0)
		return EXIT_USAGE;
	if (ctl_call_retry(ctl, method, params, &resp) != CALL_OK)
		return EXIT_UNREACHABLE;
	status = report(ctl, method, resp);
	json_decref(resp);
	return status;
}

/* ---- console ---- */

static char **method_names;	/* NULL-terminated, for completion */
static const char *const builtins[] = { "help", "quit", "exit", NULL };

static void
free_names(void)
{
	size_t i;

	if (method_names == NULL)
		return;
	for (i = 0; method_names[i] != NULL; i++)
		free(method_names[i]);
	free(method_names);
	method_names = NULL;
}

/* Fetch the method names once; NULL-terminated array or NULL. */
static json_t *
fetch_methods(struct ctl *ctl)
{
	json_t *resp, *list;

	if (ctl_call_retry(ctl, "rpc_get_methods", NULL, &resp) != CALL_OK)
		return NULL;
	list = json_object_get(resp, "result");
	if (!json_is_array(list)) {
		report(ctl, NULL, resp);
		json_decref(resp);
		return NULL;
	}
	json_incref(list);
	json_decref(resp);
	return list;
}

static void
load_names(struct ctl *ctl)
{
	json_t *list, *v;
	size_t i, n = 0;

	list = fetch_methods(ctl);
	if (list == NULL)
		return;
	method_names = calloc(json_array_size(list) + 1, sizeof(char *));
	if (method_names != NULL)
		json_array_foreach(list, i, v)
			if (json_is_string(v))
				method_names[n++] = strdup(json_string_value(v));
	json_decref(list);
}

static char *
complete_name(const char *text, int state)
{
	static size_t mi, bi;
	size_t len = strlen(text);
	const char *n;

	if (state == 0)
		mi = bi = 0;
	while (method_names != NULL && method_names[mi] != NULL) {
		n = method_names[mi++];
		if (n != NULL && strncmp(n, text, len) == 0)
			return strdup(n);
	}
	while (builtins[bi] != NULL) {
		n = builtins[bi++];
		if (strncmp(n, text, len) == 0)
			return strdup(n);
	}
	return NULL;
}

static char **
complete(const char *text, int start, int end)
{
	int i;

	(void)end;
	rl_attempted_completion_over = 1;	/* never file names */
	for (i = 0; i < start; i++)
		if (!isspace((unsigned char)rl_line_buffer[i]))
			return NULL;
	return rl_completion_matches(text, complete_name);
}

/*
 * Split a console line into words: whitespace separates, '...' and "..."
 * quote (backslash escapes inside "..." and outside quotes), and a word
 * after the method that starts with '{' or '[' takes the rest of the line.
 * @return number of words (>= 0) in *argv_out (free with free_words), or
 *         -1 with a message printed.
 */
static int
split_words(const char *line, char ***argv_out)
{
	size_t len = strlen(line), o;
	char **argv, *buf, *w;
	const char *p = line, *end;
	int argc = 0;
	char q;

	*argv_out = NULL;
	argv = calloc(len / 2 + 2, sizeof(*argv));
	buf = malloc(len + 1);
	if (argv == NULL || buf == NULL)
		goto out_err;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		if (argc > 0 && (*p == '{' || *p == '[')) {
			end = line + len;
			while (end > p && isspace((unsigned char)end[-1]))
				end--;
			w = strndup(p, (size_t)(end - p));
			if (w == NULL)
				goto out_err;
			argv[argc++] = w;
			break;
		}
		o = 0;
		q = '\0';
		while (*p != '\0' && (q != '\0' || !isspace((unsigned char)*p))) {
			if (q == '\0' && (*p == '\'' || *p == '"')) {
				q = *p++;
				continue;
			}
			if (q != '\0' && *p == q) {
				q = '\0';
				p++;
				continue;
			}
			if (*p == '\\' && q != '\'' && p[1] != '\0') {
				buf[o++] = p[1];
				p += 2;
				continue;
			}
			buf[o++] = *p++;
		}
		if (q != '\0') {
			fprintf(stderr, "%s: unterminated %c quote\n", progname, q);
			goto out_err;
		}
		w = strndup(buf, o);
		if (w == NULL)
			goto out_err;
		argv[argc++] = w;
	}
	free(buf);
	*argv_out = argv;
	return argc;
out_err:
	if (argv != NULL)
		while (argc > 0)
			free(argv[--argc]);
	free(argv);
	free(buf);
	return -1;
}

static void
free_words(char **argv, int argc)
{
	while (argc > 0)
		free(argv[--argc]);
	free(argv);
}

static int
console_help(struct ctl *ctl)
{
	json_t *list, *v;
	size_t i;

	list = fetch_methods(ctl);
	if (list == NULL)
		return EXIT_UNREACHABLE;
	printf("Methods:\n");
	json_array_foreach(list, i, v)
		printf("  %s\n", json_string_value(v));
	printf("Type METHOD [JSON-PARAMS | key=value ...], or quit.\n");
	fflush(stdout);
	json_decref(list);
	return EXIT_OK;
}

/*
 * One console line. @return the command's exit status, or -1 for quit.
 * @p status is the previous status (kept for blank lines).
 */
static int
console_line(struct ctl *ctl, const char *line, int status)
{
	char **argv;
	int argc, rc;

	argc = split_words(line, &argv);
	if (argc < 0)
		return EXIT_USAGE;
	if (argc == 0 || argv[0][0] == '#') {
		rc = status;
	} else if (strcmp(argv[0], "quit") == 0 ||
			strcmp(argv[0], "exit") == 0) {
		rc = -1;
	} else if (strcmp(argv[0], "help") == 0 ||
			strcmp(argv[0], "?") == 0) {
		rc = console_help(ctl);
	} else {
		rc = run_command(ctl, argv[0], argc - 1, argv + 1);
	}
	free_words(argv, argc);
	return rc;
}

static char *
history_path(void)
{
	const char *home = getenv("HOME");
	size_t len;
	char *p;

	if (home == NULL || home[0] == '\0')
		return NULL;
	len = strlen(home) + sizeof(HISTORY_FILE) + 1;
	p = malloc(len);
	if (p != NULL)
		snprintf(p, len, "%s/%s", home, HISTORY_FILE);
	return p;
}

static int
console_tty(struct ctl *ctl)
{
	char *hist, *line;
	int status = EXIT_OK, rc;

	rl_readline_name = "pktaccelctl";
	rl_attempted_completion_function = complete;
	using_history();
	stifle_history(HISTORY_MAX);
	hist = history_path();
	if (hist != NULL)
		read_history(hist);	/* a missing file is fine */

	load_names(ctl);
	printf("pktaccelctl %s: connected to %s. Type help, or quit.\n",
		PA_VERSION, ctl->path);
	while ((line = readline(PROMPT)) != NULL) {
		if (line[strspn(line, " \t")] != '\0')
			add_history(line);
		rc = console_line(ctl, line, status);
		free(line);
		if (rc < 0)
			break;
		status = rc;
	}
	if (line == NULL)
		putchar('\n');
	if (hist != NULL)
		write_history(hist);	/* failures are not worth a word */
	free(hist);
	free_names();
	return status;
}

static int
console_pipe(struct ctl *ctl)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int status = EXIT_OK, rc;

	while ((n = getline(&line, &cap, stdin)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		rc = console_line(ctl, line, status);
		if (rc < 0)
			break;
		status = rc;
	}
	free(line);
	return status;
}

/* ---- main ---- */

static int
parse_timeout(const char *s, int *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) ||
			v <= 0 || v > MAX_TIMEOUT_S)
		return -1;
	*ms = (int)(v * 1000.0);
	if (*ms == 0)
		*ms = 1;
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl ctl = { .fd = -1 };
	const char *env;
	int opt, status;

	signal(SIGPIPE, SIG_IGN);
	env = getenv(SOCKET_ENV);
	ctl.path = env != NULL && env[0] != '\0' ? env : DEFAULT_SOCKET;
	ctl.timeout_ms = (int)(DEFAULT_TIMEOUT_S * 1000);

	/* '+': stop at METHOD, so its arguments are never taken as options */
	while ((opt = getopt_long(argc, argv, "+s:jt:hV", longopts,
			NULL)) != -1) {
		switch (opt) {
		case 's':
			ctl.path = optarg;
			break;
		case 'j':
			ctl.json_out = true;
			break;
		case 't':
			if (parse_timeout(optarg, &ctl.timeout_ms) != 0) {
				fprintf(stderr, "%s: bad timeout '%s' (seconds, 0 < T <= %.0f)\n",
					progname, optarg, MAX_TIMEOUT_S);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("pktaccelctl %s\n", PA_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (ctl.path[0] == '\0') {
		fprintf(stderr, "%s: empty socket path\n", progname);
		return EXIT_USAGE;
	}

	if (optind < argc)
		status = run_command(&ctl, argv[optind], argc - optind - 1,
			argv + optind + 1);
	else if (isatty(STDIN_FILENO))
		status = console_tty(&ctl);
	else
		status = console_pipe(&ctl);

	ctl_disconnect(&ctl);
	free(ctl.buf);
	return status;
}
