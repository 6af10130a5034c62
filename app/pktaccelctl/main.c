/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccelctl: the operator console of pktaccel (docs/console.md).
 * This file: the options, and the running of one command (its words
 * into parameters, the call, the printed answer), from the command line
 * or from the console.
 *
 *   pktaccelctl [-s SOCKET] [-j | -v] [-t TIMEOUT_S] METHOD [JSON-PARAMS | key=value ...]
 *   pktaccelctl [-s SOCKET] [-j]            (interactive console)
 *   pktaccelctl [-s SOCKET] top [-d SECONDS] [-b] [-n N]   (top.c)
 *
 * Exit status: 0 success, 1 JSON-RPC error, 2 daemon unreachable,
 * 64 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktaccelctl.h"

#define DEFAULT_SOCKET		"/run/pktaccel/pktaccel.sock"
#define SOCKET_ENV		"PKTACCEL_SOCKET"
#define DEFAULT_TIMEOUT_S	30.0
#define MAX_TIMEOUT_S		86400.0

const char *const ctl_progname = "pktaccelctl";

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-s SOCKET] [-j | -v] [-t TIMEOUT_S] METHOD [JSON-PARAMS | key=value ...]\n"
		"       %s [-s SOCKET] [-j] [-t TIMEOUT_S]     (interactive console)\n"
		"       %s [-s SOCKET] top [-d SECONDS] [-b] [-n N]   (live view)\n"
		"\n"
		"Send one JSON-RPC call to pktaccel and print the result.\n"
		"\n"
		"  -s, --socket PATH    RPC socket (default $%s, else %s)\n"
		"  -j, --json           print the raw result as JSON\n"
		"  -v, --verbose        stats_get: every counter, not the summary\n"
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
		"stats_get prints a summary: totals, rates since the last summary of\n"
		"the same socket, non-zero drops, ports, latency (-v: everything).\n"
		"top: a live view, refreshed every SECONDS (default 1); -b writes\n"
		"plain-text screens, -n N stops after N screens; keys q quit, s sort,\n"
		"p pause, h help (%s top -h).\n"
		"\n"
		"Exit status: 0 success, 1 JSON-RPC error, 2 daemon unreachable, 64 usage.\n",
		ctl_progname, ctl_progname, ctl_progname, SOCKET_ENV,
		DEFAULT_SOCKET, DEFAULT_TIMEOUT_S, ctl_progname);
}

int
ctl_run_command(struct ctl *ctl, const char *method, int argc,
		char *const argv[])
{
	json_t *params, *resp;
	int status;

	if (ctl_args_params(argc, argv, &params) != 0)
		return EXIT_USAGE;
	if (ctl_client_call(&ctl->client, method, params, &resp) != 0)
		return EXIT_UNREACHABLE;
	if (ctl_summary_print(ctl, method, resp))
		status = EXIT_OK;
	else
		status = ctl_fmt_response(method, resp, ctl->json_out);
	json_decref(resp);
	return status;
}

static int
parse_timeout(const char *s, int *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) ||
			v <= 0 || v > MAX_TIMEOUT_S)
		return -EINVAL;
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int timeout_ms = (int)(DEFAULT_TIMEOUT_S * 1000);
	struct ctl ctl = { .json_out = false };
	const char *env, *path;
	int opt, status;

	signal(SIGPIPE, SIG_IGN);
	env = getenv(SOCKET_ENV);
	path = env != NULL && env[0] != '\0' ? env : DEFAULT_SOCKET;

	/* '+': stop at METHOD, so its arguments are never taken as options */
	while ((opt = getopt_long(argc, argv, "+s:jvt:hV", longopts,
			NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			ctl.json_out = true;
			break;
		case 'v':
			ctl.verbose = true;
			break;
		case 't':
			if (parse_timeout(optarg, &timeout_ms) != 0) {
				fprintf(stderr, "%s: bad timeout '%s' (seconds, 0 < T <= %.0f)\n",
					ctl_progname, optarg, MAX_TIMEOUT_S);
				return EXIT_USAGE;
			}
			ctl.timeout_set = true;
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
	if (path[0] == '\0') {
		fprintf(stderr, "%s: empty socket path\n", ctl_progname);
		return EXIT_USAGE;
	}
	ctl_client_init(&ctl.client, path, timeout_ms);

	if (optind < argc && strcmp(argv[optind], "top") == 0)
		status = ctl_top(&ctl, argc - optind, argv + optind);
	else if (optind < argc)
		status = ctl_run_command(&ctl, argv[optind], argc - optind - 1,
			argv + optind + 1);
	else
		status = ctl_console(&ctl);

	ctl_client_close(&ctl.client);
	return status;
}
