/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_RPC_H
#define PA_RPC_H

/**
 * @file
 * JSON-RPC 2.0 server over a Unix stream socket (CONTRACT section 5).
 *
 * Framing: the client writes requests (objects, or batch arrays); any
 * whitespace may separate them. The server answers each with one line
 * (the response followed by '\n'). Notifications get no answer.
 *
 * Methods are registered in a global table, usually from a library's own
 * <lib>_rpc.c with PA_RPC_REGISTER(). Handlers run on the control thread
 * that calls pa_rpc_server_poll(), one at a time; they may block briefly
 * (e.g. waiting for RCU quiescence) but must not wait on the network.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Standard JSON-RPC 2.0 error codes. */
#define PA_RPC_PARSE_ERROR	(-32700)
#define PA_RPC_INVALID_REQUEST	(-32600)
#define PA_RPC_METHOD_NOT_FOUND	(-32601)
#define PA_RPC_INVALID_PARAMS	(-32602)
#define PA_RPC_INTERNAL_ERROR	(-32603)
/* Application errors (JSON-RPC's server-error range). */
#define PA_RPC_ERR_EXISTS	(-32000)	/**< object already exists */
#define PA_RPC_ERR_NOT_FOUND	(-32001)	/**< object does not exist */
#define PA_RPC_ERR_BUSY		(-32002)	/**< try again */

#define PA_RPC_MSG_MAX		256

/** Error a handler reports (code 0 = no error). */
struct pa_rpc_error {
	int code;
	char message[PA_RPC_MSG_MAX];
	json_t *data;			/**< optional, owned reference */
};

/**
 * A method handler.
 * @param params  the "params" member, or NULL when absent (borrowed)
 * @param result  on success, set to a new reference (never NULL)
 * @param err     on failure, filled by pa_rpc_error_set()
 * @return 0 on success, -1 on failure (err filled)
 */
typedef int (*pa_rpc_handler_t)(const json_t *params, json_t **result,
		struct pa_rpc_error *err);

struct pa_rpc_method {
	const char *name;
	pa_rpc_handler_t handler;
	const char *help;		/**< one line, for the console */
	struct pa_rpc_method *next;
};

/** Add a method to the global table (constructor time or later). */
void pa_rpc_register(struct pa_rpc_method *m);

/** Register @p fn as method @p name at load time. */
#define PA_RPC_REGISTER(name, fn, help_text)				\
	static struct pa_rpc_method pa_rpc_method_##fn = {		\
		(name), (fn), (help_text), NULL };			\
	static void __attribute__((constructor))			\
	pa_rpc_register_##fn(void)					\
	{								\
		pa_rpc_register(&pa_rpc_method_##fn);			\
	}

/** Find a method. */
const struct pa_rpc_method *pa_rpc_find(const char *name);

/** Sorted array of method names (new reference). */
json_t *pa_rpc_method_names(void);

/** Fill @p err (printf-style message). @return -1 for "return pa_rpc_error_set(...)". */
int pa_rpc_error_set(struct pa_rpc_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * Check that a method got no parameters (absent, null, [] or {}).
 * @return 0, or -1 with err filled (-32602).
 */
int pa_rpc_no_params(const json_t *params, struct pa_rpc_error *err);

struct pa_rpc_counters;

/**
 * Process one decoded request or batch (transport independent; used by the
 * server, by tests and by fuzzers).
 * @return the response (object or array, new reference), or NULL when no
 *         response is due (notification, all-notification batch).
 */
json_t *pa_rpc_handle(const json_t *request);

/**
 * Same as pa_rpc_handle(), and add to @p c: "requests" counts every call
 * (each batch element, notifications included), "errors" every call that
 * failed (invalid request, unknown method, handler error), answered or not.
 * The connection counters of @p c are not touched.
 */
json_t *pa_rpc_handle_count(const json_t *request, struct pa_rpc_counters *c);

/** Log type "pa.rpc" (rte_log), for the RPC library and its methods. */
extern int pa_rpc_logtype;

/**
 * Server limits and location; 0 in a field means its default.
 * A request (or batch) longer than max_request gets -32600 and the
 * connection is closed; so does one nested deeper than max_depth (-32700,
 * the request object itself is level 1). Connections beyond max_conns are
 * accepted and closed at once. A connection whose unread responses exceed
 * 4 MiB is not read from until its client catches up.
 */
struct pa_rpc_server_opts {
	const char *path;		/**< socket path (< 108 bytes) */
	size_t max_request;		/**< bytes of one request; default 32 MiB
					 * (a 100k-rule acl_rules_replace is ~12 MB) */
	unsigned int max_conns;		/**< default 64 */
	unsigned int max_depth;		/**< JSON nesting limit; default 64 */
	int mode;			/**< socket mode; default 0660 */
};

/**
 * The server is not thread-safe: create, poll, flush and destroy it from
 * one thread (the control thread). Method handlers run in that thread.
 */
struct pa_rpc_server;

/**
 * Create the server: make the socket's directory (0750) if missing, take
 * the lock file "<path>.lock" (flock; held for the server's life), replace a
 * stale socket, bind, chmod, listen.
 * @return NULL with rte_errno / errno set and a reason in @p err:
 *         EADDRINUSE when another live daemon holds the socket.
 */
struct pa_rpc_server *pa_rpc_server_create(const struct pa_rpc_server_opts *o,
		char *err, size_t err_len);

/**
 * File descriptor to wait on (an epoll fd), readable when work is pending:
 * a connection to accept, input to read or to process, output that can be
 * written. Owned by the server.
 */
int pa_rpc_server_fd(const struct pa_rpc_server *s);

/**
 * Serve: wait up to @p timeout_ms (0 = do not wait, -1 = forever) for
 * activity, then accept, read, dispatch and write what is ready, a bounded
 * amount per connection so that no client starves the others. Call it in
 * a loop from one control thread; nest pa_rpc_server_fd() in the caller's
 * own epoll/poll set (EPOLLIN) to wait on several things at once, and call
 * pa_rpc_server_poll(s, 0) when it is readable.
 * @return 0, or -errno on a fatal error of the listening socket.
 */
int pa_rpc_server_poll(struct pa_rpc_server *s, int timeout_ms);

/** Try for up to @p timeout_ms to write out pending responses. */
void pa_rpc_server_flush(struct pa_rpc_server *s, int timeout_ms);

/** Close every connection, remove the socket and the lock file. */
void pa_rpc_server_destroy(struct pa_rpc_server *s);

/** Request counters for stats (calls and errors). */
struct pa_rpc_counters {
	uint64_t requests;		/**< calls, batch elements and parse errors included */
	uint64_t errors;		/**< calls answered (or due) with an error */
	uint64_t connections;		/**< served over the server's life */
	uint64_t rejected_connections;	/**< closed at once: over max_conns */
};
/** Copy the counters (same thread as pa_rpc_server_poll()). */
void pa_rpc_server_counters(const struct pa_rpc_server *s,
		struct pa_rpc_counters *c);

#endif /* PA_RPC_H */
