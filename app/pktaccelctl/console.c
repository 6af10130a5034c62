/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interactive console of pktaccelctl: commands read from the terminal
 * with libedit (line editing, history, completion of the names that
 * rpc_get_methods gives and, after a method, of its parameter names as
 * "key=" from rpc.discover) or line by line from a pipe, each run like a
 * command line; help and quit are the console's own.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <editline/readline.h>

#include "pktaccelctl.h"

#define HISTORY_FILE		".pktaccelctl_history"
#define HISTORY_MAX		1000
#define PROMPT			"pktaccel> "

enum builtin_cmd {
	BUILTIN_HELP,
	BUILTIN_QUIT,
	BUILTIN_TOP,
};

/* The console's own commands; completion offers those it lists. */
static const struct builtin {
	const char *name;
	enum builtin_cmd cmd;
	bool complete;
} builtins[] = {
	{ "help", BUILTIN_HELP, true },
	{ "quit", BUILTIN_QUIT, true },
	{ "exit", BUILTIN_QUIT, true },
	{ "top", BUILTIN_TOP, true },
	{ "?", BUILTIN_HELP, false },
};

#define NUM_BUILTINS	(sizeof(builtins) / sizeof(builtins[0]))

/* The method names for completion (a JSON array), fetched once. */
static json_t *method_list;

/* The daemon's method names (a new reference), or NULL with the reason
 * printed. */
static json_t *
fetch_methods(struct ctl *ctl)
{
	json_t *resp, *list;

	if (ctl_client_call(&ctl->client, "rpc_get_methods", NULL, &resp) != 0)
		return NULL;
	list = json_object_get(resp, "result");
	if (!json_is_array(list)) {
		ctl_fmt_response(NULL, resp, ctl->json_out);
		json_decref(resp);
		return NULL;
	}
	json_incref(list);
	json_decref(resp);
	return list;
}

/* The daemon's OpenRPC document (rpc.discover), fetched on the first
 * completion of a parameter; json_null() when the daemon gives none. */
static json_t *discover_doc;
static struct ctl *console_ctl;
/* The params (OpenRPC content descriptors) of the method whose
 * parameter is being completed. */
static const json_t *param_list;

/* The "params" of @p method in the daemon's rpc.discover, or NULL. */
static const json_t *
method_params(const char *method, size_t len)
{
	const json_t *m, *name;
	json_t *resp;
	size_t i;

	if (discover_doc == NULL) {
		discover_doc = json_null();
		if (console_ctl != NULL && ctl_client_call(&console_ctl->client,
				"rpc.discover", NULL, &resp) == 0) {
			if (json_is_object(json_object_get(resp, "result"))) {
				json_decref(discover_doc);
				discover_doc = json_incref(json_object_get(resp,
						"result"));
			}
			json_decref(resp);
		}
	}
	json_array_foreach(json_object_get(discover_doc, "methods"), i, m) {
		name = json_object_get(m, "name");
		if (json_is_string(name) &&
		    strlen(json_string_value(name)) == len &&
		    strncmp(json_string_value(name), method, len) == 0)
			return json_object_get(m, "params");
	}
	return NULL;
}

/* "key=" for each parameter of the method that starts with @p text. */
static char *
complete_param(const char *text, int state)
{
	static size_t pi;
	size_t len = strlen(text);
	const char *n;
	char *out;

	if (state == 0)
		pi = 0;
	while (pi < json_array_size(param_list)) {
		n = json_string_value(json_object_get(
				json_array_get(param_list, pi++), "name"));
		if (n == NULL || strncmp(n, text, len) != 0)
			continue;
		out = malloc(strlen(n) + 2);
		if (out == NULL)
			return NULL;
		memcpy(out, n, strlen(n));
		out[strlen(n)] = '=';
		out[strlen(n) + 1] = '\0';
		return out;
	}
	return NULL;
}

static char *
complete_name(const char *text, int state)
{
	static size_t mi, bi;
	size_t len = strlen(text);
	const struct builtin *b;
	const char *n;

	if (state == 0)
		mi = bi = 0;
	while (mi < json_array_size(method_list)) {
		n = json_string_value(json_array_get(method_list, mi++));
		if (n != NULL && strncmp(n, text, len) == 0)
			return strdup(n);
	}
	while (bi < NUM_BUILTINS) {
		b = &builtins[bi++];
		if (b->complete && strncmp(b->name, text, len) == 0)
			return strdup(b->name);
	}
	return NULL;
}

static char **
complete(const char *text, int start, int end)
{
	int i;

	const char *method;
	size_t len;

	(void)end;
	rl_attempted_completion_over = 1;	/* never file names */
	for (i = 0; i < start; i++)
		if (!isspace((unsigned char)rl_line_buffer[i]))
			break;
	if (i == start) {
		rl_completion_append_character = ' ';
		return rl_completion_matches(text, complete_name);
	}
	/* a word after the method: one of its parameters, as "key=" */
	method = rl_line_buffer + i;
	for (len = 0; (int)(i + len) < start &&
	     !isspace((unsigned char)method[len]); len++)
		;
	param_list = method_params(method, len);
	if (param_list == NULL || strchr(text, '=') != NULL)
		return NULL;
	rl_completion_append_character = '\0';	/* the value follows */
	return rl_completion_matches(text, complete_param);
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
	printf("Type METHOD [JSON-PARAMS | key=value ...], top [-d S] [-b] [-n N], or quit.\n");
	fflush(stdout);
	json_decref(list);
	return EXIT_OK;
}

static const struct builtin *
find_builtin(const char *name)
{
	size_t i;

	for (i = 0; i < NUM_BUILTINS; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

/*
 * One console line. @return the command's exit status, or -1 for quit.
 * @p status is the previous status (kept for blank lines and comments).
 */
static int
console_line(struct ctl *ctl, const char *line, int status)
{
	const struct builtin *b;
	char **argv;
	int argc, rc;

	argc = ctl_args_split_line(line, &argv);
	if (argc < 0)
		return EXIT_USAGE;
	if (argc == 0 || argv[0][0] == '#')
		rc = status;
	else if ((b = find_builtin(argv[0])) == NULL)
		rc = ctl_run_command(ctl, argv[0], argc - 1, argv + 1);
	else if (b->cmd == BUILTIN_QUIT)
		rc = -1;
	else if (b->cmd == BUILTIN_TOP)
		rc = ctl_top(ctl, argc, argv);
	else
		rc = console_help(ctl);
	ctl_args_free_words(argv, argc);
	return rc;
}

/*
 * Run the lines that @p next_line gives (each to be freed; NULL at the
 * end) until the end or quit. @return the status of the last command.
 */
static int
console_loop(struct ctl *ctl, char *(*next_line)(void))
{
	int status = EXIT_OK, rc;
	char *line;

	while ((line = next_line()) != NULL) {
		rc = console_line(ctl, line, status);
		free(line);
		if (rc < 0)
			break;
		status = rc;
	}
	return status;
}

/* The next line from the terminal, remembered in the history. */
static char *
next_line_tty(void)
{
	char *line = readline(PROMPT);

	if (line == NULL)
		putchar('\n');	/* end the prompt's line on ^D */
	else if (line[strspn(line, " \t")] != '\0')
		add_history(line);
	return line;
}

/* The next line from a pipe, without its newline. */
static char *
next_line_pipe(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
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
	char *hist;
	int status;

	rl_readline_name = "pktaccelctl";
	rl_attempted_completion_function = complete;
	using_history();
	stifle_history(HISTORY_MAX);
	hist = history_path();
	if (hist != NULL)
		read_history(hist);	/* a missing file is fine */

	method_list = fetch_methods(ctl);
	console_ctl = ctl;
	printf("pktaccelctl %s: connected to %s. Type help, or quit.\n",
		PA_VERSION, ctl->client.path);
	status = console_loop(ctl, next_line_tty);
	if (hist != NULL)
		write_history(hist);	/* failures are not worth a word */
	free(hist);
	json_decref(method_list);
	method_list = NULL;
	json_decref(discover_doc);
	discover_doc = NULL;
	console_ctl = NULL;
	return status;
}

int
ctl_console(struct ctl *ctl)
{
	if (isatty(STDIN_FILENO))
		return console_tty(ctl);
	return console_loop(ctl, next_line_pipe);
}
