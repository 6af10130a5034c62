/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_RPC_H
#define PA_RPC_H

/**
 * @file
 * JSON-RPC 2.0 server over a Unix stream socket (docs/rpc.md).
 *
 * Framing: the client writes requests (objects, or batch arrays); any
 * whitespace may separate them. The server answers each with one line
 * (the response followed by '\n'). Notifications get no answer.
 *
 * Methods are registered in a global table, usually from a library's own
 * <lib>_rpc.c with PA_RPC_METHOD(), in the library's subsystem
 * (PA_RPC_SUBSYSTEM()): the application binds one context per subsystem
 * (pa_rpc_bind()) and the registry hands it to every method of that
 * subsystem, so no adapter keeps a global of its own. Handlers run on
 * the control thread that calls pa_rpc_server_poll(), one at a time; they
 * may block briefly (e.g. waiting for RCU quiescence) but must not wait
 * on the network.
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
 * A subsystem: the methods of one library that share one context (the
 * library's object, or a small struct of the library's own), handed to
 * them by the registry. The application binds each subsystem's context
 * with pa_rpc_bind() once the object exists and unbinds it (NULL) before
 * destroying it; a method of an unbound subsystem is answered with
 * -32603 and the subsystem's @p unbound message without being called.
 * Declare one per library with PA_RPC_SUBSYSTEM().
 */
struct pa_rpc_subsystem {
	const char *name;		/**< "acl", "lb", ...: pa_rpc_bind()'s key */
	const char *unbound;		/**< the error while nothing is bound */
	void *ctx;			/**< bound context, or NULL */
};

/** Declare subsystem @p id (an identifier) named @p name_str. */
#define PA_RPC_SUBSYSTEM(id, name_str, unbound_msg)			\
	static struct pa_rpc_subsystem pa_rpc_subsystem_##id = {	\
		(name_str), (unbound_msg), NULL }

/**
 * A method handler.
 * @param ctx     the context bound to the method's subsystem (never NULL
 *                for a method of a subsystem), or NULL for a method of
 *                none (PA_RPC_REGISTER)
 * @param params  the "params" member, or NULL when absent (borrowed)
 * @param result  on success, set to a new reference (never NULL)
 * @param err     on failure, filled by pa_rpc_error_set()
 * @return 0 on success, -1 on failure (err filled)
 */
typedef int (*pa_rpc_handler_t)(void *ctx, const json_t *params,
		json_t **result, struct pa_rpc_error *err);

struct pa_decode_field;

/* Application errors a method may answer (struct pa_rpc_schema.errors). */
#define PA_RPC_ERRS_EXISTS	0x1u	/**< PA_RPC_ERR_EXISTS */
#define PA_RPC_ERRS_NOT_FOUND	0x2u	/**< PA_RPC_ERR_NOT_FOUND */
#define PA_RPC_ERRS_BUSY	0x4u	/**< PA_RPC_ERR_BUSY */

/**
 * What rpc.discover (docs/openrpc.json) says of a method: its params as a
 * JSON Schema, its result, its errors. The params' schema comes from what
 * decodes them, so that it cannot say other than the decoder does: the
 * method's own field table (pa_decode.h), or a function that builds the
 * schema from the config's tables that decode a whole object (a rule, a
 * service, a configuration), with what a table cannot say added there
 * (blocklist_replace's one of two keys); the API test
 * (tests/integration/test_openrpc.py) checks every method call by call.
 * A method registered without one takes no params. Every method may
 * answer -32602 and -32603; @c errors adds the application errors.
 */
struct pa_rpc_schema {
	/** params: an object decoded with this field table ... */
	const struct pa_decode_field *params;
	size_t n_params;
	/** ... or the params object's schema built by a function (new
	 * reference, NULL when out of memory). */
	json_t *(*params_fn)(void);
	/** The result's JSON Schema as text (NULL: any value). */
	const char *result_json;
	/** PA_RPC_ERRS_* */
	unsigned int errors;
};

/** .params and .n_params of a struct pa_rpc_schema: field table @p t. */
#define PA_RPC_PARAMS(t)	.params = (t), .n_params = sizeof(t) / sizeof((t)[0])

struct pa_rpc_method {
	const char *name;
	pa_rpc_handler_t handler;
	const char *help;		/**< one line, for the console */
	struct pa_rpc_subsystem *subsys;	/**< NULL: needs no context */
	/** params, result and errors for rpc.discover (NULL: no params,
	 * any result) */
	const struct pa_rpc_schema *schema;
	struct pa_rpc_method *next;
	/** Calls of this method (notifications included) and those that
	 * failed, counted by pa_rpc_handle*() on the thread that calls it
	 * (the control thread); read them there (pa_rpc_methods()). */
	uint64_t calls;
	uint64_t errors;
};

/** Add a method to the global table (constructor time or later). */
void pa_rpc_register(struct pa_rpc_method *m);

#define PA_RPC_REGISTER_IN_(subsys_ptr, name_str, fn, help_text, schema_ptr) \
	static struct pa_rpc_method pa_rpc_method_##fn = {		\
		.name = (name_str), .handler = (fn), .help = (help_text),	\
		.subsys = (subsys_ptr), .schema = (schema_ptr) };	\
	static void __attribute__((constructor))			\
	pa_rpc_register_##fn(void)					\
	{								\
		pa_rpc_register(&pa_rpc_method_##fn);			\
	}

/** Register @p fn as method @p name of subsystem @p id (declared with
 * PA_RPC_SUBSYSTEM() in the same file) at load time. */
#define PA_RPC_METHOD(id, name, fn, help_text)				\
	PA_RPC_REGISTER_IN_(&pa_rpc_subsystem_##id, name, fn, help_text, NULL)

/**
 * Same as PA_RPC_METHOD(), with what rpc.discover says of it: the
 * initialisers of a struct pa_rpc_schema follow, e.g.
 *
 *     PA_RPC_METHOD_SCHEMA(acl, "acl_rule_delete", rpc_acl_rule_delete,
 *         "delete the ACL rule with this id",
 *         PA_RPC_PARAMS(delete_fields), .result_json = "{\"const\": true}",
 *         .errors = PA_RPC_ERRS_NOT_FOUND)
 */
#define PA_RPC_METHOD_SCHEMA(id, name, fn, help_text, ...)		\
	static const struct pa_rpc_schema pa_rpc_schema_##fn = { __VA_ARGS__ }; \
	PA_RPC_REGISTER_IN_(&pa_rpc_subsystem_##id, name, fn, help_text, \
		&pa_rpc_schema_##fn)

/** Register @p fn as method @p name that needs no context (its handler
 * gets ctx NULL) at load time. */
#define PA_RPC_REGISTER(name, fn, help_text)				\
	PA_RPC_REGISTER_IN_(NULL, name, fn, help_text, NULL)

/** PA_RPC_REGISTER() with a struct pa_rpc_schema's initialisers. */
#define PA_RPC_REGISTER_SCHEMA(name, fn, help_text, ...)		\
	static const struct pa_rpc_schema pa_rpc_schema_##fn = { __VA_ARGS__ }; \
	PA_RPC_REGISTER_IN_(NULL, name, fn, help_text, &pa_rpc_schema_##fn)

/**
 * Bind @p ctx as the context of the methods of subsystem @p name (NULL:
 * unbind; its methods then answer the subsystem's "unbound" message).
 * Control thread, or before the server runs.
 * @return 0, or -ENOENT when no registered method belongs to @p name.
 */
int pa_rpc_bind(const char *name, void *ctx);

/** Find a method. */
const struct pa_rpc_method *pa_rpc_find(const char *name);

/** The registered methods (a list linked by "next", any order), with
 * their call counters. Control thread. */
const struct pa_rpc_method *pa_rpc_methods(void);

/** Calls naming a method that is not registered (control thread). */
uint64_t pa_rpc_unknown_method_calls(void);

/** Sorted array of method names (new reference). */
json_t *pa_rpc_method_names(void);

/** Fill @p err (printf-style message). @return -1 for "return pa_rpc_error_set(...)". */
int pa_rpc_error_set(struct pa_rpc_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** The key of a raw result's marker object (pa_rpc_raw_result()). */
#define PA_RPC_RAW_KEY	"\x01pa_rpc_raw"

/**
 * A result the handler already rendered as JSON text (compact and valid:
 * nobody checks it), for a result whose jansson tree would cost more
 * than the rest of the call (lb_service_list of 10,000 backends). The
 * server writes the text as the response's "result"; pa_rpc_handle()
 * returns the marker object {PA_RPC_RAW_KEY: text} (pa_rpc_raw_text()
 * reads it). @p text is copied.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_rpc_raw_result(const char *text, size_t len);

/** The text of a raw result (pa_rpc_raw_result()), its length in
 * @p len; NULL for any other value. */
const char *pa_rpc_raw_text(const json_t *v, size_t *len);

/**
 * Check that a method got no parameters (absent, null, [] or {}).
 * @return 0, or -1 with err filled (-32602).
 */
int pa_rpc_no_params(const json_t *params, struct pa_rpc_error *err);

/**
 * The one map from a core function's -errno to a JSON-RPC error, for the
 * adapters of pa_<lib>_*() functions (which return 0 or -errno with a
 * reason in a buffer):
 *   -EEXIST, -EBUSY   -32000 (the object exists, or the slot is in use)
 *   -ENOENT           -32001 (no such object)
 *   -EINVAL, -ENOSPC  -32602 (the parameters ask for what cannot be:
 *                     malformed, or over a limit); the message is
 *                     @p params_prefix followed by @p why, so that it names
 *                     the parameter as the core's reason is phrased
 *                     ("params: ", "params.", or "")
 *   anything else     -32603
 * Other messages are @p why as it is.
 * @return -1, for "return pa_rpc_error_errno(...)".
 */
int pa_rpc_error_errno(struct pa_rpc_error *err, int ret,
		const char *params_prefix, const char *why);

/**
 * The whole body of a method that takes no parameters and answers a view
 * of its context: pa_rpc_no_params(), then *@p result = @p view(@p ctx);
 * a NULL view is -32603 "out of memory".
 *
 *     static json_t *
 *     rules_view(void *ctx)
 *     {
 *         return pa_acl_rules_json(((struct pa_acl_rpc_ctx *)ctx)->acl);
 *     }
 *     ...
 *     return pa_rpc_view(params, rules_view, ctx, result, err);
 *
 * @return 0, or -1 with @p err filled.
 */
int pa_rpc_view(const json_t *params, json_t *(*view)(void *ctx), void *ctx,
		json_t **result, struct pa_rpc_error *err);

struct pa_rpc_counters;

/**
 * Process one decoded request or batch (transport independent; used by the
 * server, by tests and by fuzzers).
 * @return the response (object or array, new reference), or NULL when no
 *         response is due (notification, all-notification batch).
 */
json_t *pa_rpc_handle(const json_t *request);

/**
 * Process one call: a request object, or anything else as a batch element
 * would be (an array too gives -32600 "not an object"). Counted in @p c
 * (may be NULL) as pa_rpc_handle_count() counts one batch element.
 * @return the response (new reference), or NULL for a notification.
 */
json_t *pa_rpc_handle_call(const json_t *request, struct pa_rpc_counters *c);

/**
 * Same as pa_rpc_handle(), and add to @p c: "requests" counts every call
 * (each batch element, notifications included), "errors" every call that
 * failed (invalid request, unknown method, handler error), answered or not.
 * The connection counters of @p c are not touched.
 */
json_t *pa_rpc_handle_count(const json_t *request, struct pa_rpc_counters *c);

/** Log type "pa.rpc" (rte_log), for the RPC library and its methods. */
extern int pa_rpc_logtype;

/* Defaults of struct pa_rpc_server_opts (also the config's "rpc" section). */
#define PA_RPC_DEFAULT_MAX_REQUEST	(32u * 1024 * 1024)
#define PA_RPC_DEFAULT_MAX_CONNS	64u
#define PA_RPC_DEFAULT_MAX_DEPTH	64u
#define PA_RPC_DEFAULT_IDLE_TIMEOUT_MS	30000u

/**
 * Server limits and location; 0 in a field means its default. What a
 * client sees at each limit (docs/rpc.md, "Limits"):
 * - A request (or batch) longer than max_request gets -32600 and the
 *   connection is closed; so does one nested deeper than max_depth
 *   (-32700, the request object itself is level 1), and one with more
 *   than max_request / 64 (at least 4096) objects and arrays or more than
 *   max_request / 8 (at least 32768) commas (-32600 "request too
 *   complex"), which bounds the memory and time its parse takes. The
 *   input a connection makes the server hold is bounded by max_request
 *   plus one read (64 KiB).
 * - Connections beyond max_conns are accepted and closed at once. Every
 *   open connection counts, idle ones included.
 * - Output: a connection whose unread responses reach 4 MiB is not read
 *   from (and its batch not run further) until its client catches up, so
 *   the responses held for it stay below 4 MiB plus one response. A batch
 *   is answered element by element: its response line is written as its
 *   calls run, never built whole.
 * - Idle timeout: a connection on which the server waits for the client
 *   (the rest of a started request, or room to write responses) and on
 *   which no byte has moved for idle_timeout_ms is closed; a partial
 *   request is first answered with -32600 "request incomplete ...". A
 *   connection with nothing pending may stay open and idle indefinitely.
 * - Fairness: each poll serves each connection at most 64 calls (batch
 *   elements count one each), about 2 ms of calls and 256 KiB of input.
 *   Values longer than 8 KiB are parsed (and their trees freed) by a
 *   helper thread of the server, so that a big request delays only its
 *   own connection; at most 2 such batches (whose trees live while their
 *   calls run) are parsed or running at once, a third waits its turn.
 */
struct pa_rpc_server_opts {
	const char *path;		/**< socket path (< 108 bytes) */
	size_t max_request;		/**< bytes of one request; default 32 MiB
					 * (a 100k-rule acl_rules_replace is ~12 MB) */
	unsigned int max_conns;		/**< default 64 */
	unsigned int max_depth;		/**< JSON nesting limit; default 64 */
	unsigned int idle_timeout_ms;	/**< default 30000 (30 s) */
	int mode;			/**< socket mode; default 0660 */
	bool set_group;			/**< give socket and directory to gid */
	unsigned int gid;		/**< (default: the daemon's, root) */
};

/**
 * The server is not thread-safe: create, poll, flush and destroy it from
 * one thread (the control thread). Method handlers run in that thread.
 * The server has one helper thread of its own, which only parses request
 * text and frees request trees (never calls a handler).
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
 * written, an idle timeout that has expired. Owned by the server.
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
	uint64_t timed_out_connections;	/**< closed by the idle timeout */
};
/** Copy the counters (same thread as pa_rpc_server_poll()). */
void pa_rpc_server_counters(const struct pa_rpc_server *s,
		struct pa_rpc_counters *c);

/**
 * Run @p len bytes through the server's framing and dispatch exactly as if
 * they had arrived on one connection that then half-closed, without a
 * socket (for tests and fuzzers): each complete value is parsed and
 * handled with pa_rpc_handle_count(), a value that does not parse is
 * answered with a parse error, and a protocol error that would close the
 * connection (bare scalar, mismatched bracket, too deep, too long) is
 * answered and ends the stream; a partial value at the end is dropped.
 * No per-poll budget or output bound applies.
 * @param o        limits (max_request, max_depth; 0 or a NULL @p o: the
 *                 defaults); the other fields are ignored
 * @param out      if not NULL, set to the response lines (malloc'd,
 *                 NUL-terminated; NULL when there are none), for free()
 * @param out_len  if not NULL, set to their length in bytes
 * @param c        if not NULL, "requests" and "errors" are added to it
 * @return 0, or -ENOMEM (nothing returned in @p out).
 */
int pa_rpc_server_feed(const struct pa_rpc_server_opts *o, const char *buf,
		size_t len, char **out, size_t *out_len,
		struct pa_rpc_counters *c);

#endif /* PA_RPC_H */
