/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interactive console of pktaccelctl: commands read from the terminal
 * with libedit (line editing, history, completion of the names that
 * rpc_get_methods gives) or line by line from a pipe, each run like a
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

	argc = ctl_args_split_line(line, &argv);
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
		rc = ctl_run_command(ctl, argv[0], argc - 1, argv + 1);
	}
	ctl_args_free_words(argv, argc);
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
		PA_VERSION, ctl->client.path);
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

int
ctl_console(struct ctl *ctl)
{
	if (isatty(STDIN_FILENO))
		return console_tty(ctl);
	return console_pipe(ctl);
}
