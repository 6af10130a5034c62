/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration loader: JSON document (CONTRACT section 4) -> typed structs.
 *
 * Every check writes "<json path>: <reason>" and returns -EINVAL; parsing
 * stops at the first error. Objects are checked for unknown keys before
 * their fields are read, and fields are read in a fixed order, so the
 * reported error does not depend on the key order of the document.
 */

#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_net.h"
#include "pa_rpc.h"

#ifndef PA_DRIVERS_CONFIG_DIR
#define PA_DRIVERS_CONFIG_DIR "/usr/share/pktaccel/drivers-config"
#endif

#define CFG_PATH_LEN		256
#define CFG_DEFAULT_REPLAY_PORT	"replay0"
#define CFG_DEFAULT_LISTEN	"127.0.0.1:9469"
#define CFG_DEFAULT_RING_SIZE	1024
#define CFG_DEFAULT_BURST	32
#define CFG_DEFAULT_TX_DRAIN_US	100
#define CFG_DEFAULT_SPIN_POLLS	1000
#define CFG_MAX_SPIN_POLLS	100000000
#define CFG_DEFAULT_MAX_SLEEP_US	100
#define CFG_MAX_MAX_SLEEP_US	10000
#define CFG_DEFAULT_TABLE_SIZE	65537
#define CFG_MIN_TABLE_SIZE	1021
#define CFG_MAX_TABLE_SIZE	1048573
#define CFG_MAX_RULE_ID		2147483648LL
#define CFG_DEFAULT_FLOWS	1048576
#define CFG_MIN_FLOWS		1024
#define CFG_MAX_FLOWS		67108864
#define CFG_DEFAULT_TCP_TIMEOUT	300
#define CFG_DEFAULT_TCP_FIN_TIMEOUT	10
#define CFG_DEFAULT_UDP_TIMEOUT	30
#define CFG_MAX_TIMEOUT		86400
#define CFG_MAX_QUEUES		64
#define CFG_MIN_DESC		64
#define CFG_MAX_DESC		16384
#define CFG_MIN_MTU		68
#define CFG_MAX_MTU		16000
#define CFG_MAX_MBUFS		(16 * 1024 * 1024)
#define CFG_MAX_RPC_CONNS	65536
#define CFG_MIN_RPC_REQUEST	1024
#define CFG_MAX_RPC_REQUEST	(1024LL * 1024 * 1024)
#define CFG_MIN_RPC_DEPTH	4	/* request, params, list, element */
#define CFG_MAX_RPC_DEPTH	4096

/* Where an error message goes. */
struct ctx {
	char *err;
	size_t err_len;
};

static int __attribute__((format(printf, 2, 3)))
fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (c->err != NULL && c->err_len > 0) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->err_len, fmt, ap);
		va_end(ap);
		/* Messages quote the document (jansson's "near '...'", names):
		 * a control character from a damaged file must not break the
		 * one-line message or reach a terminal. */
		for (p = c->err; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
	}
	return -EINVAL;
}

static int
fail_nomem(struct ctx *c, const char *path)
{
	fail(c, "%s: out of memory", path);
	return -ENOMEM;
}

static int __attribute__((format(printf, 3, 4)))
why_set(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && why_len > 0) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "an unknown type";
}

/* A path too long for its buffer ends in "..." (still a usable prefix). */
static const char *
path_done(char *buf, size_t len, int n)
{
	if ((n < 0 || (size_t)n >= len) && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

static const char *
kpath(char *buf, size_t len, const char *path, const char *key)
{
	return path_done(buf, len, snprintf(buf, len, "%s.%s", path, key));
}

static const char *
ipath(char *buf, size_t len, const char *path, size_t i)
{
	return path_done(buf, len, snprintf(buf, len, "%s[%zu]", path, i));
}

static bool
is_pow2(unsigned long long x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static bool
is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* ------------------------------------------------------------------ */
/* Generic JSON accessors                                              */
/* ------------------------------------------------------------------ */

static int
check_keys(struct ctx *c, const json_t *obj, const char *path,
		const char *const *allowed)
{
	const char *key;
	const char *const *a;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		for (a = allowed; *a != NULL; a++)
			if (strcmp(*a, key) == 0)
				break;
		if (*a == NULL)
			return fail(c, "%s.%s: unknown key", path, key);
	}
	return 0;
}

static int
want_object(struct ctx *c, const json_t *v, const char *path)
{
	if (!json_is_object(v))
		return fail(c, "%s: expected an object, got %s", path,
				type_name(v));
	return 0;
}

static int
want_array(struct ctx *c, const json_t *v, const char *path)
{
	if (!json_is_array(v))
		return fail(c, "%s: expected an array, got %s", path,
				type_name(v));
	return 0;
}

static int
missing(struct ctx *c, const char *path, const char *key)
{
	return fail(c, "%s.%s: required key missing", path, key);
}

static int
int_value(struct ctx *c, const json_t *v, const char *path,
		long long min, long long max, long long *out)
{
	long long x;

	if (!json_is_integer(v))
		return fail(c, "%s: expected an integer, got %s", path,
				type_name(v));
	x = json_integer_value(v);
	if (x < min || x > max)
		return fail(c, "%s: %lld out of range %lld..%lld", path, x,
				min, max);
	*out = x;
	return 0;
}

/* @return 1 found, 0 absent, <0 error. */
static int
get_int(struct ctx *c, const json_t *obj, const char *path, const char *key,
		long long min, long long max, long long *out)
{
	char p[CFG_PATH_LEN];
	const json_t *v = json_object_get(obj, key);
	int rc;

	if (v == NULL)
		return 0;
	rc = int_value(c, v, kpath(p, sizeof(p), path, key), min, max, out);
	return rc < 0 ? rc : 1;
}

/* Integer that must also be a power of two. */
static int
get_pow2(struct ctx *c, const json_t *obj, const char *path, const char *key,
		long long min, long long max, long long *out)
{
	char p[CFG_PATH_LEN];
	int rc;

	rc = get_int(c, obj, path, key, min, max, out);
	if (rc > 0 && !is_pow2((unsigned long long)*out))
		return fail(c, "%s: %lld is not a power of two",
				kpath(p, sizeof(p), path, key), *out);
	return rc;
}

static int
get_string(struct ctx *c, const json_t *obj, const char *path,
		const char *key, const char **out)
{
	char p[CFG_PATH_LEN];
	const json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return fail(c, "%s: expected a string, got %s",
				kpath(p, sizeof(p), path, key), type_name(v));
	*out = json_string_value(v);
	return 1;
}

static int
get_bool(struct ctx *c, const json_t *obj, const char *path, const char *key,
		bool *out)
{
	char p[CFG_PATH_LEN];
	const json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_boolean(v))
		return fail(c, "%s: expected a boolean, got %s",
				kpath(p, sizeof(p), path, key), type_name(v));
	*out = json_is_true(v);
	return 1;
}

static int
enum_lookup(const char *const *names, const char *s)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static void
enum_list(const char *const *names, char *buf, size_t len)
{
	size_t off = 0;
	int i, n;

	buf[0] = '\0';
	for (i = 0; names[i] != NULL; i++) {
		n = snprintf(buf + off, len - off, "%s\"%s\"",
				i == 0 ? "" : ", ", names[i]);
		if (n < 0 || (size_t)n >= len - off)
			return;
		off += n;
	}
}

/* String from a fixed set; *out = its index in @p names. */
static int
get_enum(struct ctx *c, const json_t *obj, const char *path, const char *key,
		const char *const *names, int *out)
{
	char p[CFG_PATH_LEN];
	char list[160];
	const char *s = NULL;
	int rc, i;

	rc = get_string(c, obj, path, key, &s);
	if (rc <= 0)
		return rc;
	i = enum_lookup(names, s);
	if (i < 0) {
		enum_list(names, list, sizeof(list));
		return fail(c, "%s: invalid value '%s' (expected one of %s)",
				kpath(p, sizeof(p), path, key), s, list);
	}
	*out = i;
	return 1;
}

/* A port number given as an integer or a string of digits. */
static int
port_number(struct ctx *c, const json_t *v, const char *path,
		unsigned long min, unsigned long max, unsigned long *out)
{
	const char *s, *end;
	unsigned long x;
	long long ll;
	int rc;

	if (json_is_integer(v)) {
		rc = int_value(c, v, path, (long long)min, (long long)max, &ll);
		if (rc == 0)
			*out = (unsigned long)ll;
		return rc;
	}
	if (!json_is_string(v))
		return fail(c, "%s: expected an integer or a string of digits, got %s",
				path, type_name(v));
	s = json_string_value(v);
	if (pa_net_parse_number(s, &end, 65535, &x) < 0 || *end != '\0')
		return fail(c, "%s: invalid port number '%s'", path, s);
	if (x < min || x > max)
		return fail(c, "%s: %lu out of range %lu..%lu", path, x, min, max);
	*out = x;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Field parsers                                                       */
/* ------------------------------------------------------------------ */

int
pa_config_parse_proto(const json_t *v, int *proto, char *why, size_t why_len)
{
	if (v == NULL)
		return why_set(why, why_len, "missing protocol");
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 || json_integer_value(v) > 255)
			return why_set(why, why_len,
					"protocol %lld out of range 0..255",
					(long long)json_integer_value(v));
		*proto = (int)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return why_set(why, why_len,
				"expected a protocol name or number, got %s",
				type_name(v));
	return pa_net_parse_proto(json_string_value(v), proto, why, why_len);
}

/* Port and service names: 1..31 of [A-Za-z0-9_.-]. */
int
pa_config_check_name(const char *s, char *why, size_t why_len)
{
	size_t n, i;
	unsigned char ch;

	n = strlen(s);
	if (n == 0 || n >= PA_CONFIG_NAME_MAX)
		return why_set(why, why_len,
				"invalid name '%s': must be 1..%d characters",
				s, PA_CONFIG_NAME_MAX - 1);
	for (i = 0; i < n; i++) {
		ch = (unsigned char)s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				(ch >= '0' && ch <= '9') || ch == '_' ||
				ch == '.' || ch == '-')
			continue;
		if (ch >= 0x20 && ch < 0x7f)
			return why_set(why, why_len,
					"invalid name '%s': character '%c' not allowed (use A-Z a-z 0-9 _ . -)",
					s, ch);
		return why_set(why, why_len,
				"invalid name: character 0x%02x not allowed (use A-Z a-z 0-9 _ . -)",
				ch);
	}
	return 0;
}

static int
get_name(struct ctx *c, const json_t *obj, const char *path, const char *key,
		char name[PA_CONFIG_NAME_MAX])
{
	char why[PA_CONFIG_ERR_MAX / 2];
	char p[CFG_PATH_LEN];
	const char *s = NULL;
	int rc;

	rc = get_string(c, obj, path, key, &s);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(c, path, key);
	if (pa_config_check_name(s, why, sizeof(why)) < 0)
		return fail(c, "%s: %s", kpath(p, sizeof(p), path, key), why);
	snprintf(name, PA_CONFIG_NAME_MAX, "%s", s);
	return 1;
}

static int
get_ip(struct ctx *c, const json_t *obj, const char *path, const char *key,
		struct pa_ip_addr *a)
{
	char why[PA_CONFIG_ERR_MAX / 2];
	char p[CFG_PATH_LEN];
	const char *s = NULL;
	int rc;

	rc = get_string(c, obj, path, key, &s);
	if (rc <= 0)
		return rc;
	if (pa_net_parse_ip(s, a, why, sizeof(why)) < 0)
		return fail(c, "%s: %s", kpath(p, sizeof(p), path, key), why);
	return 1;
}

static int
get_mac(struct ctx *c, const json_t *obj, const char *path, const char *key,
		uint8_t mac[6])
{
	char why[PA_CONFIG_ERR_MAX / 2];
	char p[CFG_PATH_LEN];
	const char *s = NULL;
	int rc;

	rc = get_string(c, obj, path, key, &s);
	if (rc <= 0)
		return rc;
	if (pa_net_parse_mac(s, mac, why, sizeof(why)) < 0)
		return fail(c, "%s: %s", kpath(p, sizeof(p), path, key), why);
	return 1;
}

/* "DDDD:BB:DD.F" or "BB:DD.F" -> one comparable number. */
static int
pci_parse(const char *s, uint64_t *id)
{
	unsigned int dom = 0, bus, dev, fn;
	size_t n = strlen(s);
	const char *p = s;
	int i, h[4];

	if (n == 12) {
		for (i = 0; i < 4; i++) {
			h[i] = pa_net_hex_digit(p[i]);
			if (h[i] < 0)
				return -EINVAL;
		}
		if (p[4] != ':')
			return -EINVAL;
		dom = h[0] << 12 | h[1] << 8 | h[2] << 4 | h[3];
		p += 5;
	} else if (n != 7) {
		return -EINVAL;
	}
	h[0] = pa_net_hex_digit(p[0]);
	h[1] = pa_net_hex_digit(p[1]);
	h[2] = pa_net_hex_digit(p[3]);
	h[3] = pa_net_hex_digit(p[4]);
	if (h[0] < 0 || h[1] < 0 || h[2] < 0 || h[3] < 0 ||
			p[2] != ':' || p[5] != '.' || !is_digit(p[6]))
		return -EINVAL;
	bus = h[0] << 4 | h[1];
	dev = h[2] << 4 | h[3];
	fn = p[6] - '0';
	if (dev > 0x1f || fn > 7)
		return -EINVAL;
	*id = (uint64_t)dom << 16 | bus << 8 | dev << 3 | fn;
	return 0;
}

/* ------------------------------------------------------------------ */
/* NIC profiles                                                        */
/* ------------------------------------------------------------------ */

static const char *const rx_offload_names[] = {
	"ipv4_cksum", "udp_cksum", "tcp_cksum", "scatter", "vlan_strip",
	"rss_hash", NULL
};

static const char *const tx_offload_names[] = {
	"ipv4_cksum", "udp_cksum", "tcp_cksum", "multi_segs",
	"mbuf_fast_free", NULL
};

static int
profile_offloads(struct ctx *c, const json_t *doc, const char *key,
		const char *const *names)
{
	char path[CFG_PATH_LEN], p[CFG_PATH_LEN], list[200];
	const json_t *arr, *v, *w;
	size_t i, j;

	arr = json_object_get(doc, key);
	if (arr == NULL)
		return 0;
	kpath(path, sizeof(path), "$", key);
	if (want_array(c, arr, path) < 0)
		return -EINVAL;
	json_array_foreach(arr, i, v) {
		ipath(p, sizeof(p), path, i);
		if (!json_is_string(v))
			return fail(c, "%s: expected a string, got %s", p,
					type_name(v));
		if (enum_lookup(names, json_string_value(v)) < 0) {
			enum_list(names, list, sizeof(list));
			return fail(c, "%s: unknown offload '%s' (expected one of %s)",
					p, json_string_value(v), list);
		}
		for (j = 0; j < i; j++) {
			w = json_array_get(arr, j);
			if (strcmp(json_string_value(w),
					json_string_value(v)) == 0)
				return fail(c, "%s: duplicate offload '%s'", p,
						json_string_value(v));
		}
	}
	return 0;
}

static int
profile_validate(struct ctx *c, const json_t *doc)
{
	static const char *const keys[] = {
		"driver", "description", "devargs", "rx_queues", "tx_queues",
		"rx_desc", "tx_desc", "rss", "rx_offloads", "tx_offloads", NULL
	};
	const char *s = NULL;
	long long x;
	bool b;
	int rc;

	if (want_object(c, doc, "$") < 0 || check_keys(c, doc, "$", keys) < 0)
		return -EINVAL;
	rc = get_string(c, doc, "$", "driver", &s);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(c, "$", "driver");
	if (s[0] == '\0')
		return fail(c, "$.driver: must not be empty");
	if (get_string(c, doc, "$", "description", &s) < 0 ||
			get_string(c, doc, "$", "devargs", &s) < 0 ||
			get_int(c, doc, "$", "rx_queues", 1, CFG_MAX_QUEUES, &x) < 0 ||
			get_int(c, doc, "$", "tx_queues", 1, CFG_MAX_QUEUES, &x) < 0 ||
			get_pow2(c, doc, "$", "rx_desc", CFG_MIN_DESC, CFG_MAX_DESC, &x) < 0 ||
			get_pow2(c, doc, "$", "tx_desc", CFG_MIN_DESC, CFG_MAX_DESC, &x) < 0 ||
			get_bool(c, doc, "$", "rss", &b) < 0 ||
			profile_offloads(c, doc, "rx_offloads", rx_offload_names) < 0 ||
			profile_offloads(c, doc, "tx_offloads", tx_offload_names) < 0)
		return -EINVAL;
	return 0;
}

static const char *
profile_dir(const struct pa_config_opts *opts)
{
#ifdef PA_SOURCE_DRIVERS_CONFIG_DIR
	struct stat st;
#endif

	if (opts != NULL && opts->profile_dir != NULL)
		return opts->profile_dir;
#ifdef PA_SOURCE_DRIVERS_CONFIG_DIR
	if (stat(PA_SOURCE_DRIVERS_CONFIG_DIR, &st) == 0 && S_ISDIR(st.st_mode))
		return PA_SOURCE_DRIVERS_CONFIG_DIR;
#endif
	return PA_DRIVERS_CONFIG_DIR;
}

/* Load "<dir>/<name>.json" for the field at @p path. */
static int
profile_load(struct ctx *c, const struct pa_config_opts *opts,
		const char *path, const char *name, json_t **out)
{
	char file[4096], inner[PA_CONFIG_ERR_MAX];
	struct ctx ic = { inner, sizeof(inner) };
	json_error_t jerr;
	json_t *doc;
	FILE *f;
	int n;

	n = snprintf(file, sizeof(file), "%s/%s.json", profile_dir(opts), name);
	if (n < 0 || (size_t)n >= sizeof(file))
		return fail(c, "%s: profile path too long", path);
	f = fopen(file, "r");
	if (f == NULL)
		return fail(c, "%s: unknown profile '%s' (%s: %s)", path, name,
				file, strerror(errno));
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (doc == NULL)
		return fail(c, "%s (%s): line %d column %d: %s", path, file,
				jerr.line, jerr.column, jerr.text);
	if (profile_validate(&ic, doc) < 0) {
		json_decref(doc);
		return fail(c, "%s (%s): %s", path, file, inner);
	}
	*out = doc;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Ports                                                               */
/* ------------------------------------------------------------------ */

static void
port_clear(struct pa_config_port *port)
{
	free(port->devargs);
	free(port->pci);
	free(port->profile);
	json_decref(port->profile_doc);
	memset(port, 0, sizeof(*port));
}

static void
ports_clear(struct pa_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->n_ports; i++)
		port_clear(&cfg->ports[i]);
	cfg->n_ports = 0;
}

static int
port_addrs(struct ctx *c, const json_t *arr, const char *path,
		struct pa_config_port *port)
{
	char why[PA_CONFIG_ERR_MAX / 2];
	char p[CFG_PATH_LEN];
	struct pa_ip_prefix *a;
	const json_t *v;
	unsigned int j;
	size_t i;

	if (want_array(c, arr, path) < 0)
		return -EINVAL;
	if (json_array_size(arr) > PA_CONFIG_MAX_ADDRS)
		return fail(c, "%s: %zu addresses, at most %d", path,
				json_array_size(arr), PA_CONFIG_MAX_ADDRS);
	json_array_foreach(arr, i, v) {
		ipath(p, sizeof(p), path, i);
		if (!json_is_string(v))
			return fail(c, "%s: expected a string, got %s", p,
					type_name(v));
		a = &port->addrs[i];
		if (pa_net_parse_prefix_flags(json_string_value(v), a,
				PA_NET_PREFIX_HOST_OK | PA_NET_PREFIX_NEED_LEN, why, sizeof(why)) < 0)
			return fail(c, "%s: %s", p, why);
		for (j = 0; j < i; j++)
			if (pa_ip_equal(&port->addrs[j].addr, &a->addr))
				return fail(c, "%s: duplicate address '%s' (also %s[%u])",
						p, json_string_value(v), path, j);
		port->n_addrs = i + 1;
	}
	return 0;
}

static int
port_parse(struct ctx *c, const json_t *obj, const char *path,
		const struct pa_config_opts *opts, struct pa_config_port *port,
		const char **peer)
{
	static const char *const keys[] = {
		"name", "devargs", "pci", "profile", "rx_queues", "tx_queues",
		"rx_desc", "tx_desc", "mtu", "promisc", "peer", "gateway_mac",
		"gateway", "addr", "mbufs", NULL
	};
	char p[CFG_PATH_LEN], why[PA_CONFIG_ERR_MAX / 2];
	const char *devargs = NULL, *pci = NULL, *profile = NULL;
	const json_t *v;
	uint64_t pci_id;
	long long x;
	int rc;

	memset(port, 0, sizeof(*port));
	port->promisc = true;
	*peer = NULL;
	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	if (get_name(c, obj, path, "name", port->name) < 0)
		return -EINVAL;

	rc = get_string(c, obj, path, "devargs", &devargs);
	if (rc < 0)
		return rc;
	if (rc > 0 && devargs[0] == '\0')
		return fail(c, "%s.devargs: must not be empty", path);
	rc = get_string(c, obj, path, "pci", &pci);
	if (rc < 0)
		return rc;
	if (rc > 0 && pci_parse(pci, &pci_id) < 0)
		return fail(c, "%s.pci: invalid PCI address '%s' (expected DDDD:BB:DD.F or BB:DD.F)",
				path, pci);
	if (devargs != NULL && pci != NULL)
		return fail(c, "%s.pci: \"pci\" and \"devargs\" are mutually exclusive",
				path);
	if (devargs == NULL && pci == NULL)
		return fail(c, "%s: needs exactly one of \"devargs\" and \"pci\"",
				path);

	rc = get_string(c, obj, path, "profile", &profile);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		kpath(p, sizeof(p), path, "profile");
		if (pa_config_check_name(profile, why, sizeof(why)) < 0 ||
				profile[0] == '.')
			return fail(c, "%s: invalid profile name '%s'", p, profile);
		rc = profile_load(c, opts, p, profile, &port->profile_doc);
		if (rc < 0)
			return rc;
		port->profile = strdup(profile);
		if (port->profile == NULL)
			goto nomem;
	}
	if (devargs != NULL) {
		port->devargs = strdup(devargs);
		if (port->devargs == NULL)
			goto nomem;
	}
	if (pci != NULL) {
		port->pci = strdup(pci);
		if (port->pci == NULL)
			goto nomem;
	}

	if ((rc = get_int(c, obj, path, "rx_queues", 1, CFG_MAX_QUEUES, &x)) < 0)
		goto out;
	if (rc > 0)
		port->rx_queues = (uint16_t)x;
	if ((rc = get_int(c, obj, path, "tx_queues", 1, CFG_MAX_QUEUES, &x)) < 0)
		goto out;
	if (rc > 0)
		port->tx_queues = (uint16_t)x;
	if ((rc = get_pow2(c, obj, path, "rx_desc", CFG_MIN_DESC, CFG_MAX_DESC, &x)) < 0)
		goto out;
	if (rc > 0)
		port->rx_desc = (uint16_t)x;
	if ((rc = get_pow2(c, obj, path, "tx_desc", CFG_MIN_DESC, CFG_MAX_DESC, &x)) < 0)
		goto out;
	if (rc > 0)
		port->tx_desc = (uint16_t)x;
	if ((rc = get_int(c, obj, path, "mtu", CFG_MIN_MTU, CFG_MAX_MTU, &x)) < 0)
		goto out;
	if (rc > 0)
		port->mtu = (uint16_t)x;
	if ((rc = get_int(c, obj, path, "mbufs", 1, CFG_MAX_MBUFS, &x)) < 0)
		goto out;
	if (rc > 0)
		port->mbufs = (uint32_t)x;
	if ((rc = get_bool(c, obj, path, "promisc", &port->promisc)) < 0)
		goto out;
	if ((rc = get_string(c, obj, path, "peer", peer)) < 0)
		goto out;
	if ((rc = get_mac(c, obj, path, "gateway_mac", port->gateway_mac)) < 0)
		goto out;
	port->has_gateway_mac = rc > 0;
	if ((rc = get_ip(c, obj, path, "gateway", &port->gateway)) < 0)
		goto out;
	port->has_gateway = rc > 0;
	if (port->has_gateway && port->has_gateway_mac) {
		rc = fail(c, "%s.gateway: \"gateway\" and \"gateway_mac\" are mutually exclusive",
				path);
		goto out;
	}
	v = json_object_get(obj, "addr");
	if (v != NULL) {
		rc = port_addrs(c, v, kpath(p, sizeof(p), path, "addr"), port);
		if (rc < 0)
			goto out;
	}
	return 0;
nomem:
	rc = fail_nomem(c, path);
out:
	port_clear(port);
	return rc;
}

/* The vdev name of a devargs string: what precedes the first ','. */
static size_t
devargs_name_len(const char *d)
{
	const char *comma = strchr(d, ',');

	return comma != NULL ? (size_t)(comma - d) : strlen(d);
}

static int
ports_parse(struct ctx *c, const json_t *arr, struct pa_config *cfg,
		const struct pa_config_opts *opts)
{
	const char *peer[PA_CONFIG_MAX_PORTS];
	char path[CFG_PATH_LEN];
	struct pa_config_port *a, *b;
	uint64_t ida, idb;
	const json_t *v;
	unsigned int i, j;
	size_t k;
	int rc, idx;

	if (want_array(c, arr, "$.ports") < 0)
		return -EINVAL;
	if (json_array_size(arr) > PA_CONFIG_MAX_PORTS)
		return fail(c, "$.ports: %zu ports, at most %d",
				json_array_size(arr), PA_CONFIG_MAX_PORTS);
	json_array_foreach(arr, k, v) {
		ipath(path, sizeof(path), "$.ports", k);
		rc = port_parse(c, v, path, opts, &cfg->ports[k], &peer[k]);
		if (rc < 0)
			return rc;
		cfg->n_ports = k + 1;
		a = &cfg->ports[k];
		for (j = 0; j < k; j++) {
			b = &cfg->ports[j];
			if (strcmp(a->name, b->name) == 0)
				return fail(c, "%s.name: duplicate port name '%s' (also $.ports[%u])",
						path, a->name, j);
			if (a->pci != NULL && b->pci != NULL &&
					pci_parse(a->pci, &ida) == 0 &&
					pci_parse(b->pci, &idb) == 0 && ida == idb)
				return fail(c, "%s.pci: PCI device '%s' already used by $.ports[%u]",
						path, a->pci, j);
			if (a->devargs != NULL && b->devargs != NULL &&
					devargs_name_len(a->devargs) ==
					devargs_name_len(b->devargs) &&
					strncmp(a->devargs, b->devargs,
						devargs_name_len(a->devargs)) == 0)
				return fail(c, "%s.devargs: device '%.*s' already used by $.ports[%u]",
						path, (int)devargs_name_len(a->devargs),
						a->devargs, j);
		}
	}
	for (i = 0; i < cfg->n_ports; i++) {
		cfg->ports[i].peer = i;
		if (peer[i] == NULL)
			continue;
		idx = pa_config_port_index(cfg, peer[i]);
		if (idx < 0)
			return fail(c, "$.ports[%u].peer: unknown port '%s'", i,
					peer[i]);
		cfg->ports[i].peer = idx;
	}
	return 0;
}

int
pa_config_port_index(const struct pa_config *cfg, const char *name)
{
	unsigned int i;

	if (cfg == NULL || name == NULL)
		return -1;
	for (i = 0; i < cfg->n_ports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Pipeline                                                            */
/* ------------------------------------------------------------------ */

static const char *const stage_names[PA_CONFIG_STAGE_MAX + 1] = {
	[PA_CONFIG_STAGE_RX] = "rx",
	[PA_CONFIG_STAGE_CLASSIFY] = "classify",
	[PA_CONFIG_STAGE_LB] = "lb",
	[PA_CONFIG_STAGE_TX] = "tx",
	[PA_CONFIG_STAGE_WORKER] = "worker",
	[PA_CONFIG_STAGE_MAX] = NULL,
};

static const char *const mode_names[] = {
	[PA_PIPELINE_RTC] = "rtc",
	[PA_PIPELINE_STAGED] = "pipeline",
	NULL
};

static bool
stage_in_mode(int stage, enum pa_pipeline_mode mode)
{
	if (mode == PA_PIPELINE_RTC)
		return stage == PA_CONFIG_STAGE_WORKER;
	return stage != PA_CONFIG_STAGE_WORKER;
}

static int
lcores_parse(struct ctx *c, const json_t *obj, struct pa_config_pipeline *pl)
{
	static const char *const path = "$.pipeline.lcores";
	/* where each lcore id was first seen: stage << 8 | index, +1 */
	unsigned int seen[PA_CONFIG_MAX_LCORES] = { 0 };
	char p[CFG_PATH_LEN], sp[CFG_PATH_LEN];
	const json_t *arr, *v;
	const char *key;
	long long x;
	unsigned int st, prev;
	size_t i;
	int s;

	if (want_object(c, obj, path) < 0)
		return -EINVAL;
	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		s = enum_lookup(stage_names, key);
		if (s < 0)
			return fail(c, "%s.%s: unknown key", path, key);
		if (!stage_in_mode(s, pl->mode))
			return fail(c, pl->mode == PA_PIPELINE_RTC ?
					"%s.%s: stage lcores need \"mode\": \"pipeline\"; rtc mode has only \"worker\"" :
					"%s.%s: \"worker\" is for rtc mode; pipeline mode has \"rx\", \"classify\", \"lb\" and \"tx\"",
					path, key);
	}
	for (st = 0; st < PA_CONFIG_STAGE_MAX; st++) {
		if (!stage_in_mode(st, pl->mode))
			continue;
		kpath(sp, sizeof(sp), path, stage_names[st]);
		arr = json_object_get(obj, stage_names[st]);
		if (arr == NULL)
			return fail(c, pl->mode == PA_PIPELINE_RTC ?
					"%s: required key missing (rtc mode needs \"worker\")" :
					"%s: required key missing (pipeline mode needs \"rx\", \"classify\", \"lb\" and \"tx\")",
					sp);
		if (want_array(c, arr, sp) < 0)
			return -EINVAL;
		if (json_array_size(arr) == 0)
			return fail(c, "%s: needs at least one lcore", sp);
		if (json_array_size(arr) > PA_CONFIG_MAX_LCORES)
			return fail(c, "%s: more than %d lcores", sp,
					PA_CONFIG_MAX_LCORES);
		json_array_foreach(arr, i, v) {
			ipath(p, sizeof(p), sp, i);
			if (int_value(c, v, p, 0, PA_CONFIG_MAX_LCORES - 1, &x) < 0)
				return -EINVAL;
			prev = seen[x];
			if (prev != 0)
				return fail(c, "%s: lcore %lld already used by %s.%s[%u]",
						p, x, path,
						stage_names[(prev - 1) >> 8],
						(prev - 1) & 0xff);
			seen[x] = (st << 8 | (unsigned int)i) + 1;
			pl->lcores[st][i] = (unsigned int)x;
		}
		pl->n_lcores[st] = json_array_size(arr);
	}
	pl->lcores_set = true;
	return 0;
}

static const char *const idle_mode_names[] = {
	[PA_IDLE_BUSY] = "busy",
	[PA_IDLE_ADAPTIVE] = "adaptive",
	NULL
};

static int
idle_parse(struct ctx *c, const json_t *obj, struct pa_config_idle *id)
{
	static const char *const keys[] = {
		"mode", "spin_polls", "max_sleep_us", NULL
	};
	static const char *const path = "$.pipeline.idle";
	long long x;
	int rc, mode;

	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	rc = get_enum(c, obj, path, "mode", idle_mode_names, &mode);
	if (rc < 0)
		return rc;
	if (rc > 0)
		id->mode = mode;
	rc = get_int(c, obj, path, "spin_polls", 0, CFG_MAX_SPIN_POLLS, &x);
	if (rc < 0)
		return rc;
	if (rc > 0)
		id->spin_polls = (uint32_t)x;
	rc = get_int(c, obj, path, "max_sleep_us", 1, CFG_MAX_MAX_SLEEP_US, &x);
	if (rc < 0)
		return rc;
	if (rc > 0)
		id->max_sleep_us = (uint32_t)x;
	return 0;
}

static int
pipeline_parse(struct ctx *c, const json_t *obj, struct pa_config_pipeline *pl)
{
	static const char *const keys[] = {
		"mode", "lcores", "ring_size", "burst", "tx_drain_us", "latency",
		"idle", NULL
	};
	static const char *const path = "$.pipeline";
	const json_t *v;
	long long x;
	int rc, mode;

	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	rc = get_enum(c, obj, path, "mode", mode_names, &mode);
	if (rc < 0)
		return rc;
	if (rc > 0)
		pl->mode = mode;
	v = json_object_get(obj, "lcores");
	if (v != NULL && lcores_parse(c, v, pl) < 0)
		return -EINVAL;
	rc = get_pow2(c, obj, path, "ring_size", 64, 65536, &x);
	if (rc < 0)
		return rc;
	if (rc > 0)
		pl->ring_size = (uint32_t)x;
	rc = get_int(c, obj, path, "burst", 1, 256, &x);
	if (rc < 0)
		return rc;
	if (rc > 0)
		pl->burst = (uint16_t)x;
	rc = get_int(c, obj, path, "tx_drain_us", 1, 100000, &x);
	if (rc < 0)
		return rc;
	if (rc > 0)
		pl->tx_drain_us = (uint32_t)x;
	if (get_bool(c, obj, path, "latency", &pl->latency) < 0)
		return -EINVAL;
	v = json_object_get(obj, "idle");
	if (v != NULL && idle_parse(c, v, &pl->idle) < 0)
		return -EINVAL;
	return 0;
}

/* ------------------------------------------------------------------ */
/* ACL                                                                 */
/* ------------------------------------------------------------------ */

static const char *const action_names[] = {
	[PA_ACL_PERMIT] = "permit",
	[PA_ACL_DROP] = "drop",
	[PA_ACL_MARK] = "mark",
	[PA_ACL_POLICE] = "police",
	NULL
};

static const char *const default_names[] = { "permit", "drop", NULL };
static const char *const non_ip_names[] = { "forward", "drop", NULL };

static int
rule_prefix(struct ctx *c, const json_t *obj, const char *path,
		const char *key, struct pa_ip_prefix *pfx)
{
	char why[PA_CONFIG_ERR_MAX / 2];
	char p[CFG_PATH_LEN];
	const char *s = NULL;
	int rc;

	pfx->addr.family = 0;
	rc = get_string(c, obj, path, key, &s);
	if (rc <= 0)
		return rc;
	if (pa_net_parse_prefix(s, pfx, why, sizeof(why)) < 0)
		return fail(c, "%s: %s", kpath(p, sizeof(p), path, key), why);
	return 1;
}

static int
rule_ports(struct ctx *c, const json_t *obj, const char *path,
		const char *key, struct pa_port_range *r)
{
	char why[PA_CONFIG_ERR_MAX / 2];
	char p[CFG_PATH_LEN];
	const json_t *v;
	unsigned long x;

	r->lo = 0;
	r->hi = 65535;
	v = json_object_get(obj, key);
	if (v == NULL)
		return 0;
	kpath(p, sizeof(p), path, key);
	if (json_is_integer(v)) {
		if (port_number(c, v, p, 0, 65535, &x) < 0)
			return -EINVAL;
		r->lo = r->hi = (uint16_t)x;
		return 1;
	}
	if (!json_is_string(v))
		return fail(c, "%s: expected a string (\"any\", \"N\", \"LO-HI\") or an integer, got %s",
				p, type_name(v));
	if (pa_net_parse_port_range(json_string_value(v), r, why,
			sizeof(why)) < 0)
		return fail(c, "%s: %s", p, why);
	return 1;
}

/* A field that only some actions take. */
static int
action_field(struct ctx *c, const json_t *obj, const char *path,
		const char *key, bool wanted, const char *action,
		long long min, long long max, long long *out)
{
	int rc;

	if (!wanted) {
		if (json_object_get(obj, key) != NULL)
			return fail(c, "%s.%s: only valid with \"action\": \"%s\"",
					path, key, action);
		return 0;
	}
	rc = get_int(c, obj, path, key, min, max, out);
	if (rc == 0)
		return fail(c, "%s.%s: required with \"action\": \"%s\"", path,
				key, action);
	return rc;
}

static int
rule_parse(struct ctx *c, const json_t *obj, const char *path,
		const struct pa_config *cfg, struct pa_config_acl_rule *r)
{
	static const char *const keys[] = {
		"id", "priority", "src", "dst", "sport", "dport", "proto",
		"action", "dscp", "rate_pps", "burst", "in_port", NULL
	};
	char why[PA_CONFIG_ERR_MAX / 2];
	char p[CFG_PATH_LEN], buf[INET6_ADDRSTRLEN + 8];
	const json_t *v;
	const char *s = NULL;
	long long x;
	int rc, a;

	memset(r, 0, sizeof(*r));
	r->in_port = -1;
	r->proto = PA_PROTO_ANY;
	r->sport.hi = 65535;
	r->dport.hi = 65535;
	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;

	rc = get_int(c, obj, path, "id", 1, CFG_MAX_RULE_ID, &x);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(c, path, "id");
	r->id = (uint32_t)x;
	rc = get_int(c, obj, path, "priority", 0, INT32_MAX, &x);
	if (rc < 0)
		return rc;
	if (rc > 0)
		r->priority = (int32_t)x;
	if (rule_prefix(c, obj, path, "src", &r->src) < 0 ||
			rule_prefix(c, obj, path, "dst", &r->dst) < 0)
		return -EINVAL;
	if (r->src.addr.family != 0 && r->dst.addr.family != 0 &&
			r->src.addr.family != r->dst.addr.family)
		return fail(c, "%s.dst: %s prefix '%s' but src is %s; a rule matches one address family (use \"any\" or two rules)",
				path, pa_net_family_name(r->dst.addr.family),
				pa_net_format_prefix(&r->dst, buf, sizeof(buf)),
				pa_net_family_name(r->src.addr.family));
	if (rule_ports(c, obj, path, "sport", &r->sport) < 0 ||
			rule_ports(c, obj, path, "dport", &r->dport) < 0)
		return -EINVAL;
	v = json_object_get(obj, "proto");
	if (v != NULL && pa_config_parse_proto(v, &r->proto, why,
			sizeof(why)) < 0)
		return fail(c, "%s: %s", kpath(p, sizeof(p), path, "proto"), why);

	rc = get_enum(c, obj, path, "action", action_names, &a);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(c, path, "action");
	r->action = a;
	if (action_field(c, obj, path, "dscp", a == PA_ACL_MARK, "mark",
			0, 63, &x) < 0)
		return -EINVAL;
	if (a == PA_ACL_MARK)
		r->dscp = (uint8_t)x;
	if (action_field(c, obj, path, "rate_pps", a == PA_ACL_POLICE,
			"police", 1, INT64_MAX, &x) < 0)
		return -EINVAL;
	if (a == PA_ACL_POLICE)
		r->rate_pps = (uint64_t)x;
	if (action_field(c, obj, path, "burst", a == PA_ACL_POLICE,
			"police", 1, INT64_MAX, &x) < 0)
		return -EINVAL;
	if (a == PA_ACL_POLICE)
		r->burst = (uint64_t)x;

	rc = get_string(c, obj, path, "in_port", &s);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		r->in_port = pa_config_port_index(cfg, s);
		if (r->in_port < 0)
			return fail(c, "%s.in_port: unknown port '%s'", path, s);
	}
	return 0;
}

int
pa_config_parse_acl_rule(const json_t *obj, const struct pa_config *cfg,
		const char *path, struct pa_config_acl_rule *rule,
		char *err, size_t err_len)
{
	struct ctx c = { err, err_len };

	return rule_parse(&c, obj, path != NULL ? path : "$", cfg, rule);
}

struct id_idx {
	uint32_t id;
	unsigned int idx;
};

static int
id_idx_cmp(const void *a, const void *b)
{
	const struct id_idx *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Report the first rule (in document order) whose id was used before. */
static int
rules_check_ids(struct ctx *c, const struct pa_config_acl *acl)
{
	struct id_idx *v;
	unsigned int i, first = 0, dup = UINT32_MAX, dup_first = 0;

	if (acl->n_rules < 2)
		return 0;
	v = malloc(acl->n_rules * sizeof(*v));
	if (v == NULL)
		return fail_nomem(c, "$.acl.rules");
	for (i = 0; i < acl->n_rules; i++) {
		v[i].id = acl->rules[i].id;
		v[i].idx = i;
	}
	qsort(v, acl->n_rules, sizeof(*v), id_idx_cmp);
	for (i = 1; i < acl->n_rules; i++) {
		if (v[i].id != v[i - 1].id) {
			first = i;
			continue;
		}
		if (v[i].idx < dup) {
			dup = v[i].idx;
			dup_first = v[first].idx;
		}
	}
	free(v);
	if (dup != UINT32_MAX)
		return fail(c, "$.acl.rules[%u].id: duplicate id %u (also $.acl.rules[%u])",
				dup, acl->rules[dup].id, dup_first);
	return 0;
}

static int
acl_parse(struct ctx *c, const json_t *obj, struct pa_config *cfg)
{
	static const char *const keys[] = {
		"default", "non_ip", "rules", NULL
	};
	static const char *const path = "$.acl";
	struct pa_config_acl *acl = &cfg->acl;
	char p[CFG_PATH_LEN];
	const json_t *arr, *v;
	size_t i;
	int rc, x;

	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	acl->present = true;
	rc = get_enum(c, obj, path, "default", default_names, &x);
	if (rc < 0)
		return rc;
	acl->def = rc > 0 && x == 1 ? PA_ACL_DROP : PA_ACL_PERMIT;
	rc = get_enum(c, obj, path, "non_ip", non_ip_names, &x);
	if (rc < 0)
		return rc;
	acl->non_ip_drop = rc > 0 && x == 1;
	arr = json_object_get(obj, "rules");
	if (arr == NULL)
		return 0;
	if (want_array(c, arr, "$.acl.rules") < 0)
		return -EINVAL;
	if (json_array_size(arr) == 0)
		return 0;
	acl->rules = calloc(json_array_size(arr), sizeof(*acl->rules));
	if (acl->rules == NULL)
		return fail_nomem(c, "$.acl.rules");
	json_array_foreach(arr, i, v) {
		ipath(p, sizeof(p), "$.acl.rules", i);
		rc = rule_parse(c, v, p, cfg, &acl->rules[i]);
		if (rc < 0)
			return rc;
		acl->n_rules = i + 1;
	}
	return rules_check_ids(c, acl);
}

/* ------------------------------------------------------------------ */
/* LB                                                                  */
/* ------------------------------------------------------------------ */

static const char *const sched_names[] = {
	[PA_LB_MAGLEV] = "maglev",
	[PA_LB_RR] = "rr",
	[PA_LB_WRR] = "wrr",
	[PA_LB_LC] = "lc",
	NULL
};

static const char *const forward_names[] = {
	[PA_LB_IPIP] = "ipip",
	[PA_LB_NAT] = "nat",
	[PA_LB_DSR] = "dsr",
	NULL
};

static const char *const state_names[] = {
	[PA_LB_UP] = "up",
	[PA_LB_DOWN] = "down",
	[PA_LB_DRAIN] = "drain",
	NULL
};

static bool
is_prime(unsigned long n)
{
	unsigned long d;

	if (n < 2)
		return false;
	if (n % 2 == 0)
		return n == 2;
	for (d = 3; d * d <= n; d += 2)
		if (n % d == 0)
			return false;
	return true;
}

static int
backend_parse(struct ctx *c, const json_t *obj, const char *path,
		const struct pa_config_service *svc, struct pa_config_backend *be)
{
	static const char *const keys[] = {
		"addr", "port", "weight", "mac", "state", NULL
	};
	char p[CFG_PATH_LEN], buf[INET6_ADDRSTRLEN];
	const json_t *v;
	unsigned long port;
	long long x;
	int rc, st;

	memset(be, 0, sizeof(*be));
	be->weight = 1;
	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	rc = get_ip(c, obj, path, "addr", &be->addr);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(c, path, "addr");
	if (be->addr.family != svc->vip.family)
		return fail(c, "%s.addr: %s backend '%s' for an %s service",
				path, pa_net_family_name(be->addr.family),
				pa_net_format_ip(&be->addr, buf, sizeof(buf)),
				pa_net_family_name(svc->vip.family));
	if (pa_ip_unicast_problem(&be->addr) != NULL)
		return fail(c, "%s.addr: '%s' is %s, not a backend", path,
				pa_net_format_ip(&be->addr, buf, sizeof(buf)),
				pa_ip_unicast_problem(&be->addr));
	if (pa_ip_equal(&be->addr, &svc->vip))
		return fail(c, "%s.addr: '%s' is the service's own VIP", path,
				pa_net_format_ip(&be->addr, buf, sizeof(buf)));
	v = json_object_get(obj, "port");
	if (v != NULL) {
		kpath(p, sizeof(p), path, "port");
		if (port_number(c, v, p, 0, 65535, &port) < 0)
			return -EINVAL;
		if (svc->forward != PA_LB_NAT && port != 0 && port != svc->port)
			return fail(c, "%s: forward \"%s\" cannot change the destination port (only \"nat\" can); use 0 or %u",
					p, forward_names[svc->forward], svc->port);
		be->port = (uint16_t)port;
	}
	rc = get_int(c, obj, path, "weight", 0, 65535, &x);
	if (rc < 0)
		return rc;
	if (rc > 0)
		be->weight = (uint32_t)x;
	rc = get_mac(c, obj, path, "mac", be->mac);
	if (rc < 0)
		return rc;
	be->has_mac = rc > 0;
	if (svc->forward == PA_LB_DSR && !be->has_mac)
		return fail(c, "%s.mac: required with \"forward\": \"dsr\"", path);
	rc = get_enum(c, obj, path, "state", state_names, &st);
	if (rc < 0)
		return rc;
	if (rc > 0)
		be->state = st;
	return 0;
}

int
pa_config_parse_backend(const json_t *obj,
		const struct pa_config_service *svc, const char *path,
		struct pa_config_backend *be, char *err, size_t err_len)
{
	struct ctx c = { err, err_len };

	return backend_parse(&c, obj, path != NULL ? path : "$", svc, be);
}

void
pa_config_service_clear(struct pa_config_service *svc)
{
	if (svc == NULL)
		return;
	free(svc->backends);
	svc->backends = NULL;
	svc->n_backends = 0;
}

static int
service_parse(struct ctx *c, const json_t *obj, const char *path,
		const struct pa_config_lb *lb, struct pa_config_service *svc)
{
	static const char *const keys[] = {
		"name", "vip", "port", "proto", "scheduler", "forward",
		"table_size", "backends", NULL
	};
	char p[CFG_PATH_LEN], bp[CFG_PATH_LEN], why[PA_CONFIG_ERR_MAX / 2];
	char buf[INET6_ADDRSTRLEN];
	const json_t *v, *arr;
	unsigned long port;
	unsigned int j;
	long long x;
	size_t i;
	int rc, e, proto;
	bool need4, need6;

	memset(svc, 0, sizeof(*svc));
	svc->table_size = CFG_DEFAULT_TABLE_SIZE;
	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	if (get_name(c, obj, path, "name", svc->name) < 0)
		return -EINVAL;
	rc = get_ip(c, obj, path, "vip", &svc->vip);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(c, path, "vip");
	if (pa_ip_unicast_problem(&svc->vip) != NULL)
		return fail(c, "%s.vip: '%s' is %s, not a VIP", path,
				pa_net_format_ip(&svc->vip, buf, sizeof(buf)),
				pa_ip_unicast_problem(&svc->vip));
	v = json_object_get(obj, "port");
	if (v == NULL)
		return missing(c, path, "port");
	if (port_number(c, v, kpath(p, sizeof(p), path, "port"), 1, 65535,
			&port) < 0)
		return -EINVAL;
	svc->port = (uint16_t)port;
	v = json_object_get(obj, "proto");
	if (v == NULL)
		return missing(c, path, "proto");
	kpath(p, sizeof(p), path, "proto");
	if (pa_config_parse_proto(v, &proto, why, sizeof(why)) < 0)
		return fail(c, "%s: %s", p, why);
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return fail(c, "%s: a service is \"tcp\" or \"udp\"", p);
	svc->proto = (uint8_t)proto;
	rc = get_enum(c, obj, path, "scheduler", sched_names, &e);
	if (rc < 0)
		return rc;
	if (rc > 0)
		svc->scheduler = e;
	rc = get_enum(c, obj, path, "forward", forward_names, &e);
	if (rc < 0)
		return rc;
	if (rc > 0)
		svc->forward = e;
	need4 = svc->forward == PA_LB_IPIP && svc->vip.family == AF_INET &&
		(lb == NULL || !lb->has_local_addr);
	need6 = svc->forward == PA_LB_IPIP && svc->vip.family == AF_INET6 &&
		(lb == NULL || !lb->has_local_addr6);
	if (need4 || need6)
		return fail(c, "%s.forward: \"ipip\"%s for an %s service needs $.lb.%s (the outer source address)",
				path,
				json_object_get(obj, "forward") == NULL ?
					" (the default)" : "",
				pa_net_family_name(svc->vip.family),
				need4 ? "local_addr" : "local_addr6");
	rc = get_int(c, obj, path, "table_size", CFG_MIN_TABLE_SIZE,
			CFG_MAX_TABLE_SIZE, &x);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		if (!is_prime((unsigned long)x))
			return fail(c, "%s.table_size: %lld is not a prime", path, x);
		svc->table_size = (uint32_t)x;
	}
	arr = json_object_get(obj, "backends");
	if (arr == NULL)
		return 0;
	kpath(p, sizeof(p), path, "backends");
	if (want_array(c, arr, p) < 0)
		return -EINVAL;
	if (json_array_size(arr) == 0)
		return 0;
	svc->backends = calloc(json_array_size(arr), sizeof(*svc->backends));
	if (svc->backends == NULL)
		return fail_nomem(c, p);
	json_array_foreach(arr, i, v) {
		ipath(bp, sizeof(bp), p, i);
		rc = backend_parse(c, v, bp, svc, &svc->backends[i]);
		if (rc < 0)
			goto out;
		for (j = 0; j < i; j++) {
			if (pa_ip_equal(&svc->backends[j].addr,
					&svc->backends[i].addr)) {
				rc = fail(c, "%s.addr: duplicate backend '%s' (also %s[%u])",
						bp,
						pa_net_format_ip(&svc->backends[i].addr,
							buf, sizeof(buf)),
						p, j);
				goto out;
			}
		}
		svc->n_backends = i + 1;
	}
	return 0;
out:
	pa_config_service_clear(svc);
	return rc;
}

int
pa_config_parse_service(const json_t *obj, const struct pa_config_lb *lb,
		const char *path, struct pa_config_service *svc,
		char *err, size_t err_len)
{
	struct ctx c = { err, err_len };

	return service_parse(&c, obj, path != NULL ? path : "$", lb, svc);
}

static const char *
proto_name(int proto)
{
	const char *n = pa_net_proto_name(proto);

	return n != NULL ? n : "?";
}

static void
flow_table_defaults(struct pa_config_flow_table *ft)
{
	ft->size = CFG_DEFAULT_FLOWS;
	ft->tcp_timeout = CFG_DEFAULT_TCP_TIMEOUT;
	ft->tcp_fin_timeout = CFG_DEFAULT_TCP_FIN_TIMEOUT;
	ft->udp_timeout = CFG_DEFAULT_UDP_TIMEOUT;
}

static int
flow_table_parse(struct ctx *c, const json_t *obj,
		struct pa_config_flow_table *ft)
{
	static const char *const keys[] = {
		"size", "tcp_timeout", "tcp_fin_timeout", "udp_timeout", NULL
	};
	static const char *const path = "$.lb.flow_table";
	const struct {
		const char *key;
		long long min;
		long long max;
		uint32_t *out;
	} fields[] = {
		{ "size", CFG_MIN_FLOWS, CFG_MAX_FLOWS, &ft->size },
		{ "tcp_timeout", 1, CFG_MAX_TIMEOUT, &ft->tcp_timeout },
		{ "tcp_fin_timeout", 1, CFG_MAX_TIMEOUT, &ft->tcp_fin_timeout },
		{ "udp_timeout", 1, CFG_MAX_TIMEOUT, &ft->udp_timeout },
	};
	long long x;
	size_t i;
	int rc;

	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		rc = get_int(c, obj, path, fields[i].key, fields[i].min,
				fields[i].max, &x);
		if (rc < 0)
			return rc;
		if (rc > 0)
			*fields[i].out = (uint32_t)x;
	}
	return 0;
}

static int
lb_parse(struct ctx *c, const json_t *obj, struct pa_config *cfg)
{
	static const char *const keys[] = {
		"local_addr", "local_addr6", "flow_table", "services", NULL
	};
	static const char *const path = "$.lb";
	struct pa_config_lb *lb = &cfg->lb;
	struct pa_config_service *a, *b;
	char p[CFG_PATH_LEN], buf[INET6_ADDRSTRLEN];
	const json_t *arr, *v;
	unsigned int j;
	size_t i;
	int rc;

	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	lb->present = true;
	rc = get_ip(c, obj, path, "local_addr", &lb->local_addr);
	if (rc < 0)
		return rc;
	if (rc > 0 && lb->local_addr.family != AF_INET)
		return fail(c, "$.lb.local_addr: expected an IPv4 address, got '%s' (IPv6 goes in local_addr6)",
				json_string_value(json_object_get(obj, "local_addr")));
	lb->has_local_addr = rc > 0;
	rc = get_ip(c, obj, path, "local_addr6", &lb->local_addr6);
	if (rc < 0)
		return rc;
	if (rc > 0 && lb->local_addr6.family != AF_INET6)
		return fail(c, "$.lb.local_addr6: expected an IPv6 address, got '%s' (IPv4 goes in local_addr)",
				json_string_value(json_object_get(obj, "local_addr6")));
	lb->has_local_addr6 = rc > 0;
	v = json_object_get(obj, "flow_table");
	if (v != NULL && (rc = flow_table_parse(c, v, &lb->flow_table)) < 0)
		return rc;

	arr = json_object_get(obj, "services");
	if (arr == NULL)
		return 0;
	if (want_array(c, arr, "$.lb.services") < 0)
		return -EINVAL;
	if (json_array_size(arr) == 0)
		return 0;
	lb->services = calloc(json_array_size(arr), sizeof(*lb->services));
	if (lb->services == NULL)
		return fail_nomem(c, "$.lb.services");
	json_array_foreach(arr, i, v) {
		ipath(p, sizeof(p), "$.lb.services", i);
		rc = service_parse(c, v, p, lb, &lb->services[i]);
		if (rc < 0)
			return rc;
		lb->n_services = i + 1;
		a = &lb->services[i];
		for (j = 0; j < i; j++) {
			b = &lb->services[j];
			if (strcmp(a->name, b->name) == 0)
				return fail(c, "%s.name: duplicate service name '%s' (also $.lb.services[%u])",
						p, a->name, j);
			if (pa_ip_equal(&a->vip, &b->vip) && a->port == b->port &&
					a->proto == b->proto)
				return fail(c, "%s.vip: %s port %u %s is already service '%s' ($.lb.services[%u])",
						p, pa_net_format_ip(&a->vip, buf,
							sizeof(buf)),
						a->port, proto_name(a->proto),
						b->name, j);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Metrics                                                             */
/* ------------------------------------------------------------------ */

static int
listen_check(const char *s, char *why, size_t why_len)
{
	char host[INET6_ADDRSTRLEN + 1];
	struct pa_ip_addr a;
	const char *colon, *end, *h;
	unsigned long port;
	size_t hlen;

	if (s[0] == '[') {
		h = s + 1;
		colon = strstr(s, "]:");
		if (colon == NULL)
			goto bad;
		hlen = colon - h;
		colon++;
	} else {
		h = s;
		colon = strrchr(s, ':');
		if (colon == NULL)
			goto bad;
		hlen = colon - h;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (pa_net_parse_ip(host, &a, NULL, 0) < 0)
		return why_set(why, why_len,
				"invalid listen address '%s': invalid IP address '%s'",
				s, host);
	if ((s[0] == '[') != (a.family == AF_INET6))
		goto bad;
	if (pa_net_parse_number(colon + 1, &end, 65535, &port) < 0 || *end != '\0' ||
			port == 0)
		return why_set(why, why_len,
				"invalid listen address '%s': port must be 1..65535",
				s);
	return 0;
bad:
	return why_set(why, why_len,
			"invalid listen address '%s' (expected IPV4:PORT or [IPV6]:PORT)",
			s);
}

static int
metrics_parse(struct ctx *c, const json_t *v, struct pa_config_metrics *m)
{
	static const char *const keys[] = { "listen", NULL };
	static const char *const path = "$.metrics";
	char why[PA_CONFIG_ERR_MAX / 2];
	const char *s = CFG_DEFAULT_LISTEN;
	int rc;

	m->present = true;
	if (json_is_null(v)) {
		m->enabled = false;
		return 0;
	}
	if (!json_is_object(v))
		return fail(c, "%s: expected an object or null, got %s", path,
				type_name(v));
	if (check_keys(c, v, path, keys) < 0)
		return -EINVAL;
	rc = get_string(c, v, path, "listen", &s);
	if (rc < 0)
		return rc;
	if (strlen(s) >= sizeof(m->listen))
		return fail(c, "$.metrics.listen: too long");
	if (listen_check(s, why, sizeof(why)) < 0)
		return fail(c, "$.metrics.listen: %s", why);
	snprintf(m->listen, sizeof(m->listen), "%s", s);
	m->enabled = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* RPC server limits                                                   */
/* ------------------------------------------------------------------ */

static void
rpc_defaults(struct pa_config_rpc *r)
{
	r->max_connections = PA_RPC_DEFAULT_MAX_CONNS;
	r->max_request_bytes = PA_RPC_DEFAULT_MAX_REQUEST;
	r->max_depth = PA_RPC_DEFAULT_MAX_DEPTH;
	r->idle_timeout = PA_RPC_DEFAULT_IDLE_TIMEOUT_MS / 1000;
}

/* "rpc.group": a group name or number; must exist on this host. */
static int
rpc_group(struct ctx *c, const json_t *g, struct pa_config_rpc *r)
{
	char buf[4096];
	struct group gr, *res = NULL;
	const char *name;
	char *end;
	unsigned long n;

	if (!json_is_string(g) || json_string_length(g) == 0 ||
	    json_string_length(g) >= sizeof(r->group))
		return fail(c, "$.rpc.group: expected a group name or number (1..%zu characters)",
				sizeof(r->group) - 1);
	name = json_string_value(g);
	errno = 0;
	n = strtoul(name, &end, 10);
	if (*end == '\0' && errno == 0 && n <= UINT32_MAX - 1) {
		if (getgrgid_r((gid_t)n, &gr, buf, sizeof(buf), &res) != 0 ||
		    res == NULL)
			return fail(c, "$.rpc.group: no group with id %lu", n);
	} else if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) != 0 ||
		   res == NULL) {
		return fail(c, "$.rpc.group: no group '%s'", name);
	}
	r->has_group = true;
	r->gid = (uint32_t)gr.gr_gid;
	snprintf(r->group, sizeof(r->group), "%s", name);
	return 0;
}

static int
rpc_parse(struct ctx *c, const json_t *obj, struct pa_config_rpc *r)
{
	static const char *const keys[] = {
		"max_connections", "max_request_bytes", "max_depth",
		"idle_timeout", "group", NULL
	};
	const json_t *g;
	static const char *const path = "$.rpc";
	long long v;
	int rc;

	if (want_object(c, obj, path) < 0 || check_keys(c, obj, path, keys) < 0)
		return -EINVAL;
	r->present = true;
	rc = get_int(c, obj, path, "max_connections", 1, CFG_MAX_RPC_CONNS, &v);
	if (rc < 0)
		return rc;
	if (rc > 0)
		r->max_connections = (uint32_t)v;
	rc = get_int(c, obj, path, "max_request_bytes", CFG_MIN_RPC_REQUEST,
			CFG_MAX_RPC_REQUEST, &v);
	if (rc < 0)
		return rc;
	if (rc > 0)
		r->max_request_bytes = (uint64_t)v;
	rc = get_int(c, obj, path, "max_depth", CFG_MIN_RPC_DEPTH,
			CFG_MAX_RPC_DEPTH, &v);
	if (rc < 0)
		return rc;
	if (rc > 0)
		r->max_depth = (uint32_t)v;
	rc = get_int(c, obj, path, "idle_timeout", 1, CFG_MAX_TIMEOUT, &v);
	if (rc < 0)
		return rc;
	if (rc > 0)
		r->idle_timeout = (uint32_t)v;
	g = json_object_get(obj, "group");
	if (g != NULL)
		return rpc_group(c, g, r);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Document                                                            */
/* ------------------------------------------------------------------ */

void
pa_config_free(struct pa_config *cfg)
{
	unsigned int i;

	if (cfg == NULL)
		return;
	ports_clear(cfg);
	free(cfg->acl.rules);
	for (i = 0; i < cfg->lb.n_services; i++)
		pa_config_service_clear(&cfg->lb.services[i]);
	free(cfg->lb.services);
	free(cfg);
}

static int
config_parse(struct ctx *c, const json_t *doc, const struct pa_config_opts *opts,
		struct pa_config *cfg)
{
	static const char *const keys[] = {
		"ports", "pipeline", "acl", "lb", "metrics", "rpc", NULL
	};
	struct pa_config_port l3;
	const char *replay_port;
	char why[PA_CONFIG_ERR_MAX / 2];
	const json_t *v;
	int rc;

	cfg->pipeline.mode = PA_PIPELINE_RTC;
	cfg->pipeline.ring_size = CFG_DEFAULT_RING_SIZE;
	cfg->pipeline.burst = CFG_DEFAULT_BURST;
	cfg->pipeline.tx_drain_us = CFG_DEFAULT_TX_DRAIN_US;
	cfg->pipeline.latency = true;
	cfg->pipeline.idle.mode = PA_IDLE_BUSY;
	cfg->pipeline.idle.spin_polls = CFG_DEFAULT_SPIN_POLLS;
	cfg->pipeline.idle.max_sleep_us = CFG_DEFAULT_MAX_SLEEP_US;
	cfg->acl.def = PA_ACL_PERMIT;
	flow_table_defaults(&cfg->lb.flow_table);
	rpc_defaults(&cfg->rpc);

	if (doc == NULL)
		return fail(c, "$: no document");
	if (want_object(c, doc, "$") < 0 || check_keys(c, doc, "$", keys) < 0)
		return -EINVAL;

	v = json_object_get(doc, "ports");
	if (v != NULL) {
		rc = ports_parse(c, v, cfg, opts);
		if (rc < 0)
			return rc;
		cfg->ports_present = true;
	}
	if (opts != NULL && opts->replay) {
		replay_port = opts->replay_port != NULL ?
			opts->replay_port : CFG_DEFAULT_REPLAY_PORT;
		if (pa_config_check_name(replay_port, why, sizeof(why)) < 0)
			return fail(c, "replay port: %s", why);
		/* a port of the document named like the replay port lends
		 * it its L3 settings (addresses, gateway), so that a replay
		 * can answer ARP/ND for them and resolve */
		rc = pa_config_port_index(cfg, replay_port);
		memset(&l3, 0, sizeof(l3));
		if (rc >= 0) {
			l3.has_gateway_mac = cfg->ports[rc].has_gateway_mac;
			memcpy(l3.gateway_mac, cfg->ports[rc].gateway_mac, 6);
			l3.has_gateway = cfg->ports[rc].has_gateway;
			l3.gateway = cfg->ports[rc].gateway;
			l3.n_addrs = cfg->ports[rc].n_addrs;
			memcpy(l3.addrs, cfg->ports[rc].addrs, sizeof(l3.addrs));
		}
		ports_clear(cfg);
		cfg->ports_present = false;
		snprintf(cfg->ports[0].name, sizeof(cfg->ports[0].name), "%s",
				replay_port);
		cfg->ports[0].promisc = true;
		cfg->ports[0].peer = 0;
		cfg->ports[0].has_gateway_mac = l3.has_gateway_mac;
		memcpy(cfg->ports[0].gateway_mac, l3.gateway_mac, 6);
		cfg->ports[0].has_gateway = l3.has_gateway;
		cfg->ports[0].gateway = l3.gateway;
		cfg->ports[0].n_addrs = l3.n_addrs;
		memcpy(cfg->ports[0].addrs, l3.addrs, sizeof(l3.addrs));
		cfg->n_ports = 1;
	}

	v = json_object_get(doc, "pipeline");
	if (v != NULL && (rc = pipeline_parse(c, v, &cfg->pipeline)) < 0)
		return rc;
	v = json_object_get(doc, "acl");
	if (v != NULL && (rc = acl_parse(c, v, cfg)) < 0)
		return rc;
	v = json_object_get(doc, "lb");
	if (v != NULL && (rc = lb_parse(c, v, cfg)) < 0)
		return rc;
	v = json_object_get(doc, "metrics");
	if (v != NULL) {
		rc = metrics_parse(c, v, &cfg->metrics);
		if (rc < 0)
			return rc;
	} else {
		/* Absent: on in live mode, off in replay (CONTRACT 3). */
		cfg->metrics.enabled = !(opts != NULL && opts->replay);
		snprintf(cfg->metrics.listen, sizeof(cfg->metrics.listen),
				"%s", CFG_DEFAULT_LISTEN);
	}
	v = json_object_get(doc, "rpc");
	if (v != NULL && (rc = rpc_parse(c, v, &cfg->rpc)) < 0)
		return rc;
	return 0;
}

struct pa_config *
pa_config_load_json(const json_t *doc, const struct pa_config_opts *opts,
		char *err, size_t err_len)
{
	struct ctx c = { err, err_len };
	struct pa_config *cfg;

	if (err != NULL && err_len > 0)
		err[0] = '\0';
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL) {
		fail_nomem(&c, "$");
		return NULL;
	}
	if (config_parse(&c, doc, opts, cfg) < 0) {
		pa_config_free(cfg);
		return NULL;
	}
	return cfg;
}

struct pa_config *
pa_config_load_file(const char *path, const struct pa_config_opts *opts,
		char *err, size_t err_len)
{
	struct ctx c = { err, err_len };
	struct pa_config *cfg;
	json_error_t jerr;
	json_t *doc;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL) {
		fail(&c, "%s: %s", path, strerror(errno));
		return NULL;
	}
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (doc == NULL) {
		fail(&c, "%s:%d:%d: JSON syntax error: %s", path, jerr.line,
				jerr.column, jerr.text);
		return NULL;
	}
	cfg = pa_config_load_json(doc, opts, err, err_len);
	json_decref(doc);
	return cfg;
}

struct pa_config *
pa_config_load_string(const char *text, const struct pa_config_opts *opts,
		char *err, size_t err_len)
{
	struct ctx c = { err, err_len };
	struct pa_config *cfg;
	json_error_t jerr;
	json_t *doc;

	if (text == NULL) {
		fail(&c, "$: no document");
		return NULL;
	}
	doc = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL) {
		fail(&c, "<string>:%d:%d: JSON syntax error: %s", jerr.line,
				jerr.column, jerr.text);
		return NULL;
	}
	cfg = pa_config_load_json(doc, opts, err, err_len);
	json_decref(doc);
	return cfg;
}

/* ------------------------------------------------------------------ */
/* Serialization                                                       */
/* ------------------------------------------------------------------ */

/* json_object_set_new() and json_array_append_new() take NULL values as
 * failures, so a chain of them with "rc |=" catches allocation failures. */

static json_t *
ip_json(const struct pa_ip_addr *a)
{
	char buf[INET6_ADDRSTRLEN];

	return json_string(pa_net_format_ip(a, buf, sizeof(buf)));
}

static json_t *
prefix_json(const struct pa_ip_prefix *p)
{
	char buf[INET6_ADDRSTRLEN + 8];

	return json_string(pa_net_format_prefix(p, buf, sizeof(buf)));
}

static json_t *
mac_json(const uint8_t mac[6])
{
	char buf[18];

	return json_string(pa_net_format_mac(mac, buf, sizeof(buf)));
}

static json_t *
port_to_json(const struct pa_config *cfg, const struct pa_config_port *port)
{
	json_t *o, *addrs;
	unsigned int i;
	int rc = 0;

	o = json_object();
	addrs = json_array();
	if (o == NULL || addrs == NULL)
		goto fail;
	rc |= json_object_set_new(o, "name", json_string(port->name));
	if (port->devargs != NULL)
		rc |= json_object_set_new(o, "devargs",
				json_string(port->devargs));
	if (port->pci != NULL)
		rc |= json_object_set_new(o, "pci", json_string(port->pci));
	if (port->profile != NULL)
		rc |= json_object_set_new(o, "profile",
				json_string(port->profile));
	if (port->rx_queues != 0)
		rc |= json_object_set_new(o, "rx_queues",
				json_integer(port->rx_queues));
	if (port->tx_queues != 0)
		rc |= json_object_set_new(o, "tx_queues",
				json_integer(port->tx_queues));
	if (port->rx_desc != 0)
		rc |= json_object_set_new(o, "rx_desc",
				json_integer(port->rx_desc));
	if (port->tx_desc != 0)
		rc |= json_object_set_new(o, "tx_desc",
				json_integer(port->tx_desc));
	if (port->mbufs != 0)
		rc |= json_object_set_new(o, "mbufs",
				json_integer(port->mbufs));
	if (port->mtu != 0)
		rc |= json_object_set_new(o, "mtu", json_integer(port->mtu));
	rc |= json_object_set_new(o, "promisc", json_boolean(port->promisc));
	if (port->peer >= 0 && (unsigned int)port->peer < cfg->n_ports)
		rc |= json_object_set_new(o, "peer",
				json_string(cfg->ports[port->peer].name));
	if (port->has_gateway_mac)
		rc |= json_object_set_new(o, "gateway_mac",
				mac_json(port->gateway_mac));
	if (port->has_gateway)
		rc |= json_object_set_new(o, "gateway", ip_json(&port->gateway));
	for (i = 0; i < port->n_addrs; i++)
		rc |= json_array_append_new(addrs, prefix_json(&port->addrs[i]));
	rc |= json_object_set_new(o, "addr", addrs);
	addrs = NULL;
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(addrs);
	json_decref(o);
	return NULL;
}

static json_t *
pipeline_to_json(const struct pa_config_pipeline *pl)
{
	json_t *o, *lc = NULL, *arr;
	unsigned int st, i;
	int rc = 0;

	o = json_object();
	if (o == NULL)
		return NULL;
	rc |= json_object_set_new(o, "mode", json_string(mode_names[pl->mode]));
	if (pl->lcores_set) {
		lc = json_object();
		if (lc == NULL)
			goto fail;
		for (st = 0; st < PA_CONFIG_STAGE_MAX; st++) {
			if (!stage_in_mode(st, pl->mode))
				continue;
			arr = json_array();
			for (i = 0; arr != NULL && i < pl->n_lcores[st]; i++)
				rc |= json_array_append_new(arr,
						json_integer(pl->lcores[st][i]));
			rc |= json_object_set_new(lc, stage_names[st], arr);
		}
		rc |= json_object_set_new(o, "lcores", lc);
	}
	rc |= json_object_set_new(o, "ring_size", json_integer(pl->ring_size));
	rc |= json_object_set_new(o, "burst", json_integer(pl->burst));
	rc |= json_object_set_new(o, "tx_drain_us",
			json_integer(pl->tx_drain_us));
	rc |= json_object_set_new(o, "latency", json_boolean(pl->latency));
	rc |= json_object_set_new(o, "idle", json_pack("{s:s, s:I, s:I}",
			"mode", idle_mode_names[pl->idle.mode],
			"spin_polls", (json_int_t)pl->idle.spin_polls,
			"max_sleep_us", (json_int_t)pl->idle.max_sleep_us));
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *
pa_config_acl_rule_to_json(const struct pa_config_acl_rule *r,
		const struct pa_config *cfg)
{
	char buf[16];
	json_t *o;
	int rc = 0;

	o = json_object();
	if (o == NULL)
		return NULL;
	rc |= json_object_set_new(o, "id", json_integer(r->id));
	rc |= json_object_set_new(o, "priority", json_integer(r->priority));
	rc |= json_object_set_new(o, "src", prefix_json(&r->src));
	rc |= json_object_set_new(o, "dst", prefix_json(&r->dst));
	rc |= json_object_set_new(o, "sport",
			json_string(pa_net_format_port_range(&r->sport, buf, sizeof(buf))));
	rc |= json_object_set_new(o, "dport",
			json_string(pa_net_format_port_range(&r->dport, buf, sizeof(buf))));
	if (r->proto == PA_PROTO_ANY)
		rc |= json_object_set_new(o, "proto", json_string("any"));
	else if (strcmp(proto_name(r->proto), "?") != 0)
		rc |= json_object_set_new(o, "proto",
				json_string(proto_name(r->proto)));
	else
		rc |= json_object_set_new(o, "proto", json_integer(r->proto));
	rc |= json_object_set_new(o, "action",
			json_string(action_names[r->action]));
	if (r->action == PA_ACL_MARK)
		rc |= json_object_set_new(o, "dscp", json_integer(r->dscp));
	if (r->action == PA_ACL_POLICE) {
		rc |= json_object_set_new(o, "rate_pps",
				json_integer((json_int_t)r->rate_pps));
		rc |= json_object_set_new(o, "burst",
				json_integer((json_int_t)r->burst));
	}
	if (r->in_port >= 0 && cfg != NULL &&
			(unsigned int)r->in_port < cfg->n_ports)
		rc |= json_object_set_new(o, "in_port",
				json_string(cfg->ports[r->in_port].name));
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
acl_to_json(const struct pa_config *cfg)
{
	const struct pa_config_acl *acl = &cfg->acl;
	json_t *o, *rules;
	unsigned int i;
	int rc = 0;

	o = json_object();
	rules = json_array();
	if (o == NULL || rules == NULL)
		goto fail;
	rc |= json_object_set_new(o, "default",
			json_string(action_names[acl->def]));
	rc |= json_object_set_new(o, "non_ip",
			json_string(acl->non_ip_drop ? "drop" : "forward"));
	for (i = 0; i < acl->n_rules; i++)
		rc |= json_array_append_new(rules,
				pa_config_acl_rule_to_json(&acl->rules[i], cfg));
	rc |= json_object_set_new(o, "rules", rules);
	rules = NULL;
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(rules);
	json_decref(o);
	return NULL;
}

json_t *
pa_config_backend_to_json(const struct pa_config_backend *be)
{
	json_t *o;
	int rc = 0;

	o = json_object();
	if (o == NULL)
		return NULL;
	rc |= json_object_set_new(o, "addr", ip_json(&be->addr));
	rc |= json_object_set_new(o, "port", json_integer(be->port));
	rc |= json_object_set_new(o, "weight", json_integer(be->weight));
	if (be->has_mac)
		rc |= json_object_set_new(o, "mac", mac_json(be->mac));
	rc |= json_object_set_new(o, "state",
			json_string(state_names[be->state]));
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
pa_config_service_to_json(const struct pa_config_service *svc)
{
	json_t *o, *arr;
	unsigned int i;
	int rc = 0;

	o = json_object();
	arr = json_array();
	if (o == NULL || arr == NULL)
		goto fail;
	rc |= json_object_set_new(o, "name", json_string(svc->name));
	rc |= json_object_set_new(o, "vip", ip_json(&svc->vip));
	rc |= json_object_set_new(o, "port", json_integer(svc->port));
	rc |= json_object_set_new(o, "proto",
			json_string(proto_name(svc->proto)));
	rc |= json_object_set_new(o, "scheduler",
			json_string(sched_names[svc->scheduler]));
	rc |= json_object_set_new(o, "forward",
			json_string(forward_names[svc->forward]));
	rc |= json_object_set_new(o, "table_size",
			json_integer(svc->table_size));
	for (i = 0; i < svc->n_backends; i++)
		rc |= json_array_append_new(arr,
				pa_config_backend_to_json(&svc->backends[i]));
	rc |= json_object_set_new(o, "backends", arr);
	arr = NULL;
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(arr);
	json_decref(o);
	return NULL;
}

static json_t *
flow_table_to_json(const struct pa_config_flow_table *ft)
{
	return json_pack("{s:I, s:I, s:I, s:I}",
			"size", (json_int_t)ft->size,
			"tcp_timeout", (json_int_t)ft->tcp_timeout,
			"tcp_fin_timeout", (json_int_t)ft->tcp_fin_timeout,
			"udp_timeout", (json_int_t)ft->udp_timeout);
}

static json_t *
lb_to_json(const struct pa_config_lb *lb)
{
	json_t *o, *arr;
	unsigned int i;
	int rc = 0;

	o = json_object();
	arr = json_array();
	if (o == NULL || arr == NULL)
		goto fail;
	if (lb->has_local_addr)
		rc |= json_object_set_new(o, "local_addr",
				ip_json(&lb->local_addr));
	if (lb->has_local_addr6)
		rc |= json_object_set_new(o, "local_addr6",
				ip_json(&lb->local_addr6));
	rc |= json_object_set_new(o, "flow_table",
			flow_table_to_json(&lb->flow_table));
	for (i = 0; i < lb->n_services; i++)
		rc |= json_array_append_new(arr,
				pa_config_service_to_json(&lb->services[i]));
	rc |= json_object_set_new(o, "services", arr);
	arr = NULL;
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(arr);
	json_decref(o);
	return NULL;
}

json_t *
pa_config_to_json(const struct pa_config *cfg)
{
	json_t *doc, *ports = NULL, *m;
	unsigned int i;
	int rc = 0;

	if (cfg == NULL)
		return NULL;
	doc = json_object();
	if (doc == NULL)
		return NULL;
	if (cfg->ports_present) {
		ports = json_array();
		if (ports == NULL)
			goto fail;
		for (i = 0; i < cfg->n_ports; i++)
			rc |= json_array_append_new(ports,
					port_to_json(cfg, &cfg->ports[i]));
		rc |= json_object_set_new(doc, "ports", ports);
	}
	rc |= json_object_set_new(doc, "pipeline",
			pipeline_to_json(&cfg->pipeline));
	if (cfg->acl.present)
		rc |= json_object_set_new(doc, "acl", acl_to_json(cfg));
	if (cfg->lb.present)
		rc |= json_object_set_new(doc, "lb", lb_to_json(&cfg->lb));
	if (cfg->metrics.present) {
		if (cfg->metrics.enabled)
			m = json_pack("{s:s}", "listen", cfg->metrics.listen);
		else
			m = json_null();
		rc |= json_object_set_new(doc, "metrics", m);
	}
	if (cfg->rpc.present) {
		json_t *r = json_pack("{s:I, s:I, s:I, s:I}",
				"max_connections",
				(json_int_t)cfg->rpc.max_connections,
				"max_request_bytes",
				(json_int_t)cfg->rpc.max_request_bytes,
				"max_depth", (json_int_t)cfg->rpc.max_depth,
				"idle_timeout",
				(json_int_t)cfg->rpc.idle_timeout);

		if (r != NULL && cfg->rpc.has_group)
			rc |= json_object_set_new(r, "group",
					json_string(cfg->rpc.group));
		rc |= json_object_set_new(doc, "rpc", r);
	}
	if (rc != 0)
		goto fail;
	return doc;
fail:
	json_decref(doc);
	return NULL;
}
