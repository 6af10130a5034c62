/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccelctl top: a live view of the daemon over its RPC socket only
 * (docs/console.md, "top"). Every SECONDS it reads stats_get,
 * pipeline_get, acl_rule_list, lb_service_list and neigh_list, and shows
 * the rates between this reading and the last (top_view.c) on the
 * terminal with ncurses, or as plain-text screens (-b).
 *
 * The terminal is always given back: on q, on a signal, and when the
 * daemon goes away (exit status 2, the reason printed after the screen
 * is restored; what the client said meanwhile on stderr is kept in a
 * temporary file and printed then, so it never scribbles on the screen).
 */
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "pa_clock.h"
#include "pktaccelctl.h"
#include "top.h"

#define TOP_DEFAULT_DELAY_S	1.0
#define TOP_MIN_DELAY_S		0.1
#define TOP_MAX_DELAY_S		3600.0
#define TOP_TIMEOUT_MS		5000	/* per call, unless -t says otherwise */

static const char *const top_methods[TOP_N_SRC] = {
	[TOP_STATS] = "stats_get",
	[TOP_PIPELINE] = "pipeline_get",
	[TOP_ACL] = "acl_rule_list",
	[TOP_LB] = "lb_service_list",
	[TOP_NEIGH] = "neigh_list",
};

struct top {
	struct ctl *ctl;
	double delay_s;
	bool batch;
	long max_screens;	/* 0: no limit */
	long screens;
	bool absent[TOP_N_SRC];	/* the daemon does not have the method */
	struct top_sample s[2];
	int cur;		/* index of the newest reading in s[] */
	enum top_sort sort;
	bool paused;
	bool help;
	struct top_screen scr;
	/* terminal mode */
	bool curses;
	SCREEN *screen;
	int saved_stderr;	/* -1: not redirected */
	FILE *errlog;
};

static volatile sig_atomic_t top_quit_sig;
static volatile sig_atomic_t top_winch;

static void
on_quit(int sig)
{
	top_quit_sig = sig;
}

static void
on_winch(int sig)
{
	(void)sig;
	top_winch = 1;
}

static void
top_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-s SOCKET] [-t TIMEOUT_S] top [-d SECONDS] [-b] [-n N]\n"
		"\n"
		"A live view of pktaccel: per-port rates, drops per second by reason,\n"
		"lcore load and ring fill, latency, the top ACL rules, services and\n"
		"backends, neighbour states; refreshed every SECONDS (default 1).\n"
		"\n"
		"  -d SECONDS   time between screens (%.1f..%.0f, fractions allowed)\n"
		"  -b           batch: plain-text screens on stdout, no terminal needed\n"
		"  -n N         stop after N screens\n"
		"\n"
		"Keys: q quit, s sort the lists by the next column (rate, total,\n"
		"name), p or space pause, h or ? help.\n"
		"Exit status: 0, 2 when the daemon cannot be reached or goes away,\n"
		"64 usage.\n",
		ctl_progname, TOP_MIN_DELAY_S, TOP_MAX_DELAY_S);
}

static int
parse_args(struct top *tp, int argc, char *argv[])
{
	char *end;
	int opt;

	optind = 0;		/* glibc: start over, on this argv */
	while ((opt = getopt(argc, argv, "+d:bn:h")) != -1) {
		switch (opt) {
		case 'd':
			errno = 0;
			tp->delay_s = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !isfinite(tp->delay_s) ||
			    tp->delay_s < TOP_MIN_DELAY_S ||
			    tp->delay_s > TOP_MAX_DELAY_S) {
				fprintf(stderr, "%s: top: bad delay '%s' (seconds, %.1f..%.0f)\n",
					ctl_progname, optarg, TOP_MIN_DELAY_S,
					TOP_MAX_DELAY_S);
				return EXIT_USAGE;
			}
			break;
		case 'b':
			tp->batch = true;
			break;
		case 'n':
			errno = 0;
			tp->max_screens = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    tp->max_screens < 1) {
				fprintf(stderr, "%s: top: bad count '%s' (an integer >= 1)\n",
					ctl_progname, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			top_usage(stdout);
			return -1;
		default:
			top_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: top: unexpected argument '%s'\n",
			ctl_progname, argv[optind]);
		top_usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * Read the daemon into @p s. @return 0, or -errno when the daemon cannot
 * be reached (the client said why on stderr). An RPC error is kept for
 * its section; a method the daemon lacks is not asked again.
 */
static int
top_sample(struct top *tp, struct top_sample *s)
{
	const json_t *err;
	const char *msg;
	double t0, t1;
	json_t *resp;
	int i, rc;

	top_sample_clear(s);
	for (i = 0; i < TOP_N_SRC; i++) {
		if (tp->absent[i])
			continue;
		t0 = pa_clock_s();
		rc = ctl_client_call(&tp->ctl->client, top_methods[i], NULL,
			&resp);
		t1 = pa_clock_s();
		if (rc != 0)
			return rc;
		err = json_object_get(resp, "error");
		if (err != NULL) {
			if (json_integer_value(json_object_get(err, "code")) ==
					-32601 && i != TOP_STATS) {
				tp->absent[i] = true;
			} else {
				msg = json_string_value(json_object_get(err,
					"message"));
				s->err[i] = strdup(msg != NULL ? msg : "error");
			}
		} else {
			s->res[i] = json_incref(json_object_get(resp, "result"));
			s->t[i] = (t0 + t1) / 2;
		}
		json_decref(resp);
	}
	s->wall = time(NULL);
	s->valid = true;
	return 0;
}

/* A new reading: the newest becomes the previous one. */
static int
top_step(struct top *tp)
{
	tp->cur ^= 1;
	return top_sample(tp, &tp->s[tp->cur]);
}

static int
top_render(struct top *tp, int width)
{
	struct top_view v = {
		.prev = &tp->s[tp->cur ^ 1],
		.cur = &tp->s[tp->cur],
		.sort = tp->sort,
		.socket = tp->ctl->client.path,
		.delay_s = tp->delay_s,
		.paused = tp->paused,
	};

	return top_view_render(&v, width, &tp->scr);
}

/* ---- batch ---- */

static int
batch_print(struct top *tp)
{
	int i;

	if (top_render(tp, 0) != 0) {
		fprintf(stderr, "%s: top: out of memory\n", ctl_progname);
		return -ENOMEM;
	}
	if (tp->screens > 1)
		putchar('\n');
	for (i = 0; i < tp->scr.n; i++)
		printf("%s\n", tp->scr.line[i].text);
	if (fflush(stdout) != 0 || ferror(stdout))
		return -EPIPE;
	return 0;
}

/* Sleep until @p deadline (monotonic s), or a signal. */
static void
sleep_until(double deadline)
{
	double left;

	while (!top_quit_sig && (left = deadline - pa_clock_s()) > 0)
		poll(NULL, 0, (int)(left * 1000.0) + 1);
}

static void
gone_message(struct top *tp)
{
	fprintf(stderr, "%s: top: the daemon at %s went away (or stopped answering); exiting\n",
		ctl_progname, tp->ctl->client.path);
}

static int
top_batch(struct top *tp)
{
	double next = pa_clock_s() + tp->delay_s;

	for (;;) {
		sleep_until(next);
		if (top_quit_sig)
			return EXIT_OK;
		next += tp->delay_s;
		if (top_step(tp) != 0) {
			gone_message(tp);
			return EXIT_UNREACHABLE;
		}
		tp->screens++;
		if (batch_print(tp) != 0)
			return EXIT_OK;		/* stdout went away */
		if (tp->max_screens > 0 && tp->screens >= tp->max_screens)
			return EXIT_OK;
		if (next < pa_clock_s())
			next = pa_clock_s() + tp->delay_s;
	}
}

/* ---- the terminal ---- */

/* Keep stderr off the screen while curses owns it. */
static void
stderr_capture(struct top *tp)
{
	tp->saved_stderr = -1;
	tp->errlog = tmpfile();
	if (tp->errlog == NULL)
		return;
	fflush(stderr);
	tp->saved_stderr = dup(STDERR_FILENO);
	if (tp->saved_stderr < 0 ||
	    dup2(fileno(tp->errlog), STDERR_FILENO) < 0) {
		if (tp->saved_stderr >= 0)
			close(tp->saved_stderr);
		tp->saved_stderr = -1;
		fclose(tp->errlog);
		tp->errlog = NULL;
	}
}

/* Give stderr back and replay what was said meanwhile. */
static void
stderr_release(struct top *tp)
{
	char buf[4096];
	size_t n;

	if (tp->saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(tp->saved_stderr, STDERR_FILENO);
	close(tp->saved_stderr);
	tp->saved_stderr = -1;
	rewind(tp->errlog);
	while ((n = fread(buf, 1, sizeof(buf), tp->errlog)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(tp->errlog);
	tp->errlog = NULL;
}

static int
term_start(struct top *tp)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_winch;	/* no SA_RESTART: wake poll() */
	sigaction(SIGWINCH, &sa, NULL);
	tp->screen = newterm(NULL, stdout, stdin);
	if (tp->screen == NULL) {
		fprintf(stderr, "%s: top: cannot use this terminal (TERM=%s); try -b\n",
			ctl_progname, getenv("TERM") != NULL ? getenv("TERM") :
			"unset");
		return -ENOTTY;
	}
	tp->curses = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	stderr_capture(tp);
	return 0;
}

static void
term_stop(struct top *tp)
{
	if (tp->curses) {
		endwin();
		delscreen(tp->screen);
		tp->screen = NULL;
		tp->curses = false;
	}
	stderr_release(tp);
}

static void
term_resize(void)
{
	struct winsize ws;

	top_winch = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
}

static void
draw_help(void)
{
	static const char *const text[] = {
		"pktaccel top: keys",
		"",
		"  q          quit",
		"  s          sort the lists by the next column: rate, total, name",
		"  p, space   pause / resume",
		"  h, ?       this help (any key returns)",
		"  Ctrl-L     redraw",
		"",
		"Rates are counter deltas over the measured time between two",
		"readings (the header's interval). Lower sections give way on a",
		"small terminal.",
	};
	size_t i;

	erase();
	for (i = 0; i < sizeof(text) / sizeof(text[0]) &&
			(int)i < LINES; i++)
		mvaddnstr((int)i, 0, text[i], COLS);
	refresh();
}

/*
 * Draw the screen: sections top to bottom while they fit, each at least
 * two lines (or whole when shorter) else it and those below give way; a
 * section may be cut to what is left. The last line is the key bar.
 */
static void
draw(struct top *tp, bool have_rates)
{
	int y = 0, i, j, k, avail, sec, n, take, attr, hidden = 0;
	char bar[256];

	if (tp->help) {
		draw_help();
		return;
	}
	erase();
	if (top_render(tp, COLS) != 0) {
		mvaddnstr(0, 0, "out of memory", COLS);
		refresh();
		return;
	}
	avail = LINES - 1;
	for (i = 0; i < tp->scr.n; i = j) {
		sec = tp->scr.line[i].sec;
		for (j = i; j < tp->scr.n && tp->scr.line[j].sec == sec; j++)
			;
		n = j - i;
		take = n <= avail ? n : avail >= 2 ? avail : 0;
		if (take == 0 || hidden > 0) {
			hidden++;
			continue;
		}
		for (k = i; k < i + take; k++, y++) {
			attr = tp->scr.line[k].kind == TOP_LINE_HEAD ?
				A_REVERSE : tp->scr.line[k].kind ==
				TOP_LINE_TITLE ? A_BOLD : A_NORMAL;
			attron(attr);
			mvaddnstr(y, 0, tp->scr.line[k].text, COLS);
			attroff(attr);
		}
		avail -= take;
		if (take < n)
			hidden++;	/* cut: the rest gives way */
	}
	snprintf(bar, sizeof(bar), "q quit  s sort  p pause  h help%s%s",
		have_rates ? "" : "   (first reading; rates follow)",
		hidden > 0 ? "   (small window: lower sections hidden)" : "");
	if (LINES > 0) {
		attron(A_DIM);
		mvaddnstr(LINES - 1, 0, bar, COLS - 1 > 0 ? COLS - 1 : COLS);
		attroff(A_DIM);
	}
	refresh();
}

/* Act on the keys waiting. @return true when asked to quit. */
static bool
read_keys(struct top *tp, bool *redraw, bool *resume)
{
	int ch;

	while ((ch = getch()) != ERR) {
		if (tp->help) {
			tp->help = false;
			*redraw = true;
			continue;
		}
		switch (ch) {
		case 'q':
		case 'Q':
			return true;
		case 's':
		case 'S':
			tp->sort = (tp->sort + 1) % TOP_N_SORT;
			*redraw = true;
			break;
		case 'p':
		case 'P':
		case ' ':
			tp->paused = !tp->paused;
			if (!tp->paused)
				*resume = true;
			*redraw = true;
			break;
		case 'h':
		case 'H':
		case '?':
			tp->help = true;
			*redraw = true;
			break;
		case 12:		/* Ctrl-L */
			clearok(curscr, TRUE);
			*redraw = true;
			break;
		case KEY_RESIZE:
			*redraw = true;
			break;
		default:
			break;
		}
	}
	return false;
}

static int
top_interactive(struct top *tp)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	double next = pa_clock_s() + tp->delay_s, left;
	bool redraw, resume, gone = false;
	int status = EXIT_OK, to;

	if (term_start(tp) != 0)
		return EXIT_USAGE;
	draw(tp, false);
	for (;;) {
		redraw = resume = false;
		if (top_quit_sig)
			break;
		if (top_winch) {
			term_resize();
			redraw = true;
		}
		left = next - pa_clock_s();
		to = tp->paused ? -1 : left > 0 ? (int)(left * 1000.0) + 1 : 0;
		if (!redraw && poll(&pfd, 1, to) > 0 &&
		    (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)))
			break;		/* the terminal is gone */
		if (read_keys(tp, &redraw, &resume))
			break;
		if (resume)
			next = pa_clock_s();	/* read at once */
		if (!tp->paused && pa_clock_s() >= next) {
			next += tp->delay_s;
			if (next < pa_clock_s())
				next = pa_clock_s() + tp->delay_s;
			if (top_step(tp) != 0) {
				gone = true;
				break;
			}
			tp->screens++;
			draw(tp, true);
			if (tp->max_screens > 0 &&
			    tp->screens >= tp->max_screens)
				break;
			continue;
		}
		if (redraw)
			draw(tp, tp->screens > 0);
	}
	term_stop(tp);
	if (gone) {
		gone_message(tp);
		status = EXIT_UNREACHABLE;
	}
	return status;
}

/* The first reading, then the screens; signals handled meanwhile. */
static int
top_run(struct top *tp)
{
	struct sigaction sa, old_int, old_term, old_hup, old_winch;
	int status;

	/* the first reading, before the terminal changes: unreachable is
	 * a plain message and exit status 2 */
	if (top_sample(tp, &tp->s[tp->cur]) != 0)
		return EXIT_UNREACHABLE;
	if (!tp->batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		fprintf(stderr, "%s: top: needs a terminal (use -b for plain-text screens)\n",
			ctl_progname);
		return EXIT_USAGE;
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_quit;	/* no SA_RESTART: wake poll() */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	sigaction(SIGWINCH, NULL, &old_winch);

	status = tp->batch ? top_batch(tp) : top_interactive(tp);

	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigaction(SIGWINCH, &old_winch, NULL);
	return status;
}

int
ctl_top(struct ctl *ctl, int argc, char *argv[])
{
	struct top tp = {
		.ctl = ctl,
		.delay_s = TOP_DEFAULT_DELAY_S,
		.saved_stderr = -1,
	};
	int timeout_ms = ctl->client.timeout_ms;
	int rc, status;

	top_quit_sig = 0;
	top_winch = 0;
	rc = parse_args(&tp, argc, argv);
	if (rc != 0)
		return rc < 0 ? EXIT_OK : rc;
	if (!ctl->timeout_set)
		ctl->client.timeout_ms = TOP_TIMEOUT_MS;
	status = top_run(&tp);
	ctl->client.timeout_ms = timeout_ms;
	top_screen_free(&tp.scr);
	top_sample_clear(&tp.s[0]);
	top_sample_clear(&tp.s[1]);
	return status;
}
