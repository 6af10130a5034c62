#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of the fuzz targets (commit the result):

    /usr/bin/python3 tests/fuzz/make_seeds.py

tests/fuzz/corpus/<target>/ gets a handful of small files each:
- fuzz_pkt: one frame of each kind in tests/data/sample.pcap (IPv4/IPv6
  TCP/UDP/ICMP, fragments, extension headers, VLAN and QinQ tags, ARP and
  the malformed ones), chosen by a small header signature;
- fuzz_config: docs/examples/*.json, the complete example of
  docs/configuration.md, a document whose ports use every profile of
  drivers-config/, and a few small ones;
- fuzz_rpc: the requests of docs/rpc.md, grouped as streams (one file per
  subsystem), plus batches and framing cases;
- fuzz_rule: address, prefix, port range and MAC strings, ACL rule and
  service objects;
- fuzz_metrics: listen addresses, and metric name / help / label fields
  separated by \x01 (escapes, invalid names, invalid UTF-8).
- fuzz_neigh (and fuzz_pkt too): ARP requests and replies, neighbour
  solicitations and advertisements (DAD, VLAN-tagged) for the addresses
  fuzz_neigh.c configures.
Files are named by content (sha1 prefix), as libFuzzer names its own.
Deterministic: the same sources give the same files.
"""

import glob
import hashlib
import json
import os
import re
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
import gen_sample  # noqa: E402  (pcap reader, no scapy needed)

MAX_PER_TARGET = 50 * 1024


def frame_signature(f):
    """Coarse shape of a frame: tags, L3, options/extensions, L4, frag."""
    sig = []
    if len(f) < 14:
        return ("runt",)
    off, et = 12, struct.unpack("!H", f[12:14])[0]
    while et in (0x8100, 0x88A8, 0x9100) and off + 6 <= len(f):
        sig.append("vlan")
        off += 4
        et = struct.unpack("!H", f[off:off + 2])[0]
    off += 2
    sig.append("%04x" % et)
    if et == 0x0800 and off + 20 <= len(f):
        ihl, proto = f[off] & 0x0F, f[off + 9]
        frag = struct.unpack("!H", f[off + 6:off + 8])[0]
        sig += ["v%d" % (f[off] >> 4), "opt" if ihl > 5 else "", proto,
                "frag" if frag & 0x3FFF else "", "later" if frag & 0x1FFF else ""]
    elif et == 0x86DD and off + 40 <= len(f):
        sig += ["v%d" % (f[off] >> 4), f[off + 6]]
    sig.append(len(f) < 64)
    return tuple(sig)


def pkt_seeds():
    frames = gen_sample.read_pcap(os.path.join(ROOT, "tests", "data", "sample.pcap"))
    seen, out = set(), []
    for f in frames:
        s = frame_signature(f)
        if s not in seen:
            seen.add(s)
            out.append(f)
    return out


def md_json_block(path, heading):
    text = open(path).read()
    m = re.search(re.escape(heading) + r".*?```json\n(.*?)```", text, re.S)
    return m.group(1).encode() if m else None


def config_seeds():
    out = [open(p, "rb").read()
           for p in sorted(glob.glob(os.path.join(ROOT, "docs", "examples", "*.json")))]
    block = md_json_block(os.path.join(ROOT, "docs", "configuration.md"), "## Complete example")
    if block:
        out.append(block)
    ports = []
    for i, p in enumerate(sorted(glob.glob(os.path.join(ROOT, "drivers-config", "*.json")))):
        prof = os.path.splitext(os.path.basename(p))[0]
        port = {"name": "p%d" % i, "profile": prof}
        if prof in ("af_packet", "pcap", "null"):
            port["devargs"] = {"af_packet": "net_af_packet%d,iface=veth%d" % (i, i),
                               "pcap": "net_pcap%d,rx_pcap=/dev/null" % i,
                               "null": "net_null%d" % i}[prof]
        else:
            port["pci"] = "0000:%02x:00.0" % (i + 1)
        ports.append(port)
    out.append(json.dumps({"ports": ports, "metrics": None}, indent=1).encode())
    out.append(b"{}")
    out.append(json.dumps({
        "ports": [{"name": "replay0", "devargs": "net_null0", "mtu": 1500,
                   "gateway_mac": "02:00:00:00:00:01", "addr": ["192.0.2.1/24", "2001:db8::1/64"]}],
        "pipeline": {"mode": "rtc", "lcores": {"worker": [0, 1]}, "burst": 64},
        "acl": {"default": "drop", "non_ip": "drop", "rules": [
            {"id": 1, "in_port": "replay0", "proto": 6, "dport": "22", "action": "permit"},
            {"id": 2, "src": "2001:db8::/48", "action": "mark", "dscp": 46}]},
        "lb": {"local_addr6": "2001:db8::fe", "services": [
            {"name": "v6", "vip": "2001:db8::80", "port": 80, "proto": "tcp",
             "forward": "ipip", "scheduler": "wrr", "table_size": 1021,
             "backends": [{"addr": "2001:db8:2::1", "weight": 3, "state": "down"}]}]},
    }).encode())
    return out


def rpc_seeds():
    reqs = []
    for line in open(os.path.join(ROOT, "docs", "rpc.md")):
        if line.startswith("--> "):
            reqs.append(line[4:].strip())
    groups = {}
    for r in reqs:
        try:
            doc = json.loads(r)
        except ValueError:
            continue
        first = doc[0] if isinstance(doc, list) and doc else doc
        method = first.get("method", "") if isinstance(first, dict) else ""
        groups.setdefault(method.split("_")[0], []).append(r)
    out = ["\n".join(v).encode() + b"\n" for _, v in sorted(groups.items())]
    call = lambda m, i, p=None: dict({"jsonrpc": "2.0", "method": m, "id": i},
                                     **({"params": p} if p is not None else {}))
    out.append(json.dumps([call("acl_rule_list", 1), call("lb_service_list", 2),
                           {"jsonrpc": "2.0", "method": "config_get"},
                           call("rpc_get_methods", 3), 7, []]).encode())
    out.append(b' \r\n{"jsonrpc":"2.0","method":"config_get","id":"s"}'
               b'{"jsonrpc": bad}[1,,2]\n'
               b'{"jsonrpc":"2.0","method":"acl_rule_delete","id":2,"params":{"id":10}}'
               b'{"jsonrpc":"2.0","id":3,"method":"acl_rule_add","params":{"id":')
    out.append(b'{"jsonrpc":"2.0","method":"x","params":["}]\\"{["]}  ]')
    return out


def rule_seeds():
    strings = [b"10.0.0.0/8", b"2001:db8::/32", b"any", b"1024-65535", b"53",
               b"02:00:00:00:00:01", b"::ffff:192.0.2.1", b"192.0.2.1/33",
               b"fe80::1%eth0/64"]
    objs = [
        {"id": 10, "priority": 100, "src": "10.0.0.0/8", "dst": "any",
         "sport": "any", "dport": "53", "proto": "udp", "action": "drop"},
        {"id": 2, "in_port": "lan0", "proto": "icmpv6", "action": "police",
         "rate_pps": 1000, "burst": 50, "dst": "2001:db8::/32"},
        {"id": 3, "action": "mark", "dscp": 46, "proto": 17, "dport": 53},
        {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
         "scheduler": "maglev", "forward": "ipip", "table_size": 1021,
         "backends": [{"addr": "10.1.0.1", "weight": 1},
                      {"addr": "10.1.0.2", "weight": 2, "state": "drain"}]},
        {"name": "dns6", "vip": "2001:db8::53", "port": 53, "proto": "udp",
         "scheduler": "lc", "forward": "nat",
         "backends": [{"addr": "2001:db8:1::1", "port": 5353,
                       "mac": "02:00:00:00:00:02"}]},
    ]
    return strings + [json.dumps(o).encode() for o in objs] + [b'"tcp"', b"255"]


def metrics_seeds():
    return [b"127.0.0.1:9469", b"[::1]:9100", b"0.0.0.0:65535",
            b"[::ffff:1.2.3.4]:1", b"1.2.3.4:080",
            b"pktaccel_port_rx_packets_total\x01Packets received\\by "
            b"the port.\nsecond line\x01port\x01wan\"0\\\n\x01driver"
            b"\x01net_pcap",
            b"bad-name\x01help\x01__x\x01y",
            b"ok:name\x01h\x01a\x011\x01a\x012",
            b"x\x01h\x01v\x01a\x80b\xc0\xaf\xed\xa0\x80\xc3\xa9"]
def neigh_seeds():
    import gen_hostile as gh
    bc, sm, gw = b"\xff" * 6, gh.mac(0x11), gh.mac(0x99)
    sol5 = bytes.fromhex("3333ff000005")
    out = [
        gh.pad60(gh.eth(sm, 0x0806, dst=bc) +
                 gh.arp(1, sm, "198.51.100.9", bytes(6), "198.51.100.5")),
        gh.pad60(gh.eth(gw, 0x0806) +
                 gh.arp(2, gw, "198.51.100.1", gh.APPLIANCE_MAC,
                        "198.51.100.5")),
        gh.pad60(gh.eth(gw, 0x0806, dst=bc) +
                 gh.arp(1, gw, "198.51.100.1", bytes(6), "198.51.100.1")),
        gh.pad60(gh.eth(sm, 0x0806, [(0x8100, 7)], dst=bc) +
                 gh.arp(1, sm, "203.0.113.9", bytes(6), "192.0.2.254")),
    ]
    for src, dst, typ, tgt, ll, fl, edst in (
            ("2001:db8:1::9", "ff02::1:ff00:5", 135, "2001:db8:1::5", sm, 0,
             sol5),
            ("::", "ff02::1:ff00:5", 135, "2001:db8:1::5", None, 0, sol5),
            ("2001:db8:1::9", "2001:db8:1::5", 136, "2001:db8:1::9", sm,
             0x60, gh.APPLIANCE_MAC)):
        body = gh.nd(typ, src, dst, tgt, lladdr=ll,
                     opt_type=2 if typ == 136 else 1, flags=fl)
        out.append(gh.eth(sm, 0x86DD, dst=edst) +
                   gh.ipv6(src, dst, 58, body, hlim=255, l4proto=(58, 0)))
    return out


def lb_icmp_seeds():
    """fuzz_lb_icmp inputs: a selector byte (bit 0 IPv6, bits 1-2 the
    VIP: ipip, nat, dsr service, none) and an ICMP message: echo
    requests, and errors quoting a packet each service's VIP sent."""
    import struct
    import gen_hostile as gh
    out = []
    for v6 in (0, 1):
        for vip in range(4):
            sel = bytes([v6 | vip << 1])
            out.append(sel + bytes([128 if v6 else 8, 0, 0, 0, 0, 1, 0, 1]) +
                       b"ping" * 4)
            vaddr = ("2001:db8:%x0::%x0" % (vip + 1, vip + 1) if v6 else
                     "10.0.0.%d" % (10 * (vip + 1)))
            cli = "2001:db8:c::7" if v6 else "198.51.100.7"
            proto, sport = (17, 53) if vip == 1 else (6, 80)
            seg = (gh.udp(sport, 4444, b"x" * 24) if proto == 17 else
                   gh.tcp(sport, 4444, b"x" * 24, flags=0x12))
            if v6:
                q = gh.ipv6(vaddr, cli, proto, seg)
                head = bytes([2, 0, 0, 0]) + struct.pack("!I", 1280)
            else:
                q = gh.ipv4(vaddr, cli, proto, seg)
                head = bytes([3, 4, 0, 0, 0, 0]) + struct.pack("!H", 1400)
            out.append(sel + head + q)
            out.append(sel + head + q[:12])         # truncated quote
    return out


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    total = 0
    for s in seeds:
        total += len(s)
        with open(os.path.join(d, hashlib.sha1(s).hexdigest()[:16]), "wb") as f:
            f.write(s)
    if total > MAX_PER_TARGET:
        raise SystemExit("%s: %d bytes of seeds, over %d" % (target, total, MAX_PER_TARGET))
    print("%s: %d files, %d bytes" % (target, len(seeds), total))


def main():
    write("fuzz_pkt", pkt_seeds() + neigh_seeds())
    write("fuzz_config", config_seeds())
    write("fuzz_rpc", rpc_seeds())
    write("fuzz_rule", rule_seeds())
    write("fuzz_metrics", metrics_seeds())
    write("fuzz_neigh", neigh_seeds())
    write("fuzz_lb_icmp", lb_icmp_seeds())


if __name__ == "__main__":
    main()
