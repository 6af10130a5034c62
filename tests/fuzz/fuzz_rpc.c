/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_rpc: bytes as they would arrive on the RPC socket, through the
 * server's framing and dispatch (pa_rpc_server_feed(), lib/rpc/server.c)
 * with the real method table: the libraries are linked whole, so every
 * method they register is there, and the acl_*, lb_* and config_get
 * methods run against live tables made from a small configuration.
 *
 * Every input starts from the same tables, so that its outcome does not
 * depend on the inputs before it and a crash file reproduces alone: after
 * an input that changed them (the "version" of the ACL's or the LB's
 * stats moved) the table that changed is destroyed and made afresh.
 * Building ACL contexts takes milliseconds (rte_acl_build allocates 8 MB
 * each time, slow under ASan), so doing it for every input would slow
 * the fuzzer tenfold; most inputs change nothing.
 * The tables run without a data path (no RCU variable, no lcores): the
 * methods that need the pipeline (stats_get, pipeline_get, trace_packet)
 * answer "data path not running". "shutdown" is the daemon's
 * (app/pktaccel/app.c), not a library's: it is not in this table.
 *
 * The capture_* methods drive a real capture (lib/capture) whose
 * directory is a private temporary one: a capture_start that passes the
 * checks makes a file there. After an input that started one, the capture
 * is made afresh and the directory emptied. Oracle: nothing is ever
 * created outside that directory (every entry made is a regular file
 * directly in it, named as the rules allow).
 *
 * Oracles: every response is one line of JSON, an object or an array;
 * after an input that changed the tables, the running configuration
 * (config_get) must load as itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "fuzz_common.h"
#include "pa_acl.h"
#include "pa_capture.h"
#include "pa_config.h"
#include "pa_lb.h"
#include "pa_pkt.h"
#include "pa_rpc.h"

#define TARGET	"fuzz_rpc"

/* Small, so that building tables per input stays cheap. */
static const char tables_doc[] =
	"{\"ports\": [{\"name\": \"wan0\", \"devargs\": \"net_null0\"},"
	"  {\"name\": \"lan0\", \"devargs\": \"net_null1\"}],"
	" \"acl\": {\"default\": \"permit\", \"rules\": ["
	"  {\"id\": 10, \"priority\": 100, \"src\": \"10.0.0.0/8\","
	"   \"dport\": \"53\", \"proto\": \"udp\", \"action\": \"drop\"},"
	"  {\"id\": 11, \"priority\": 90, \"src\": \"2001:db8::/32\","
	"   \"sport\": \"1024-65535\", \"dport\": \"80-88\", \"proto\": \"tcp\","
	"   \"action\": \"permit\", \"in_port\": \"lan0\"},"
	"  {\"id\": 12, \"dst\": \"192.0.2.0/24\", \"action\": \"mark\","
	"   \"dscp\": 10},"
	"  {\"id\": 13, \"proto\": \"icmp\", \"action\": \"police\","
	"   \"rate_pps\": 1000, \"burst\": 100}]},"
	" \"lb\": {\"local_addr\": \"192.0.2.254\","
	"  \"local_addr6\": \"2001:db8::fe\","
	"  \"flow_table\": {\"size\": 1024},"
	"  \"services\": ["
	"  {\"name\": \"web\", \"vip\": \"192.0.2.10\", \"port\": 80,"
	"   \"proto\": \"tcp\", \"scheduler\": \"maglev\", \"forward\": \"ipip\","
	"   \"table_size\": 1021, \"backends\": [{\"addr\": \"10.1.0.1\"},"
	"   {\"addr\": \"10.1.0.2\", \"weight\": 2}]},"
	"  {\"name\": \"dns\", \"vip\": \"192.0.2.53\", \"port\": 53,"
	"   \"proto\": \"udp\", \"scheduler\": \"rr\", \"forward\": \"nat\","
	"   \"table_size\": 1021, \"backends\": [{\"addr\": \"10.2.0.1\","
	"   \"port\": 5353}]},"
	"  {\"name\": \"web6\", \"vip\": \"2001:db8::10\", \"port\": 443,"
	"   \"proto\": \"tcp\", \"scheduler\": \"lc\", \"forward\": \"dsr\","
	"   \"table_size\": 1021, \"backends\": [{\"addr\": \"2001:db8:1::1\","
	"   \"mac\": \"02:00:00:00:00:01\"}]}]}}";

static uint16_t port_map[RTE_MAX_ETHPORTS];
static struct pa_config *cfg;
static struct pa_acl *acl;
static struct pa_lb *lb;
static struct pa_acl_rpc_ctx acl_ctx;
static struct pa_lb_rpc_ctx lb_ctx;
static struct pa_config_rpc_ctx config_ctx;
static json_int_t acl_version, lb_version;
static struct pa_capture *capture;
static char cap_base[] = "/tmp/pa-fuzz-rpc-XXXXXX";
static char cap_dir[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "version" of a stats object (a new reference, consumed). */
static json_int_t
stats_version(json_t *stats)
{
	json_t *v = json_object_get(stats, "version");
	json_int_t ver;

	if (!json_is_integer(v))
		fuzz_fail(TARGET, "stats without a version");
	ver = json_integer_value(v);
	json_decref(stats);
	return ver;
}

static struct pa_config *
load_tables_doc(void)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config *c;

	c = pa_config_load_string(tables_doc, NULL, err, sizeof(err));
	if (c == NULL)
		fuzz_fail(TARGET, "tables config: %s", err);
	return c;
}

static void
acl_create(void)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_acl_opts ao;

	memset(&ao, 0, sizeof(ao));
	ao.rcu = NULL;
	ao.n_lcores = 1;
	ao.socket = SOCKET_ID_ANY;
	ao.cfg = cfg;
	ao.port_index_of = port_map;
	ao.no_folder = true;	/* no background thread: deterministic */
	acl = pa_acl_create(&ao, err, sizeof(err));
	if (acl == NULL)
		fuzz_fail(TARGET, "pa_acl_create: %s", err);
	acl_ctx = (struct pa_acl_rpc_ctx){ acl, cfg };
	pa_rpc_bind("acl", &acl_ctx);
	acl_version = stats_version(pa_acl_stats_json(acl));
}

static void
lb_create(void)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_lb_opts lo;

	memset(&lo, 0, sizeof(lo));
	lo.rcu = NULL;
	lo.n_lcores = 1;
	lo.socket = SOCKET_ID_ANY;
	lo.cfg = cfg;
	lo.ports = NULL;
	lb = pa_lb_create(&lo, err, sizeof(err));
	if (lb == NULL)
		fuzz_fail(TARGET, "pa_lb_create: %s", err);
	lb_ctx = (struct pa_lb_rpc_ctx){ lb, cfg };
	pa_rpc_bind("lb", &lb_ctx);
	lb_version = stats_version(pa_lb_stats_json(lb));
}

/*
 * config_save must not write where a fuzzed request says: serialise as
 * the real writer does, keep nothing, and fail now and then as a file
 * system would.
 */
static int
fuzz_saver(const struct pa_config *c, const char *path, char *err,
		size_t err_len)
{
	json_t *doc = pa_config_to_json(c);
	char *text = doc != NULL ? json_dumps(doc, JSON_INDENT(2)) : NULL;

	json_decref(doc);
	if (text == NULL) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	free(text);
	if (path[0] != '/') {
		snprintf(err, err_len, "%s: %s", path, strerror(ENOENT));
		return -ENOENT;
	}
	return 0;
}

/*
 * As the daemon does: one configuration, the tables made from it, and
 * the RPC methods keeping it in step with them.
 */
static void
tables_create(void)
{
	cfg = load_tables_doc();
	acl_create();
	lb_create();
	config_ctx = (struct pa_config_rpc_ctx){
		.running = cfg,
		.path = "/fuzz/pktaccel.json",
		.saver = fuzz_saver,
	};
	pa_rpc_bind("config", &config_ctx);
}

static void
tables_destroy(void)
{
	pa_rpc_bind("config", NULL);
	pa_rpc_bind("lb", NULL);
	pa_rpc_bind("acl", NULL);
	pa_lb_destroy(lb);
	pa_acl_destroy(acl);
	pa_config_free(cfg);
	lb = NULL;
	acl = NULL;
	cfg = NULL;
}

/*
 * The running configuration that the methods kept in step (what
 * config_get reports and config_save writes) must still be a valid
 * document that loads as itself.
 */
static void
check_running_config(void)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config *again;
	json_t *doc, *doc2;
	char *text;

	doc = pa_config_to_json(cfg);
	if (doc == NULL)
		fuzz_fail(TARGET, "pa_config_to_json of the running config failed");
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (text == NULL)
		fuzz_fail(TARGET, "cannot dump the running config");
	again = pa_config_load_string(text, NULL, err, sizeof(err));
	if (again == NULL)
		fuzz_fail(TARGET, "the running config after the input does not load: %s\n%s",
			err, text);
	doc2 = pa_config_to_json(again);
	if (doc2 == NULL || !json_equal(doc, doc2))
		fuzz_fail(TARGET, "the running config does not load as itself:\n%s",
			text);
	json_decref(doc2);
	pa_config_free(again);
	free(text);
	json_decref(doc);
}

/*
 * Put back what an input changed. The ACL and the LB are reset on their
 * own (an ACL costs milliseconds of rte_acl builds, an LB far less), each
 * with its section of the configuration as first loaded.
 */
static void
tables_reset(void)
{
	struct pa_config *fresh = NULL;
	bool acl_changed, lb_changed;

	acl_changed = stats_version(pa_acl_stats_json(acl)) != acl_version;
	lb_changed = stats_version(pa_lb_stats_json(lb)) != lb_version;
	if (!acl_changed && !lb_changed)
		return;
	check_running_config();
	fresh = load_tables_doc();
	if (acl_changed) {
		struct pa_config_acl tmp = cfg->acl;

		pa_rpc_bind("acl", NULL);
		pa_acl_destroy(acl);
		cfg->acl = fresh->acl;
		fresh->acl = tmp;
		acl_create();
	}
	if (lb_changed) {
		struct pa_config_lb tmp = cfg->lb;

		pa_rpc_bind("lb", NULL);
		pa_lb_destroy(lb);
		cfg->lb = fresh->lb;
		fresh->lb = tmp;
		lb_create();
	}
	pa_config_free(fresh);
}

static void
capture_create(void)
{
	struct pa_capture_opts o = {
		.dir = cap_dir, .ring_size = 64, .socket = SOCKET_ID_ANY,
	};
	char err[256];

	capture = pa_capture_create(&o, err, sizeof(err));
	if (capture == NULL)
		fuzz_fail(TARGET, "pa_capture_create: %s", err);
	pa_rpc_bind("capture", capture);
}

/* Every entry of the capture directory must be a file a capture_start
 * could make; remove them. */
static void
capture_dir_check_and_empty(void)
{
	char why[256];
	struct dirent *e;
	struct stat st;
	DIR *d;

	d = opendir(cap_dir);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (pa_capture_check_name(e->d_name, why, sizeof(why)) != 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			fuzz_fail(TARGET, "capture directory holds '%s'",
				e->d_name);
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

static void
capture_reset(void)
{
	struct pa_capture_status st;

	pa_capture_get(capture, &st);
	if (st.state == PA_CAPTURE_IDLE)
		return;
	pa_rpc_bind("capture", NULL);
	pa_capture_destroy(capture);
	capture_dir_check_and_empty();
	capture_create();
}

static void
capture_cleanup(void)
{
	pa_rpc_bind("capture", NULL);
	pa_capture_destroy(capture);
	capture = NULL;
	capture_dir_check_and_empty();
	rmdir(cap_dir);
	rmdir(cap_base);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned int i;

	fuzz_eal_init(TARGET);
	if (pa_pkt_init() != 0)
		fuzz_fail(TARGET, "pa_pkt_init failed");
	for (i = 0; i < RTE_DIM(port_map); i++)
		port_map[i] = 0xffff;
	port_map[0] = 0;
	port_map[1] = 1;
	tables_create();
	atexit(tables_destroy);
	if (mkdtemp(cap_base) == NULL)
		fuzz_fail(TARGET, "mkdtemp: %s", strerror(errno));
	snprintf(cap_dir, sizeof(cap_dir), "%s/caps", cap_base);
	capture_create();
	atexit(capture_cleanup);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL, *line, *nl;
	size_t len = 0;
	int ret;

	ret = pa_rpc_server_feed(NULL, (const char *)data, size, &out, &len,
		NULL);
	if (ret != 0 && ret != -ENOMEM)
		fuzz_fail(TARGET, "pa_rpc_server_feed: %d", ret);
	if (out != NULL && (len == 0 || out[len - 1] != '\n' ||
			strlen(out) != len))
		fuzz_fail(TARGET, "responses not newline-terminated lines");
	for (line = out; line != NULL && *line != '\0'; line = nl + 1) {
		json_t *resp;

		nl = strchr(line, '\n');
		resp = json_loadb(line, (size_t)(nl - line), 0, NULL);
		if (!json_is_object(resp) && !json_is_array(resp))
			fuzz_fail(TARGET, "a response is not a JSON object or array: %.*s",
				(int)(nl - line), line);
		json_decref(resp);
	}
	free(out);
	tables_reset();
	capture_reset();
	return 0;
}
