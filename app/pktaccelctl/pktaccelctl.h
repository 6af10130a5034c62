/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccelctl's private header: what its rooms share. client.c talks
 * JSON-RPC over the Unix socket, args.c turns operator words into
 * parameters, format.c prints results readably and views.c holds the
 * per-method views, summary.c shows stats_get for people, rates.c turns
 * counters into rates, top.c (with top_view.c, top.h) is the live view,
 * console.c is the interactive mode, main.c the options and the running
 * of one command.
 */
#ifndef PKTACCELCTL_H
#define PKTACCELCTL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#ifndef PA_VERSION
#define PA_VERSION "unknown"
#endif

/* Exit status of the program and of each console command. */
#define EXIT_OK			0
#define EXIT_RPC_ERROR		1
#define EXIT_UNREACHABLE	2
#define EXIT_USAGE		64

/* Name in front of every diagnostic ("pktaccelctl: ..."). */
extern const char *const ctl_progname;

/* ---- client.c: one JSON-RPC connection to the daemon ---- */

/*
 * A client of the daemon's RPC socket. Fill it with ctl_client_init();
 * it connects on the first call, reconnects when the daemon has dropped
 * the idle connection, and is released with ctl_client_close(). Not
 * thread safe.
 */
struct ctl_client {
	const char *path;	/* socket path; not owned */
	int timeout_ms;		/* per call: connect, send and answer */
	int fd;			/* -1 when not connected */
	char *buf;		/* bytes received and not yet consumed */
	size_t len;
	size_t cap;
	json_int_t next_id;
};

void ctl_client_init(struct ctl_client *c, const char *path, int timeout_ms);

/*
 * Call @p method with @p params (stolen; NULL: none), connecting first,
 * and reconnecting once when the daemon closed the connection before the
 * request was sent.
 *
 * @return 0 with *resp the response object (a new reference; its "id" is
 *         ours, or null for an error the server could not tie to it; it
 *         has a "result" or an "error" object), or -errno with *resp NULL
 *         and the reason printed on stderr: the daemon is unreachable.
 */
int ctl_client_call(struct ctl_client *c, const char *method, json_t *params,
		json_t **resp);

/* Disconnect and free the buffers; the client may be used again. */
void ctl_client_close(struct ctl_client *c);

/* ---- args.c: operator words into parameters ---- */

/*
 * Parameters from the words after METHOD: nothing (NULL), one JSON
 * document (several words starting with '{' or '[' are joined, for
 * unquoted shell words), or key=value pairs into an object, each value
 * JSON when it parses and a string otherwise.
 * @return 0 with *params a new reference or NULL, or -EINVAL or -ENOMEM
 *         with a message printed.
 */
int ctl_args_params(int argc, char *const argv[], json_t **params);

/*
 * Split a console line into words: whitespace separates, '...' and "..."
 * quote (backslash escapes inside "..." and outside quotes), and a word
 * after the method that starts with '{' or '[' takes the rest of the line.
 * @return number of words (>= 0) in *argv (free with ctl_args_free_words),
 *         or -EINVAL or -ENOMEM with a message printed.
 */
int ctl_args_split_line(const char *line, char ***argv);

void ctl_args_free_words(char **argv, int argc);

/* ---- format.c: readable output ---- */

/* Is @p arr a non-empty array of objects only (a table)? */
bool ctl_fmt_is_table(const json_t *arr);

/*
 * Print an array of objects as an aligned table on stdout, each line
 * indented by @p indent: a header of the keys in first-seen order, then a
 * row per object; numbers right-aligned, no trailing blanks.
 */
void ctl_fmt_table(const json_t *arr, int indent);

/*
 * Print a method's result on stdout: as indented JSON when @p json_out,
 * else readably (the method's view, tables for lists of objects,
 * "key: value" lines for objects, "ok" for true). @p method NULL: no view.
 */
void ctl_fmt_result(const char *method, const json_t *result, bool json_out);

/*
 * Print a response: its result on stdout, or its error on stderr.
 * @return the exit status it means, EXIT_OK or EXIT_RPC_ERROR.
 */
int ctl_fmt_response(const char *method, const json_t *resp, bool json_out);

/* ---- views.c: how particular methods' results are shown ---- */

/*
 * What the generic printer shows for @p method's result (a new
 * reference), or NULL to show the result as it is (no view, or an answer
 * of another shape, e.g. from a newer daemon).
 */
json_t *ctl_view_format(const char *method, const json_t *result);

/*
 * Print @p method's result with a printer of its own. @return false
 * (nothing printed) when it has none or the result is not of the shape
 * it knows.
 */
bool ctl_view_print(const char *method, const json_t *result);

/* The ACL rule's match ("udp 10.0.0.0/8:any -> any:53") and action
 * ("police 1000pps/100") as acl_rule_list's table shows them (new
 * references), for top. */
json_t *ctl_view_acl_match(const json_t *rule);
json_t *ctl_view_acl_action(const json_t *rule);

/* ---- rates.c: counters into rates, numbers for people ---- */

/* Member @p key of @p obj as a number; NAN when absent or not one. */
double ctl_num(const json_t *obj, const char *key);

/* (cur - prev) / dt_s; NAN when a value is NAN, dt_s <= 0, or the
 * counter went back (restart, reset). */
double ctl_rate(double cur, double prev, double dt_s);

/* Formatting into @p buf (returned): "-" for NAN everywhere.
 * ctl_fmt_si: "987", "1.23k", "45.6M" (SI suffix, 3 digits);
 * ctl_fmt_fixed: v / scale with @p decimals ("1.234" Mpps);
 * ctl_fmt_pps: "987 pps", "12.3 kpps", "1.23 Mpps";
 * ctl_fmt_ns: a duration given in ns, "950ns", "4.1us", "12.3ms". */
const char *ctl_fmt_si(char *buf, size_t len, double v);
const char *ctl_fmt_fixed(char *buf, size_t len, double v, double scale,
		int decimals);
const char *ctl_fmt_pps(char *buf, size_t len, double pps);
const char *ctl_fmt_ns(char *buf, size_t len, double ns);

/* ---- main.c and console.c: running commands ---- */

/* The console's session: the client and how results are printed. */
struct ctl {
	struct ctl_client client;
	bool json_out;
	bool verbose;		/* -v: stats_get in full, no summary */
	bool timeout_set;	/* -t given (top keeps its own default otherwise) */
};

/* ---- summary.c: stats_get for people ---- */

/*
 * Print stats_get's response @p resp as the summary (totals, rates since
 * the previous summary of the same socket, non-zero drops, ports,
 * latency), keeping this reading in a state file for the next one.
 * @return false (nothing printed) for another method, an error, -j or
 *         -v, or a result of another shape.
 */
bool ctl_summary_print(struct ctl *ctl, const char *method,
		const json_t *resp);

/* ---- top.c: the live view ---- */

/*
 * `top [-d SECONDS] [-b] [-n N]` (@p argv[0] is "top"): the live view
 * on the terminal (ncurses) or as plain-text screens (-b).
 * @return the exit status: 0 (quit, or N screens shown), 2 (the daemon
 *         cannot be reached or went away), 64 (usage).
 */
int ctl_top(struct ctl *ctl, int argc, char *argv[]);

/* Run METHOD with its argument words; @return the exit status. */
int ctl_run_command(struct ctl *ctl, const char *method, int argc,
		char *const argv[]);

/*
 * The interactive mode: commands (METHOD [params], help, quit) read from
 * the terminal with line editing, history and completion, or line by line
 * from a pipe. @return the exit status of the last command.
 */
int ctl_console(struct ctl *ctl);

#endif /* PKTACCELCTL_H */
