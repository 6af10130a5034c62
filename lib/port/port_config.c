/* SPDX-License-Identifier: BSD-3-Clause */
/* The "ports" configuration section: ports, NIC profiles, the replay port. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_decode.h"
#include "pa_net.h"

#ifndef PA_DRIVERS_CONFIG_DIR
#define PA_DRIVERS_CONFIG_DIR "/usr/share/pktaccel/drivers-config"
#endif

#define CFG_DEFAULT_REPLAY_PORT	"replay0"
#define CFG_MAX_QUEUES		64
#define CFG_MIN_DESC		64
#define CFG_REPLAY_DESC		256	/* the replay port's RX and TX rings */
#define CFG_MAX_DESC		16384
#define CFG_MIN_MTU		68
#define CFG_MAX_MTU		16000
#define CFG_MAX_MBUFS		(16 * 1024 * 1024)
#define CFG_MAX_EXCP_PPS	10000000
#define CFG_MAX_EXCP_BURST	65536

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
			p[2] != ':' || p[5] != '.' || p[6] < '0' || p[6] > '9')
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

/* What a profile holds; validated here, read by lib/port from
 * port->profile_doc. */
struct profile_doc {
	const char *driver;
	const char *description;
	const char *devargs;
	uint16_t rx_queues;
	uint16_t tx_queues;
	uint16_t rx_desc;
	uint16_t tx_desc;
	bool rss;
};

static int
profile_driver_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct profile_doc *d = out;

	if (d->driver[0] == '\0')
		return pa_decode_fail(err, err_len, "%s: must not be empty",
				path);
	return 0;
}

/* An array of distinct names from f->names. */
static int
profile_offloads(const struct pa_decode_field *f, const json_t *arr,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	char p[PA_DECODE_PATH_MAX], list[200];
	const json_t *v, *w;
	const char *s;
	size_t i, j;

	if (pa_decode_want_array(arr, path, err, err_len) < 0)
		return -EINVAL;
	json_array_foreach(arr, i, v) {
		pa_decode_index_path(p, sizeof(p), path, i);
		if (pa_decode_string(v, p, &s, err, err_len) < 0)
			return -EINVAL;
		if (pa_decode_enum_index(f->names, s) < 0) {
			pa_decode_enum_list(f->names, list, sizeof(list));
			return pa_decode_fail(err, err_len,
					"%s: unknown offload '%s' (expected one of %s)",
					p, s, list);
		}
		for (j = 0; j < i; j++) {
			w = json_array_get(arr, j);
			if (strcmp(json_string_value(w), s) == 0)
				return pa_decode_fail(err, err_len,
						"%s: duplicate offload '%s'", p,
						s);
		}
	}
	return 0;
}

#define PROFILE(m)	PA_DECODE_AT(struct profile_doc, m)

static const struct pa_decode_field profile_fields[] = {
	{ .name = "driver", .type = PA_DECODE_STRING, .required = true,
	  PROFILE(driver), .check = profile_driver_check },
	{ .name = "description", .type = PA_DECODE_STRING,
	  PROFILE(description) },
	{ .name = "devargs", .type = PA_DECODE_STRING, PROFILE(devargs) },
	{ .name = "rx_queues", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_QUEUES, PROFILE(rx_queues) },
	{ .name = "tx_queues", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_QUEUES, PROFILE(tx_queues) },
	{ .name = "rx_desc", .type = PA_DECODE_POW2,
	  .min = CFG_MIN_DESC, .max = CFG_MAX_DESC, PROFILE(rx_desc) },
	{ .name = "tx_desc", .type = PA_DECODE_POW2,
	  .min = CFG_MIN_DESC, .max = CFG_MAX_DESC, PROFILE(tx_desc) },
	{ .name = "rss", .type = PA_DECODE_BOOL, PROFILE(rss) },
	{ .name = "rx_offloads", .type = PA_DECODE_CUSTOM,
	  .decode = profile_offloads, .names = rx_offload_names },
	{ .name = "tx_offloads", .type = PA_DECODE_CUSTOM,
	  .decode = profile_offloads, .names = tx_offload_names },
};

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
profile_load(const struct pa_config_opts *opts, const char *path,
		const char *name, json_t **out, char *err, size_t err_len)
{
	char file[4096], inner[PA_CONFIG_ERR_MAX];
	struct profile_doc d;
	json_error_t jerr;
	json_t *doc;
	FILE *f;
	int n;

	n = snprintf(file, sizeof(file), "%s/%s.json", profile_dir(opts), name);
	if (n < 0 || (size_t)n >= sizeof(file))
		return pa_decode_fail(err, err_len, "%s: profile path too long",
				path);
	f = fopen(file, "r");
	if (f == NULL)
		return pa_decode_fail(err, err_len,
				"%s: unknown profile '%s' (%s: %s)", path, name,
				file, strerror(errno));
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (doc == NULL)
		return pa_decode_fail(err, err_len,
				"%s (%s): line %d column %d: %s", path, file,
				jerr.line, jerr.column, jerr.text);
	memset(&d, 0, sizeof(d));
	if (pa_decode_object(doc, "$", profile_fields,
			PA_DECODE_N(profile_fields), &d, NULL, inner,
			sizeof(inner)) < 0) {
		json_decref(doc);
		return pa_decode_fail(err, err_len, "%s (%s): %s", path, file,
				inner);
	}
	*out = doc;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Ports                                                               */
/* ------------------------------------------------------------------ */

/* What a port object names but the port does not keep as is; the
 * decoders below take it as @p arg. Strings are borrowed. */
struct port_doc {
	const struct pa_config_opts *opts;
	const char *devargs;
	const char *pci;
	const char *profile;
	const char *peer;
};

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
port_devargs(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct port_doc *d = arg;

	if (pa_decode_string(v, path, &d->devargs, err, err_len) < 0)
		return -EINVAL;
	if (d->devargs[0] == '\0')
		return pa_decode_fail(err, err_len, "%s: must not be empty",
				path);
	return 0;
}

/* Also called when "pci" is absent: one of "devargs" and "pci". */
static int
port_pci(const struct pa_decode_field *f, const json_t *v, const char *path,
		void *out, void *arg, char *err, size_t err_len)
{
	struct port_doc *d = arg;
	uint64_t id;

	if (v != NULL) {
		if (pa_decode_string(v, path, &d->pci, err, err_len) < 0)
			return -EINVAL;
		if (pci_parse(d->pci, &id) < 0)
			return pa_decode_fail(err, err_len,
					"%s: invalid PCI address '%s' (expected DDDD:BB:DD.F or BB:DD.F)",
					path, d->pci);
	}
	if (d->devargs != NULL && d->pci != NULL)
		return pa_decode_fail(err, err_len,
				"%s: \"pci\" and \"devargs\" are mutually exclusive",
				path);
	if (d->devargs == NULL && d->pci == NULL)
		return pa_decode_fail(err, err_len,
				"%.*s: needs exactly one of \"devargs\" and \"pci\"",
				(int)(strlen(path) - strlen(".pci")), path);
	return 0;
}

static int
port_profile(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_port *port = out;
	struct port_doc *d = arg;
	char why[PA_DECODE_WHY_MAX];

	if (pa_decode_string(v, path, &d->profile, err, err_len) < 0)
		return -EINVAL;
	if (pa_decode_check_name(d->profile, why, sizeof(why)) < 0 ||
			d->profile[0] == '.')
		return pa_decode_fail(err, err_len,
				"%s: invalid profile name '%s'", path,
				d->profile);
	return profile_load(d->opts, path, d->profile, &port->profile_doc,
			err, err_len);
}

static int
port_peer(const struct pa_decode_field *f, const json_t *v, const char *path,
		void *out, void *arg, char *err, size_t err_len)
{
	struct port_doc *d = arg;

	return pa_decode_string(v, path, &d->peer, err, err_len);
}

/* "gateway": one next-hop address, or a list of one IPv4 and one IPv6
 * next hop (a dual-stack port), stored by family. */
static int
port_gateway(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_port *port = out;
	char p[PA_DECODE_PATH_MAX];
	struct pa_ip_addr a;
	const json_t *e;
	unsigned int k;
	size_t i;
	int rc;

	if (port->has_gateway_mac)
		return pa_decode_fail(err, err_len,
				"%s: \"gateway\" and \"gateway_mac\" are mutually exclusive",
				path);
	if (!json_is_array(v)) {
		rc = pa_decode_ip(v, path, &a, err, err_len);
		if (rc < 0)
			return rc;
		k = a.family == AF_INET6;
		port->gateway[k] = a;
		port->has_gateway[k] = true;
		return 0;
	}
	if (json_array_size(v) == 0 || json_array_size(v) > 2)
		return pa_decode_fail(err, err_len,
				"%s: %zu next hops: give one address, or a list of one IPv4 and one IPv6 next hop",
				path, json_array_size(v));
	json_array_foreach(v, i, e) {
		pa_decode_index_path(p, sizeof(p), path, i);
		rc = pa_decode_ip(e, p, &a, err, err_len);
		if (rc < 0)
			return rc;
		k = a.family == AF_INET6;
		if (port->has_gateway[k])
			return pa_decode_fail(err, err_len,
					"%s: a second %s next hop (one per family)",
					p, pa_net_family_name(a.family));
		port->gateway[k] = a;
		port->has_gateway[k] = true;
	}
	return 0;
}

static int
port_addrs(const struct pa_decode_field *f, const json_t *arr,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_port *port = out;
	char why[PA_DECODE_WHY_MAX];
	char p[PA_DECODE_PATH_MAX];
	struct pa_ip_prefix *a;
	const json_t *v;
	const char *s;
	unsigned int j;
	size_t i;

	if (pa_decode_want_array(arr, path, err, err_len) < 0)
		return -EINVAL;
	if (json_array_size(arr) > PA_CONFIG_MAX_ADDRS)
		return pa_decode_fail(err, err_len,
				"%s: %zu addresses, at most %d", path,
				json_array_size(arr), PA_CONFIG_MAX_ADDRS);
	json_array_foreach(arr, i, v) {
		pa_decode_index_path(p, sizeof(p), path, i);
		if (pa_decode_string(v, p, &s, err, err_len) < 0)
			return -EINVAL;
		a = &port->addrs[i];
		if (pa_net_parse_prefix_flags(s, a,
				PA_NET_PREFIX_HOST_OK | PA_NET_PREFIX_NEED_LEN,
				why, sizeof(why)) < 0)
			return pa_decode_fail(err, err_len, "%s: %s", p, why);
		for (j = 0; j < i; j++)
			if (pa_ip_equal(&port->addrs[j].addr, &a->addr))
				return pa_decode_fail(err, err_len,
						"%s: duplicate address '%s' (also %s[%u])",
						p, s, path, j);
		port->n_addrs = i + 1;
	}
	return 0;
}

/* "kernel_if": a kernel interface name the TAP PMD's devargs can carry
 * (no ',' or '='), that the kernel takes (IFNAMSIZ, no '/', ':' or
 * space), on a routed port ("addr" decoded before it). */
static int
port_kernel_if(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_port *port = out;
	const char *name;
	size_t i, n;

	if (pa_decode_string(v, path, &name, err, err_len) < 0)
		return -EINVAL;
	n = strlen(name);
	if (n == 0 || n >= PA_CONFIG_IFNAME_MAX)
		return pa_decode_fail(err, err_len,
				"%s: interface name must have 1 to %d characters",
				path, PA_CONFIG_IFNAME_MAX - 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.'))
			return pa_decode_fail(err, err_len,
					"%s: invalid interface name '%s' (letters, digits, '-', '_', '.')",
					path, name);
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return pa_decode_fail(err, err_len,
				"%s: invalid interface name '%s'", path, name);
	if (port->n_addrs == 0)
		return pa_decode_fail(err, err_len,
				"%s: needs \"addr\" (only a routed port has a kernel interface)",
				path);
	memcpy(port->kernel_if, name, n + 1);
	return 0;
}

/* "kernel_if_pps", "kernel_if_burst": only beside a "kernel_if". */
static int
port_kernel_if_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_port *port = out;

	if (port->kernel_if[0] == '\0')
		return pa_decode_fail(err, err_len, "%s: needs \"kernel_if\"",
				path);
	return 0;
}

#define PORT(m)	PA_DECODE_AT(struct pa_config_port, m)

static const char *const rss_steer_names[] = {
	[PA_CONFIG_RSS_STEER_AUTO] = "auto",
	[PA_CONFIG_RSS_STEER_OFF] = "off",
	[PA_CONFIG_RSS_STEER_TOEPLITZ] = "toeplitz",
	NULL
};

/* The schemas of the custom fields (port_devargs() ... port_kernel_if()) */
static json_t *
port_devargs_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:i, s:s}", "type", "string", "minLength", 1,
			"description", "DPDK device arguments (a vdev); one of devargs and pci");
}

static json_t *
port_pci_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:s, s:s}", "type", "string", "pattern",
			"^([0-9A-Fa-f]{4}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-7]$",
			"description", "PCI address DDDD:BB:DD.F or BB:DD.F; one of devargs and pci");
}

static json_t *
port_gateway_schema(const struct pa_decode_field *f)
{
	json_t *ip = pa_decode_schema_ip(f), *ip2 = pa_decode_schema_ip(f);

	return json_pack("{s:[o{s:s, s:o, s:i, s:i}], s:s}", "anyOf", ip,
			"type", "array", "items", ip2, "minItems", 1,
			"maxItems", 2, "description",
			"the next hop, or one IPv4 and one IPv6 next hop; not with gateway_mac");
}

static json_t *
port_addrs_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:{s:s, s:s}, s:i, s:b, s:s}", "type", "array",
			"items", "type", "string", "pattern",
			"^[0-9A-Fa-f:.]+/[0-9]{1,3}$", "maxItems",
			PA_CONFIG_MAX_ADDRS, "uniqueItems", 1, "description",
			"the port's own addresses ADDRESS/LENGTH: a routed port");
}

static json_t *
port_kernel_if_schema(const struct pa_decode_field *f)
{
	char pat[48];

	snprintf(pat, sizeof(pat), "^[A-Za-z0-9_.-]{1,%d}$",
			PA_CONFIG_IFNAME_MAX - 1);
	return json_pack("{s:s, s:s, s:s}", "type", "string", "pattern", pat,
			"description", "the kernel interface (TAP) of a routed port (with addr); not \".\" or \"..\"");
}

/* In the order of the checks: "devargs"/"pci" and the profile first. */
static const struct pa_decode_field port_fields[] = {
	{ .name = "name", .type = PA_DECODE_NAME, .required = true,
	  PORT(name) },
	{ .name = "devargs", .type = PA_DECODE_CUSTOM, .decode = port_devargs,
	  .schema = port_devargs_schema },
	{ .name = "pci", .type = PA_DECODE_CUSTOM, .decode = port_pci,
	  .flags = PA_DECODE_ALWAYS, .schema = port_pci_schema },
	{ .name = "profile", .type = PA_DECODE_CUSTOM, .decode = port_profile,
	  .schema = pa_decode_schema_name,
	  .doc = "a NIC profile of drivers-config/" },
	{ .name = "rx_queues", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_QUEUES, PORT(rx_queues) },
	{ .name = "tx_queues", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_QUEUES, PORT(tx_queues) },
	{ .name = "rx_desc", .type = PA_DECODE_POW2,
	  .min = CFG_MIN_DESC, .max = CFG_MAX_DESC, PORT(rx_desc) },
	{ .name = "tx_desc", .type = PA_DECODE_POW2,
	  .min = CFG_MIN_DESC, .max = CFG_MAX_DESC, PORT(tx_desc) },
	{ .name = "mtu", .type = PA_DECODE_INT,
	  .min = CFG_MIN_MTU, .max = CFG_MAX_MTU, PORT(mtu) },
	{ .name = "mbufs", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_MBUFS, PORT(mbufs) },
	{ .name = "promisc", .type = PA_DECODE_BOOL, PORT(promisc) },
	{ .name = "peer", .type = PA_DECODE_CUSTOM, .decode = port_peer,
	  .schema = pa_decode_schema_string,
	  .doc = "the name of the port where traffic that is not load-balanced leaves" },
	{ .name = "gateway_mac", .type = PA_DECODE_MAC, PORT(gateway_mac),
	  PA_DECODE_PRESENT(struct pa_config_port, has_gateway_mac) },
	{ .name = "gateway", .type = PA_DECODE_CUSTOM, .decode = port_gateway,
	  .schema = port_gateway_schema },
	{ .name = "addr", .type = PA_DECODE_CUSTOM, .decode = port_addrs,
	  .schema = port_addrs_schema },
	{ .name = "kernel_if", .type = PA_DECODE_CUSTOM,
	  .decode = port_kernel_if, .schema = port_kernel_if_schema },
	{ .name = "kernel_if_pps", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_EXCP_PPS, PORT(kernel_if_pps),
	  .check = port_kernel_if_check },
	{ .name = "kernel_if_burst", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_EXCP_BURST, PORT(kernel_if_burst),
	  .check = port_kernel_if_check },
	{ .name = "rss_steer", .type = PA_DECODE_ENUM,
	  .names = rss_steer_names, PORT(rss_steer) },
};

static char *
dup_or_null(const char *s, bool *nomem)
{
	char *d;

	if (s == NULL)
		return NULL;
	d = strdup(s);
	if (d == NULL)
		*nomem = true;
	return d;
}

static int
port_parse(const json_t *obj, const char *path,
		const struct pa_config_opts *opts, struct pa_config_port *port,
		const char **peer, char *err, size_t err_len)
{
	struct port_doc d = { .opts = opts };
	bool nomem = false;
	int rc;

	memset(port, 0, sizeof(*port));
	*peer = NULL;
	rc = pa_decode_object(obj, path, port_fields, PA_DECODE_N(port_fields),
			port, &d, err, err_len);
	/* the role decides, unless "promisc" is given */
	if (rc == 0 && json_object_get(obj, "promisc") == NULL)
		port->promisc = port->n_addrs == 0;
	if (rc == 0) {
		port->profile = dup_or_null(d.profile, &nomem);
		port->devargs = dup_or_null(d.devargs, &nomem);
		port->pci = dup_or_null(d.pci, &nomem);
		if (nomem)
			rc = pa_decode_nomem(err, err_len, path);
	}
	if (rc < 0) {
		port_clear(port);
		return rc;
	}
	*peer = d.peer;
	return 0;
}

/* The vdev name of a devargs string: what precedes the first ','. */
static size_t
devargs_name_len(const char *d)
{
	const char *comma = strchr(d, ',');

	return comma != NULL ? (size_t)(comma - d) : strlen(d);
}

/* Whether a port is a wire a frame sent back out of would travel on,
 * and so the neighbours on it could see their own frames come back from
 * a transparent port that is its own peer. Lab devices are not: net_null,
 * net_ring, and net_pcap reading and writing files (not "iface=", not
 * the same interface both ways). */
static bool
port_is_wire(const struct pa_config_port *p)
{
	char buf[512], *save = NULL, *kv, *eq;
	const char *rx_if = NULL, *tx_if = NULL;
	size_t n;
	bool wire = false;

	if (p->devargs == NULL)
		return true;			/* a PCI device */
	n = devargs_name_len(p->devargs);
	if ((n >= 8 && strncmp(p->devargs, "net_null", 8) == 0) ||
			(n >= 8 && strncmp(p->devargs, "net_ring", 8) == 0))
		return false;
	if (n < 8 || strncmp(p->devargs, "net_pcap", 8) != 0)
		return true;
	if (snprintf(buf, sizeof(buf), "%s", p->devargs) >= (int)sizeof(buf))
		return true;			/* too long to judge: a wire */
	for (kv = strtok_r(buf, ",", &save); kv != NULL;
			kv = strtok_r(NULL, ",", &save)) {
		eq = strchr(kv, '=');
		if (eq == NULL)
			continue;
		*eq = '\0';
		if (strcmp(kv, "iface") == 0)
			wire = true;
		else if (strcmp(kv, "rx_iface") == 0 ||
				strcmp(kv, "rx_iface_in") == 0)
			rx_if = eq + 1;
		else if (strcmp(kv, "tx_iface") == 0)
			tx_if = eq + 1;
	}
	if (rx_if != NULL && tx_if != NULL && strcmp(rx_if, tx_if) == 0)
		wire = true;
	return wire;
}

static int
ports_parse(const json_t *arr, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	const char *peer[PA_CONFIG_MAX_PORTS];
	char path[PA_DECODE_PATH_MAX];
	struct pa_config_port *a, *b;
	uint64_t ida, idb;
	const json_t *v;
	unsigned int i, j;
	size_t k;
	int rc, idx;

	if (pa_decode_want_array(arr, "$.ports", err, err_len) < 0)
		return -EINVAL;
	if (json_array_size(arr) > PA_CONFIG_MAX_PORTS)
		return pa_decode_fail(err, err_len,
				"$.ports: %zu ports, at most %d",
				json_array_size(arr), PA_CONFIG_MAX_PORTS);
	json_array_foreach(arr, k, v) {
		pa_decode_index_path(path, sizeof(path), "$.ports", k);
		rc = port_parse(v, path, opts, &cfg->ports[k], &peer[k], err,
				err_len);
		if (rc < 0)
			return rc;
		cfg->n_ports = k + 1;
		a = &cfg->ports[k];
		for (j = 0; j < k; j++) {
			b = &cfg->ports[j];
			if (strcmp(a->name, b->name) == 0)
				return pa_decode_fail(err, err_len,
						"%s.name: duplicate port name '%s' (also $.ports[%u])",
						path, a->name, j);
			if (a->pci != NULL && b->pci != NULL &&
					pci_parse(a->pci, &ida) == 0 &&
					pci_parse(b->pci, &idb) == 0 && ida == idb)
				return pa_decode_fail(err, err_len,
						"%s.pci: PCI device '%s' already used by $.ports[%u]",
						path, a->pci, j);
			if (a->devargs != NULL && b->devargs != NULL &&
					devargs_name_len(a->devargs) ==
					devargs_name_len(b->devargs) &&
					strncmp(a->devargs, b->devargs,
						devargs_name_len(a->devargs)) == 0)
				return pa_decode_fail(err, err_len,
						"%s.devargs: device '%.*s' already used by $.ports[%u]",
						path, (int)devargs_name_len(a->devargs),
						a->devargs, j);
			if (a->kernel_if[0] != '\0' &&
					strcmp(a->kernel_if, b->kernel_if) == 0)
				return pa_decode_fail(err, err_len,
						"%s.kernel_if: interface '%s' already used by $.ports[%u]",
						path, a->kernel_if, j);
		}
	}
	for (i = 0; i < cfg->n_ports; i++) {
		cfg->ports[i].peer = i;
		/* Port roles: a transparent port (no "addr") passes frames
		 * unchanged to its peer; its own peer, it would send every
		 * frame back onto the wire it came from, where a switch
		 * learns the senders' MACs on the appliance. Left out, a
		 * transparent port's peer is: on a wire, the other port of
		 * a two-port appliance (a bump in the wire), else refused;
		 * on a lab device (net_null, net_ring, net_pcap on files)
		 * and in replay mode (whose port replaces these), the port
		 * itself, as a routed port's is. */
		if (peer[i] == NULL) {
			if (cfg->ports[i].n_addrs != 0 ||
					!port_is_wire(&cfg->ports[i]) ||
					(opts != NULL && opts->replay))
				continue;
			if (cfg->n_ports != 2)
				return pa_decode_fail(err, err_len,
						"$.ports[%u]: transparent port '%s' (no \"addr\") needs a \"peer\": it may not be its own (frames would go back onto the wire they came from), and only a two-port appliance pairs its ports by default; name the peer, or give the port \"addr\" to make it a routed one-armed port",
						i, cfg->ports[i].name);
			cfg->ports[i].peer = (int)(1 - i);
			continue;
		}
		idx = pa_config_port_index(cfg, peer[i]);
		if (idx < 0)
			return pa_decode_fail(err, err_len,
					"$.ports[%u].peer: unknown port '%s'", i,
					peer[i]);
		if ((unsigned int)idx == i && cfg->ports[i].n_addrs == 0)
			return pa_decode_fail(err, err_len,
					"$.ports[%u].peer: transparent port '%s' (no \"addr\") cannot be its own peer: name another port, or give it \"addr\" to make it a routed one-armed port",
					i, peer[i]);
		cfg->ports[i].peer = idx;
	}
	return 0;
}

/* Replay mode: the document's ports give way to one port, which takes
 * the L3 settings (addresses, gateway) of a port of the same name, so
 * that a replay can answer ARP/ND for them and resolve. */
static int
replay_port(struct pa_config *cfg, const struct pa_config_opts *opts,
		char *err, size_t err_len)
{
	char why[PA_DECODE_WHY_MAX];
	struct pa_config_port l3;
	const char *name;
	int idx;

	name = opts->replay_port != NULL ?
		opts->replay_port : CFG_DEFAULT_REPLAY_PORT;
	if (pa_decode_check_name(name, why, sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "replay port: %s", why);
	idx = pa_config_port_index(cfg, name);
	memset(&l3, 0, sizeof(l3));
	if (idx >= 0) {
		l3.has_gateway_mac = cfg->ports[idx].has_gateway_mac;
		memcpy(l3.gateway_mac, cfg->ports[idx].gateway_mac, 6);
		memcpy(l3.has_gateway, cfg->ports[idx].has_gateway,
				sizeof(l3.has_gateway));
		memcpy(l3.gateway, cfg->ports[idx].gateway,
				sizeof(l3.gateway));
		l3.n_addrs = cfg->ports[idx].n_addrs;
		memcpy(l3.addrs, cfg->ports[idx].addrs, sizeof(l3.addrs));
	}
	ports_clear(cfg);
	cfg->ports_present = false;
	snprintf(cfg->ports[0].name, sizeof(cfg->ports[0].name), "%s", name);
	/* routed (addresses lent) or transparent; its own peer either way:
	 * the one exception to the transparent-peer rule */
	cfg->ports[0].promisc = l3.n_addrs == 0;
	cfg->ports[0].peer = 0;
	cfg->ports[0].has_gateway_mac = l3.has_gateway_mac;
	memcpy(cfg->ports[0].gateway_mac, l3.gateway_mac, 6);
	memcpy(cfg->ports[0].has_gateway, l3.has_gateway,
			sizeof(l3.has_gateway));
	memcpy(cfg->ports[0].gateway, l3.gateway, sizeof(l3.gateway));
	cfg->ports[0].n_addrs = l3.n_addrs;
	memcpy(cfg->ports[0].addrs, l3.addrs, sizeof(l3.addrs));
	/* net_pcap reads the file a burst at a time: deep descriptor rings
	 * only make the pool bigger, and filling a pool is most of what a
	 * replay's start-up costs (a page fault every 2 mbufs) */
	cfg->ports[0].rx_desc = CFG_REPLAY_DESC;
	cfg->ports[0].tx_desc = CFG_REPLAY_DESC;
	cfg->n_ports = 1;
	return 0;
}

/* Called also when "ports" is absent (replay mode needs its port). */
static int
ports_section_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	int rc;

	if (v != NULL) {
		rc = ports_parse(v, cfg, opts, err, err_len);
		if (rc < 0)
			return rc;
		cfg->ports_present = true;
	}
	if (opts != NULL && opts->replay)
		return replay_port(cfg, opts, err, err_len);
	return 0;
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
	/* a transparent port that is its own peer may only be so by
	 * default (ports_parse()): leave the default implicit */
	if (port->peer >= 0 && (unsigned int)port->peer < cfg->n_ports &&
	    (port->n_addrs != 0 || port->peer != (int)(port - cfg->ports)))
		rc |= json_object_set_new(o, "peer",
				json_string(cfg->ports[port->peer].name));
	if (port->has_gateway_mac)
		rc |= json_object_set_new(o, "gateway_mac",
				pa_config_mac_json(port->gateway_mac));
	/* one next hop as written ("gateway": "IP"), two as a list */
	if (port->has_gateway[0] && port->has_gateway[1]) {
		json_t *gws = json_array();

		if (gws == NULL)
			goto fail;
		rc |= json_array_append_new(gws,
				pa_config_ip_json(&port->gateway[0]));
		rc |= json_array_append_new(gws,
				pa_config_ip_json(&port->gateway[1]));
		rc |= json_object_set_new(o, "gateway", gws);
	} else if (port->has_gateway[0] || port->has_gateway[1]) {
		rc |= json_object_set_new(o, "gateway", pa_config_ip_json(
				&port->gateway[port->has_gateway[1]]));
	}
	for (i = 0; i < port->n_addrs; i++)
		rc |= json_array_append_new(addrs,
				pa_config_prefix_json(&port->addrs[i]));
	rc |= json_object_set_new(o, "addr", addrs);
	addrs = NULL;
	if (port->kernel_if[0] != '\0')
		rc |= json_object_set_new(o, "kernel_if",
				json_string(port->kernel_if));
	if (port->kernel_if_pps != 0)
		rc |= json_object_set_new(o, "kernel_if_pps",
				json_integer(port->kernel_if_pps));
	if (port->kernel_if_burst != 0)
		rc |= json_object_set_new(o, "kernel_if_burst",
				json_integer(port->kernel_if_burst));
	if (port->rss_steer != PA_CONFIG_RSS_STEER_AUTO)
		rc |= json_object_set_new(o, "rss_steer",
				json_string(rss_steer_names[port->rss_steer]));
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(addrs);
	json_decref(o);
	return NULL;
}

/* Left out in replay mode (ports_present false). */
static int
ports_to_json(const struct pa_config *cfg, json_t **out)
{
	json_t *ports;
	unsigned int i;
	int rc = 0;

	if (!cfg->ports_present)
		return 0;
	ports = json_array();
	if (ports == NULL)
		return -ENOMEM;
	for (i = 0; i < cfg->n_ports; i++)
		rc |= json_array_append_new(ports,
				port_to_json(cfg, &cfg->ports[i]));
	if (rc != 0) {
		json_decref(ports);
		return -ENOMEM;
	}
	*out = ports;
	return 0;
}

/* port_fields, with what their decoders check together: one of devargs
 * and pci (port_pci()), kernel_if on a routed port (port_kernel_if()),
 * its limits beside it (port_kernel_if_check()), gateway or gateway_mac
 * (port_gateway()) */
static json_t *
ports_schema(void)
{
	json_t *port = pa_decode_schema_object(port_fields,
			PA_DECODE_N(port_fields));

	if (port == NULL || json_object_update_missing_new(port, json_pack(
			"{s:[{s:[s]}, {s:[s]}], s:{s:[s], s:[s], s:[s]}, s:{s:[ss]}}",
			"oneOf", "required", "devargs", "required", "pci",
			"dependencies", "kernel_if", "addr",
			"kernel_if_pps", "kernel_if", "kernel_if_burst", "kernel_if",
			"not", "required", "gateway", "gateway_mac")) != 0) {
		json_decref(port);
		return NULL;
	}
	return pa_decode_schema_array(port, PA_CONFIG_MAX_PORTS);
}

static struct pa_config_section ports_section = {
	.key = "ports",
	.order = PA_CONFIG_ORDER_PORTS,
	.parse = ports_section_parse,
	.clear = ports_clear,
	.to_json = ports_to_json,
	.schema = ports_schema,
};

PA_CONFIG_SECTION_REGISTER(ports_section)
