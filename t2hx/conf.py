"""Load and validate a system description (``conf/systems/<sys>.yaml``).

The schema below is the documentation of the file format: every field, its type, default
and meaning. A bad file raises ConfError with one line naming file, field and fix.
"""

from __future__ import annotations

import hashlib
import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from t2hx import routing_engines
from t2hx.errors import ConfError
from t2hx.fabric.fattree import kary_shape
from t2hx.launcher import NAME as SLURM_NAME, launcher_of, sbatch_option, word_check
from t2hx.fabric.sitefabric import HOST_MODES, UNNAMED_MODES, host_names, options_for
from t2hx.schema import F, one_line, validate
from t2hx.textfile import load_yaml

# An InfiniBand subnet has 0xBFFF unicast LIDs: no plane can hold more nodes plus switches,
# and the bound keeps a mistyped size from generating a fabric for hours.
MAX_LIDS = 0xBFFF
# Port numbers are 8 bits and port 0 is the switch's management port.
MAX_PORTS = 254
HOSTNAME_FIELDS = ("rack", "slot", "index")
HOSTNAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,63}")   # what hostfile readers accept

#: Routing engine names, a live view of the engine table (t2hx/routing_engines.py).
ENGINES = routing_engines.ENGINES


def _host_name(value: str) -> str | None:
    return None if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}", value) else \
        "a host name such as sm01"


def _system_name(value: str) -> str | None:
    # The name becomes a folder under hostfiles/, work/ and log/: no path separators.
    return None if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", value) else \
        "a name of letters, digits, '_' and '-', e.g. name: t2hx"


def _device(value: str) -> str | None:
    return None if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", value) else \
        "an HCA device name such as mlx4_1"


def _abs_path(value: str) -> str | None:
    return one_line(value) or (None if value.startswith("/") else
                                "an absolute path on the subnet manager's host")


# opensm.conf keys that name files or plugins of one host: they belong in the real SM's own
# opensm.conf (opensm.sm.conf_file) and must never reach the simulated OpenSM, where the
# file does not exist (a parx_demand= path there left every PARX case waiting for OpenSM).
_HOST_OPTION = re.compile(r"^(event_plugin_name|event_plugin_options|.*_(file|dir|name))$")


def _shared_options(value: dict) -> str | None:
    bad = [k for k in value if _HOST_OPTION.match(str(k))]
    return (f"'{bad[0]}' names a file or plugin of the SM host: set it in that host's "
            "opensm.conf (opensm.sm.conf_file; t2hx manages the PARX/SAR input files through "
            "opensm.sm.demand_file and jobs_file)") if bad else None


#: opensm.conf keys t2hx sets itself for every run: an option naming one would silently
#: replace the combo's engine (every DFSSSP case routed by minhop) or its LID count.
_OWN_OPTIONS = {
    "routing_engine": "list engines in opensm.routing (each combo names its own)",
    "lmc": "set opensm.lmc (PARX routes at LMC 2 whatever it is)",
}


def _own_options(value: dict) -> str | None:
    bad = [k for k in value if str(k) in _OWN_OPTIONS]
    return (f"'{bad[0]}' is set by t2hx for every routing run; remove it from options and "
            f"{_OWN_OPTIONS[bad[0]]}") if bad else None


def _engine_list(value: list) -> str | None:
    if not value:     # a plane without engines silently drops every combo on it
        return "no routing engine: list at least one, e.g. routing: [minhop]"
    twice = [e for e in value if value.count(e) > 1]
    return f"'{twice[0]}' is listed twice: list each engine once" if twice else None


# How t2hx reaches and drives a plane's running OpenSM on the real cluster (docs/cluster.md).
SM = {
    "via": F(str, default="ssh", choices=("ssh", "agent", "none"),
             doc="ssh (the job user runs `t2hx sm apply` on opensm.host), agent (a "
             "`t2hx sm serve` daemon on opensm.host, requests authenticated by MUNGE) or "
             "none (t2hx never touches this OpenSM: one engine only, recorded unverified)"),
    "port": F(int, default=6934, min=1, max=65535, doc="agent: its TCP port, e.g. 6934"),
    "ssh_options": F(list, default=[], items=F(str, check=one_line),
                     doc="ssh: extra options, e.g. [-l, smop, -i, /home/smop/.ssh/id_t2hx]"),
    "t2hx": F(str, default="t2hx", check=one_line,
              doc="ssh: the t2hx command on opensm.host, e.g. /shared/t2hx/run/t2hx"),
    "conf_path": F(str, default=None, check=_abs_path,
                   doc="ssh: this system conf's path on opensm.host (default: the same path)"),
    "conf_file": F(str, default="/etc/opensm/opensm.conf", check=_abs_path,
                   doc="the opensm.conf this plane's OpenSM was started with (-F); it also "
                   "identifies the process on a host running one OpenSM per plane"),
    "restart": F(str, default="", check=one_line,
                 doc="command that restarts this plane's OpenSM after its engine or LMC "
                 "changed, e.g. 'systemctl restart opensm@hyperx'; empty: t2hx stops it and "
                 "its supervisor (systemd Restart=always, `t2hx sm opensm`) starts it again"),
    "log_file": F(str, default="/var/log/opensm.log", check=_abs_path,
                  doc="OpenSM's log file (its log_file option)"),
    "cache_dir": F(str, default="/var/cache/opensm", check=_abs_path,
                   doc="OpenSM's cache directory (guid2lid), OSM_CACHE_DIR"),
    "demand_file": F(str, default="/etc/opensm/t2hx-parx-demand.txt", check=_abs_path,
                     doc="where PARX reads its demand file (t2hx writes it)"),
    "jobs_file": F(str, default="/etc/opensm/t2hx-sar-jobs.txt", check=_abs_path,
                   doc="where SAR reads its job file (t2hx writes it)"),
}


def _device_word(value: str) -> str | None:
    if not value or any(c.isspace() for c in value):
        return f"{value[:40]!r} is not one word"
    return None


def _regex(value: str) -> str | None:
    try:
        re.compile(value)
    except re.error as err:
        return f"{value[:40]!r} is not a regular expression ({err})"
    return None


def _pair_of_names(value: list) -> str | None:
    if len(value) != 2 or not all(isinstance(v, str) for v in value):
        return "a missing cable is a pair of node names"
    return None


NODES = {
    "hostname": F(str, default="n{index:03d}",
                  doc="Python format with {rack}, {slot} (1-based) and {index} (from "
                  "index_base), e.g. r{rack:02d}n{slot:02d} or cn{index:03d}"),
    # Sites number nodes from 0 or from 1 (cn001); racks and slots are always 1-based.
    "index_base": F(int, default=0, choices=(0, 1),
                    doc="the first {index}: 0 (n000, n001, ...) or 1 (cn001, cn002, ...)"),
    "racks": F(int, required=True, min=1, doc="number of racks, e.g. racks: 24"),
    "per_rack": F(int, required=True, min=1, doc="compute nodes per rack, e.g. per_rack: 28"),
    "cores": F(int, default=1, min=1, doc="cores per node (OpenMP threads per rank)"),
    "peak_gflops": F(float, default=None, min=0.001,
                     doc="node peak double-precision Gflop/s, scales the compute of flop-bound "
                     "app models, e.g. 140.6 (default: conf/appmodels.yaml default_node)"),
    "mem_gbs": F(float, default=None, min=0.001,
                 doc="node memory bandwidth in GB/s, scales memory-bound app models, e.g. 64 "
                 "(default: conf/appmodels.yaml default_node)"),
    "down": F(list, default=[], items=F(str), doc="hostnames that must not be used"),
    "from_dump": F(str, default=None,
                   doc="take the hostnames from this plane's ibnetdiscover dump instead of "
                   "the hostname pattern: the first racks × per_rack hosts the plane keeps, "
                   "in natural name order (a rack is per_rack consecutive names), "
                   "e.g. from_dump: fabric"),
}

TOPOLOGIES = {
    "hyperx": {
        "kind": F(str),
        "dims": F(list, required=True, items=F(int, min=2),
                  doc="switch count per dimension, e.g. dims: [12, 8]"),
        "nodes_per_switch": F(int, required=True, min=0),
        "multiplicity": F(int, default=1, min=1, doc="parallel cables per switch pair"),
        "switch_ports": F(int, default=36, min=2, max=MAX_PORTS),
    },
    "xgft": {
        "kind": F(str),
        "m": F(list, required=True, items=F(int, min=1),
               doc="children per switch, bottom-up, e.g. m: [14, 16, 3]"),
        "w": F(list, required=True, items=F(int, min=1),
               doc="parents per element, bottom-up, e.g. w: [1, 18, 3]"),
        "p": F(list, default=None, items=F(int, min=1),
               doc="parallel cables per parent link, bottom-up (default all 1)"),
        "switch_ports": F(int, default=36, min=2, max=MAX_PORTS),
    },
    "kary": {
        "kind": F(str),
        "k": F(int, required=True, min=2),
        "n": F(int, required=True, min=1, max=16, doc="tree levels (2^16 > the LIDs of a subnet)"),
        "taper": F(float, default=1.0, min=0.01, max=1.0,
                   doc="uplink share at the leaves: 1.0 = full bisection, 0.5 = 2:1"),
        "rails": F(int, default=1, min=1, doc="HCA ports per node into this tree; more "
                   "than 1 splits it into subnets, which a plane refuses (use xgft p)"),
        "switch_ports": F(int, default=None, min=2, max=MAX_PORTS),
    },
    "shortcut": {
        "kind": F(str),
        "switches": F(int, required=True, min=3), "degree": F(int, required=True, min=2),
        "nodes_per_switch": F(int, default=1, min=0), "seed": F(int, default=1, min=0),
        "switch_ports": F(int, default=36, min=2, max=MAX_PORTS),
    },
    "circulant": {
        "kind": F(str),
        "switches": F(int, required=True, min=3),
        "offsets": F(list, required=True, items=F(int, min=1),
                     doc="circulant offsets, e.g. offsets: [1, 5]"),
        "nodes_per_switch": F(int, default=1, min=0),
        "switch_ports": F(int, default=36, min=2, max=MAX_PORTS),
    },
    # Groups of fully connected switches joined by global links (seed 001 §5.2.2's baseline):
    # t2hx/fabric/dragonfly.py picks the group size from switches and degree.
    "dragonfly": {
        "kind": F(str),
        "switches": F(int, required=True, min=4),
        "degree": F(int, required=True, min=2, doc="inter-switch links per switch, e.g. degree: 19"),
        "nodes_per_switch": F(int, default=1, min=0),
        "switch_ports": F(int, default=36, min=2, max=MAX_PORTS),
    },
    # Fat-tree islands joined by a director (seed 004 §4.3, Taurus): t2hx/fabric/islands.py.
    "islands": {
        "kind": F(str),
        "nodes": F(list, required=True, items=F(int, min=1),
                   doc="nodes per island, in host order, e.g. nodes: [270, 108, 180]"),
        "per_leaf": F(int, default=18, min=1, doc="hosts per leaf switch"),
        "spines": F(int, default=18, min=1, doc="spines per island (a cable from every leaf)"),
        "uplinks": F(int, default=2, min=1, doc="cables from each spine to the director"),
        "director_ports": F(int, default=216, min=2, doc="the director's external ports"),
        "switch_ports": F(int, default=36, min=4, max=MAX_PORTS),
    },
    # How a site's dump becomes the plane: t2hx/fabric/sitefabric.py (docs/formats.md).
    "ibnetdiscover": {
        "kind": F(str),
        "file": F(str, required=True, doc="path of an ibnetdiscover output, relative to conf"),
        "hosts": F(str, default="plane_hca", choices=HOST_MODES,
                   doc="plane_hca: one HCA per host, the plane's (see devices); all_ports: "
                   "every HCA of a host, as ports 1..k of one multi-port host (rails)"),
        "devices": F(list, default=[], items=F(str, check=_device_word,
                                               doc="one word, e.g. mlx5_0 or HCA-1"),
                     doc="the plane's HCA as the dump's NodeDescriptions name it (the word "
                     "after the host name), in order of preference, e.g. devices: [HCA-1, "
                     "mlx5_0] (MLNX_OFED names HCAs HCA-1, HCA-2, ...); default: [<hca>]"),
        "unnamed": F(str, default="skip", choices=UNNAMED_MODES,
                     doc="CAs whose NodeDescription is the firmware default (no host name): "
                     "skip, or keep as hosts named by node id (H-<guid>)"),
        "skip": F(list, default=[], items=F(str, check=_regex, doc="write a Python regular "
                                            "expression, e.g. '^storage', or a node id"),
                  doc="CAs to leave out: regular expressions searched in the NodeDescription, "
                  "or node ids, e.g. skip: ['^storage', 'H-0002c903000e0b72']"),
    },
}

PLANE = {
    "hca": F(str, required=True, check=_device, doc="HCA device of this plane, e.g. hca: mlx4_1"),
    "gbps": F(float, default=32.0, min=0.1, doc="data rate per direction in Gbit/s (QDR 4x: 32)"),
    "topology": F(dict, required=True, doc="a mapping with kind: hyperx|xgft|kary|shortcut|"
                  "circulant|dragonfly|islands|ibnetdiscover"),
    "missing_cables": F(dict, fields={
        "random": F(int, default=0, min=0, doc="how many inter-switch cables are absent"),
        "seed": F(int, default=1, min=0, doc="seed of the draw, e.g. seed: 2019"),
        "list": F(list, default=[], items=F(list, check=_pair_of_names),
                  doc="explicit absent cables as [switchA, switchB] pairs"),
    }),
    "opensm": F(dict, fields={
        "routing": F(list, default=["minhop"], items=F(str, choices=ENGINES),
                     check=_engine_list,
                     doc="routing engines this plane is studied with, e.g. [ftree, sssp]"),
        "lmc": F(int, default=0, min=0, max=7),
        "host": F(str, default="localhost", check=_host_name,
                  doc="host running this plane's OpenSM, e.g. host: sm01"),
        "dump_dir": F(str, default="/var/log/opensm", doc="OpenSM dump_files_dir on that host"),
        "options": F(dict, default={}, values=F((str, int, float, bool), check=one_line),
                     check=lambda v: _shared_options(v) or _own_options(v),
                     doc="opensm.conf options of both the simulated and the real plane, e.g. "
                     "options: {max_op_vls: 8}"),
        "timeout": F(float, default=600.0, min=1.0, doc="seconds before a routing run fails"),
        "sm": F(dict, fields=SM, doc="the plane's running OpenSM on the real cluster "
                "(docs/cluster.md#the-subnet-managers)"),
    }),
}

def _vlarb(value: object) -> str | None:
    """An OpenSM VL arbitration table: ``vl:weight`` entries, comma separated."""
    try:
        pairs = [tuple(int(x) for x in item.split(":")) for item in str(value).split(",")]
    except ValueError:
        pairs = [()]
    if not pairs or any(len(p) != 2 or not 0 <= p[0] <= 14 or not 0 <= p[1] <= 255
                        for p in pairs):
        return "a table of vl:weight entries (VL 0..14, weight 0..255), e.g. '0:4,1:4'"
    return None


def _sl2vl(value: object) -> str | None:
    try:
        vls = [int(x) for x in str(value).split(",")]
    except ValueError:
        vls = []
    if len(vls) != 16 or any(not 0 <= v <= 14 for v in vls):
        return "16 comma-separated VLs (0..14), one per SL, e.g. '0,1,2,...,14,7'"
    return None


#: PARX's message-size threshold in bytes: messages below it use Table 1a, others 1b
#: (t2hx.routing.parx selects with it; here, so the CLI's default needs no numpy).
PARX_THRESHOLD = 512

# The packet engine's hardware (t2hx.flowsim.packet); defaults and their sources are in
# docs/modelling.md#packet-engine (IB specification, PCIe specification, OpenSM defaults).
PACKET = {
    "mtu": F(int, default=2048, choices=(256, 512, 1024, 2048, 4096),
             doc="payload bytes per packet (IB MTU), e.g. mtu: 2048"),
    "header_bytes": F(int, default=26, min=0, max=256,
                      doc="wire bytes per packet besides payload: LRH 8 + BTH 12 + ICRC 4 + "
                      "VCRC 2 = 26"),
    "buffer_bytes": F(int, default=16384, min=64,
                      doc="switch input buffer per port and VL, bytes (64-byte credits)"),
    "hca_buffer_bytes": F(int, default=16384, min=64,
                          doc="HCA buffer per port and VL, bytes (64-byte credits)"),
    "output_buffer_bytes": F(int, default=0, min=0,
                             doc="switch output buffer per port, all VLs, bytes (64-byte "
                             "flits); 0: input-buffered only"),
    "crossbar_gbps": F(float, default=0.0, min=0.0,
                       doc="switch crossbar rate into an output buffer, Gbit/s; 0: the "
                       "port's link rate"),
    "input_arbitration": F(str, default="round_robin", choices=("round_robin", "oldest"),
                           doc="an output port's choice among input ports with a packet on "
                           "the same VL: round_robin (in order of request), oldest (the "
                           "packet that reached the switch first)"),
    "input_queues": F(str, default="fifo", choices=("fifo", "per_output"),
                      doc="a switch input buffer per VL: fifo (only its head packet may "
                      "request an output: head-of-line blocking), per_output (a queue per "
                      "output port sharing the VL's credits)"),
    "cable_ns": F(float, default=10.0, min=0.0, doc="propagation delay per link, ns"),
    "hca_ns": F(float, default=0.0, min=0.0,
                doc="HCA forwarding delay, ns (its processing is in the conf's overhead_us)"),
    "eager_bytes": F(int, default=12288, min=0,
                     doc="larger messages do a rendezvous handshake first (Open MPI "
                     "btl_openib_eager_limit)"),
    "vlarb_high": F(str, default="0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,"
                    "13:0,14:0", check=_vlarb, doc="VL arbitration high table (OpenSM "
                    "qos_vlarb_high)"),
    "vlarb_low": F(str, default="0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,"
                   "13:4,14:4", check=_vlarb, doc="VL arbitration low table (OpenSM "
                   "qos_vlarb_low)"),
    "high_limit": F(int, default=0, min=0, max=255,
                    doc="high-priority limit in 4 KiB units, 255: unlimited (OpenSM "
                    "qos_high_limit)"),
    "sl2vl": F(str, default="0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7", check=_sl2vl,
               doc="SL to VL map when the routing dumps have none (OpenSM qos_sl2vl)"),
    "hca": F(dict, default=None, fields={
        "interface": F(str, default=None, choices=("pcie", "link"),
                       doc="pcie: the PCIe rates below; link: as fast as the HCA's link; "
                       "required by the packet engine (no default: a porting team states it)"),
        "pcie_gen": F(int, default=None, choices=(1, 2, 3, 4, 5),
                      doc="PCIe generation of the HCA's slot, e.g. 2 (ConnectX-2), 4 (HDR)"),
        "lanes": F(int, default=None, choices=(1, 2, 4, 8, 16, 32), doc="PCIe lanes, e.g. 8"),
        "max_payload": F(int, default=256, choices=(128, 256, 512, 1024, 2048, 4096),
                         doc="PCIe Max_Payload_Size, bytes"),
        "max_read_request": F(int, default=512, choices=(128, 256, 512, 1024, 2048, 4096),
                              doc="PCIe Max_Read_Request_Size, bytes"),
        "completion_bytes": F(int, default=64, choices=(64, 128, 256, 512),
                              doc="data bytes per read completion TLP (RCB multiple)"),
        "tlps_per_dllp": F(float, default=4.0, min=1.0,
                           doc="TLPs per Ack/UpdateFC DLLP of the other direction"),
    }, doc="the HCA's host interface: hca: {interface: pcie, pcie_gen: 2, lanes: 8} or "
       "hca: {interface: link}"),
}

# The fluid engines' inter-job interference term, fitted to packet-engine runs by
# bench/interference.py (bench/results/interference.json; docs/modelling.md#interference;
# tests/test_interference.py holds these to that file's fit).
FIT_GAIN = 0.5446
FIT_EXPOSURE = 0.0007
INTERFERENCE = {
    "mode": F(str, default="packet_fit", choices=("packet_fit", "off"),
              doc="packet_fit: correct each job's fluid slowdown by the term; off: max-min only"),
    "fluid_gain": F(float, default=FIT_GAIN, min=0.0,
                    doc="weight of the fluid slowdown above 1 (bench/results/interference.json)"),
    "exposure": F(float, default=FIT_EXPOSURE,
                  doc="slowdown per unit of exposure (bench/results/interference.json)"),
}

# A capacity run's launch and the codes' own set-up + teardown beside the timed section,
# measured by bench/overheads.py (bench/results/overheads.json; docs/modelling.md#run-overheads).
# Launch: start-up = a + b * x(N), the launcher's mechanism law (a tree: levels) fitted to real
# mpirun start-ups at 1-4 nodes on the test cluster (log/startup/runs.json; seed 000 started
# every job by mpirun with a hostfile); tests/test_capacity_whole_job.py refits it from those
# runs. Set-up: tests/test_overhead.py holds it to the bench file. Codes not listed: launch only.
RUN_OVERHEAD_LAUNCH = {"launcher": "mpirun", "law": "levels", "a_s": 0.1528, "b_s": 0.2126}
RUN_OVERHEAD_SETUP = {"minife": 1.4295, "amg": 0.6092, "comd": 0.0104, "graph500": 2.5503,
                      "hpcg": 0.0033}
RUN_OVERHEAD = {
    "mode": F(str, default="measured", choices=("measured", "off"),
              doc="measured: capacity runs last launch + set-up + solve + teardown; off: solve"),
    "launcher": F(str, default=RUN_OVERHEAD_LAUNCH["launcher"], choices=("mpirun", "srun"),
                  doc="the launcher whose measured start-up law a run's launch follows"),
    "law": F(str, default=RUN_OVERHEAD_LAUNCH["law"], choices=("levels", "log2", "linear"),
             doc="start-up = launch_a_s + launch_b_s * x(N): x = levels of ORTE's radix-64 "
             "tree, log2(N) or N - 1 (t2hx.flowsim.overhead.law_x)"),
    "launch_a_s": F(float, default=RUN_OVERHEAD_LAUNCH["a_s"], min=0.0,
                    doc="start-up of a one-node job, s (log/startup/runs.json fit)"),
    "launch_b_s": F(float, default=RUN_OVERHEAD_LAUNCH["b_s"],
                    doc="start-up per unit of the law's x(N), s"),
    "setup": F(dict, default=RUN_OVERHEAD_SETUP, values=F((int, float), min=0),
               doc="code: (set-up + teardown) / timed section, e.g. setup: {minife: 1.4}"),
}

# The PARX-aware MPI path's extra work per message (the patch's LID pick in ob1's send path),
# measured by bench/parx_mpi_cost.py (bench/results/parx_mpi_cost.json, lid_walk_ns; the send
# path's own difference to unpatched Open MPI is within its noise, median 0;
# docs/modelling.md#parx-mpi-cost; tests/test_parx_flowsim.py holds it to that file).
PARX_MESSAGE_NS = 14.29

# MPI stacks an endpoint can run (docs/modelling.md#mpi-stacks): each one's PML cost per
# message beyond its release's ob1, whose costs overhead_us and gap_us stand for. message_ns:
# one message's extra one-way time (half round trip at <= 64 B), gap_ns: the extra interval
# between two messages a rank injects (inverse message rate); measured over shared memory by
# bench/mpi_stacks.py (log/mpi-stacks/, bench/results/mpi_stacks.json; tests/test_mpi_stacks.py
# recomputes them from the raw runs). ob1 1.10.7 vs 4.1 mixes in the BTLs rewritten between the
# releases and is not applied. bfo-parx: bfo with our PARX patch enabled; its LID walk is
# parx_message_ns, added on PARX networks as before.
MPI_STACKS: dict[str, dict[str, float]] = {
    "ompi-4.1-ob1": {"message_ns": 0.0, "gap_ns": 0.0},
    "ompi-1.10.7-ob1": {"message_ns": 0.0, "gap_ns": 0.0},
    "ompi-1.10.7-bfo-parx": {"message_ns": 19.6, "gap_ns": 42.1},
}

# LogGP-style parameters of the flow model (t2hx.flowsim); defaults are QDR 4x InfiniBand
# with a ConnectX-2 class HCA: ~100 ns per switch, ~0.6 us software overhead per side.
MODEL = {
    "switch_latency_ns": F(float, default=100.0, min=0.0,
                           doc="per-switch forwarding latency (LogGP L per hop), e.g. 100"),
    "overhead_us": F(float, default=0.6, min=0.0,
                     doc="software overhead per send and per receive (LogGP o), e.g. 0.6"),
    "gap_us": F(float, default=0.3, min=0.0,
                doc="minimum interval between two messages a rank injects (LogGP g)"),
    "parx_message_ns": F(float, default=PARX_MESSAGE_NS, min=0.0,
                         doc="PARX routing: the sender's extra work per message, ns "
                         "(bench/results/parx_mpi_cost.json)"),
    "mpi": F(dict, default=None, fields={
        "stack": F(str, default="ompi-4.1-ob1", choices=tuple(MPI_STACKS),
                   doc="the MPI stack of non-PARX networks, e.g. stack: ompi-1.10.7-ob1 "
                   "(docs/modelling.md#mpi-stacks)"),
        "parx_stack": F(str, default="ompi-4.1-ob1", choices=tuple(MPI_STACKS),
                        doc="the MPI stack of PARX networks, e.g. parx_stack: "
                        "ompi-1.10.7-bfo-parx (seed 000's PARX MPI)"),
    }, doc="which measured MPI stack the endpoints run (t2hx.conf.MPI_STACKS)"),
    "reduce_gbps": F(float, default=32.0, min=0.1,
                     doc="rate of the local reduction in reducing collectives, Gbit/s"),
    "collectives": F(str, default="ompi-4.1",
                     choices=("ompi-4.1", "ompi-1.10", "binomial-rd-bruck"),
                     doc="Open MPI coll/tuned fixed decision rules the collectives follow: "
                     "ompi-4.1 or ompi-1.10 (1.10.7, the study's MPI), or binomial-rd-bruck "
                     "(binomial Bcast, recursive-doubling Allreduce, Bruck Alltoall always: "
                     "seed 001; t2hx.flowsim.collectives, docs/modelling.md#collective-decision-rules)"),
    "multirail": F(dict, default=None, fields={
        "policy": F(str, default="single", choices=("single", "round_robin", "stripe"),
                    doc="how a rank spreads traffic over its rails (docs/modelling.md)"),
        "rails": F(int, default=1, min=1, doc="HCA ports or planes per host, e.g. rails: 2"),
        "stripe_threshold": F(int, default=8192, min=1,
                              doc="stripe: messages of at least this many bytes are split"),
        "lanes": F(list, default=[], items=F(str),
                   doc="plane:port of each rail, e.g. lanes: [fattree:1, fattree2:1] "
                   "(default: ports 1..rails of the simulated plane)"),
    }, doc="multirail: {policy: stripe, rails: 2} (t2hx.flowsim.multirail)"),
    "run_overhead": F(dict, default=None, fields=RUN_OVERHEAD,
                      doc="a capacity run's launch and set-up/teardown (t2hx.flowsim.overhead, "
                      "docs/modelling.md#run-overheads)"),
    "interference": F(dict, default=None, fields=INTERFERENCE,
                      doc="the fluid engines' inter-job term fitted to the packet engine "
                      "(t2hx.flowsim.interference, docs/modelling.md#interference)"),
    "packet": F(dict, default=None, fields=PACKET,
                doc="packet engine: packet: {mtu: 2048, buffer_bytes: 16384} "
                "(t2hx.flowsim.packet, docs/modelling.md#packet-engine)"),
}

# Where the simulated cases of this system run (t2hx.reframe_site.sim_system): on this machine,
# or each case as a batch job of a Slurm cluster (docs/architecture.md, "Running on Slurm").
SIMULATE = {
    "scheduler": F(str, default="local", choices=("local", "slurm", "squeue"),
                   doc="ReFrame scheduler of the sim partitions: local, slurm (polls with "
                   "sacct: needs accounting) or squeue (Slurm without accounting)"),
    "partition": F(str, default=None, check=word_check(SLURM_NAME, "a Slurm partition name"),
                   doc="Slurm partition, e.g. partition: batch"),
    "account": F(str, default=None, check=word_check(SLURM_NAME, "a Slurm account name"),
                 doc="Slurm account"),
    "max_jobs": F(int, default=None, min=1,
                  doc="concurrent cases per plane (default: this machine's cores with the "
                  "local scheduler, 1 on Slurm)"),
    "options": F(list, default=[], items=F(str, check=sbatch_option),
                 doc="extra sbatch options, e.g. [--mem=4G]"),
}

SYSTEM = {
    "name": F(str, required=True, check=_system_name, doc="system name, e.g. name: t2hx"),
    "description": F(str, default=""),
    "nodes": F(dict, required=True, fields=NODES),
    "planes": F(dict, required=True, values=F(dict), doc="planes: {fattree: {...}, hyperx: {...}}"),
    "model": F(dict, default=None, fields=MODEL, doc="flow-model parameters (see t2hx.flowsim)"),
    "launcher": F(dict, default={}, doc="how jobs start on the real cluster: schema in "
                  "t2hx/launcher.py, docs/cluster.md"),
    "simulate": F(dict, default={}, fields=SIMULATE,
                  doc="where simulated cases run: simulate: {scheduler: squeue, partition: x}"),
}


@dataclass
class Plane:
    name: str
    hca: str
    gbps: float
    topology: dict
    missing_cables: dict
    opensm: dict


@dataclass
class System:
    name: str
    path: Path
    description: str
    nodes: dict
    planes: dict[str, Plane]
    model: dict
    launcher: dict
    sha256: str
    simulate: dict = field(default_factory=dict)
    _dump_names: list[str] | None = field(default=None, repr=False, compare=False)

    def hostnames(self) -> list[str]:
        if self.nodes.get("from_dump"):
            return list(self._names_from_dump())
        fmt, base = self.nodes["hostname"], self.nodes["index_base"]
        names = []
        for index in range(self.nodes["racks"] * self.nodes["per_rack"]):
            rack, slot = divmod(index, self.nodes["per_rack"])
            names.append(fmt.format(rack=rack + 1, slot=slot + 1, index=index + base))
        return names

    def _names_from_dump(self) -> list[str]:
        """The first racks × per_rack hosts of ``nodes.from_dump``'s dump (read once)."""
        if self._dump_names is None:
            plane = self.planes[self.nodes["from_dump"]]
            dump = self.path.parent / plane.topology["file"]
            names = host_names(dump, options_for(plane.topology, plane.hca, plane.name,
                                                 self.path))
            count = self.nodes["racks"] * self.nodes["per_rack"]
            if len(names) < count:
                raise ConfError(f"plane '{plane.name}' keeps {len(names)} hosts of its dump "
                                f"but racks × per_rack is {count}", file=self.path,
                                field="nodes.per_rack", fix=f"set racks × per_rack to at "
                                f"most {len(names)}, e.g. racks: 1, per_rack: {len(names)}")
            for name, line in names[:count]:
                if not HOSTNAME_RE.fullmatch(name):
                    raise ConfError(f"host name {name[:40]!r} is not a usable hostname",
                                    file=dump, field=f"line {line}",
                                    fix=f"leave it out with planes.{plane.name}.topology."
                                    f"skip in {self.path}")
            self._dump_names = [name for name, _ in names[:count]]
        return self._dump_names

    def rack_of(self, index: int) -> int:
        return index // self.nodes["per_rack"]

    def plane(self, name: str) -> Plane:
        if name not in self.planes:
            raise ConfError(f"no plane '{name}'", file=self.path, field="planes",
                            fix=f"use one of: {', '.join(self.planes)}")
        return self.planes[name]


def load_system(path: str | Path) -> System:
    path = Path(path)
    raw, text = load_yaml(path, ConfError, "system conf",
                          "give the path of a conf/systems/*.yaml file")
    data = validate(raw, SYSTEM, path)
    _check_node_count(data["nodes"], path)
    _check_pattern(data["nodes"]["hostname"], path)
    planes = {name: _plane(name, spec, path) for name, spec in data["planes"].items()}
    if not planes:
        raise ConfError("no planes", file=path, field="planes", fix="describe at least one plane")
    _check_hcas(planes, path)
    launcher = launcher_of(data["launcher"], list(planes), path)
    _check_from_dump(data["nodes"], planes, path)
    system = System(data["name"], path, data["description"], data["nodes"], planes,
                    data["model"], launcher, hashlib.sha256(text.encode()).hexdigest(),
                    validate(data["simulate"], SIMULATE, path, "simulate"))
    _check_hosts(system)
    return system


#: ReFrame's rule for partition names (its config schema's ``alphanum_ext_string``): a
#: plane names a real partition and, as ``<system>-<plane>``, a simulated one.
PLANE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _plane(name: str, spec: dict, path: Path) -> Plane:
    where = f"planes.{name}"
    if not PLANE_NAME.fullmatch(name):
        raise ConfError(f"plane name {name[:40]!r} cannot name a ReFrame partition",
                        file=path, field=where, fix="use letters, digits, '_' and '-', "
                        "starting with a letter or '_', e.g. fat_tree")
    data = validate(spec, PLANE, path, where)
    kind = data["topology"].get("kind")
    if not isinstance(kind, str) or kind not in TOPOLOGIES:
        raise ConfError(f"unknown topology kind {kind!r}", file=path, field=f"{where}.topology.kind",
                        fix=f"use one of: {', '.join(TOPOLOGIES)}")
    topo = validate(data["topology"], TOPOLOGIES[kind], path, f"{where}.topology")
    if kind == "xgft":
        _check_xgft(topo, path, f"{where}.topology")
    _check_switch_count(kind, topo, path, f"{where}.topology")
    _check_sm(data["opensm"], path, f"{where}.opensm")
    return Plane(name, data["hca"], data["gbps"], topo, data["missing_cables"], data["opensm"])


def _check_lmc(opensm: dict, path: Path, where: str) -> None:
    """An engine with its own LMC (PARX's) always routes at it: any other LMC on its plane
    would be ignored."""
    lmc = opensm["lmc"]
    for name in opensm["routing"]:
        own = routing_engines.routing_engine(name).lmc
        if own is not None and lmc not in (0, own):
            raise ConfError(f"lmc {lmc} on a plane routed with {name}, which always routes at "
                            f"LMC {own} (docs/routing.md#lmc-and-lid-policy)", file=path,
                            field=f"{where}.lmc", fix=f"set lmc: 0 or {own}, or route the "
                            f"other LMC on a plane without {name}")


def _check_sm(opensm: dict, path: Path, where: str) -> None:
    """Switching engines between combos needs access to the plane's OpenSM."""
    _check_lmc(opensm, path, where)
    if opensm["sm"]["via"] == "none" and (len(opensm["routing"]) > 1
                                         or set(opensm["routing"]) & set(routing_engines.ours())):
        raise ConfError("a plane routed with several engines (or one of ours: "
                        f"{'/'.join(routing_engines.ours())}) needs its OpenSM",
                        file=path, field=f"{where}.sm.via",
                        fix="use via: agent or ssh (docs/cluster.md), or list one stock engine")


def _check_hcas(planes: dict[str, Plane], path: Path) -> None:
    """One HCA per plane: a job is pinned to its plane's HCA, so two planes on one HCA would
    run the second plane's jobs on the first one's fabric."""
    seen: dict[str, str] = {}
    for name, plane in planes.items():
        if plane.hca in seen:
            raise ConfError(f"plane '{name}' names HCA {plane.hca}, as plane "
                            f"'{seen[plane.hca]}' does", file=path, field=f"planes.{name}.hca",
                            fix="give each plane the HCA cabled into its fabric, e.g. mlx5_1")
        seen[plane.hca] = name


def _check_from_dump(nodes: dict, planes: dict[str, Plane], path: Path) -> None:
    name = nodes["from_dump"]
    if name is None:
        return
    dumps = [p for p, plane in planes.items() if plane.topology["kind"] == "ibnetdiscover"]
    if name not in dumps:
        raise ConfError(f"plane '{name}' has no ibnetdiscover dump", file=path,
                        field="nodes.from_dump", fix=f"name a plane with topology kind "
                        f"ibnetdiscover ({', '.join(dumps) or 'none in this conf'}), or drop "
                        "from_dump and give a hostname pattern")


def _check_xgft(topo: dict, path: Path, where: str) -> None:
    h = len(topo["m"])
    if len(topo["w"]) != h or (topo["p"] is not None and len(topo["p"]) != h):
        raise ConfError(f"m, w and p must have the same length ({h})", file=path,
                        field=f"{where}.w", fix="give one entry per tree level")


def _check_node_count(nodes: dict, path: Path) -> None:
    count = nodes["racks"] * nodes["per_rack"]
    if count > MAX_LIDS:
        raise ConfError(f"{count} nodes exceed the {MAX_LIDS} LIDs of an InfiniBand subnet",
                        file=path, field="nodes.per_rack", fix="check racks and per_rack")


def _check_pattern(fmt: str, path: Path) -> None:
    """The hostname pattern uses only {rack}, {slot}, {index} with a plain format spec."""
    where, fix = "nodes.hostname", "use {rack}, {slot} and {index}, e.g. r{rack:02d}n{slot:02d}"
    try:
        fields = [(name, spec or "") for _, name, spec, _ in string.Formatter().parse(fmt)
                  if name is not None]
    except ValueError as err:
        raise ConfError(f"bad pattern {fmt!r} ({err})", file=path, field=where,
                        fix=fix) from None
    for name, spec in fields:
        if name not in HOSTNAME_FIELDS:
            raise ConfError(f"unknown placeholder {{{name}}} in {fmt!r}", file=path,
                            field=where, fix=fix)
        # A nested field or a wide padding would build huge names for every node.
        if "{" in spec or any(int(n) > 63 for n in re.findall(r"[0-9]+", spec)):
            raise ConfError(f"format spec {spec!r} in {fmt!r}", file=path, field=where,
                            fix="use a short spec such as :02d")
    try:
        fmt.format(rack=1, slot=1, index=0)
    except (ValueError, TypeError) as err:
        raise ConfError(f"bad pattern {fmt!r} ({err})", file=path, field=where,
                        fix=fix) from None


def _switch_count(kind: str, topo: dict) -> int:
    """Elements the generator enumerates (switches; for XGFT also the host positions)."""
    match kind:
        case "hyperx":
            return math.prod(topo["dims"])
        case "xgft" | "kary":
            m, w = (topo["m"], topo["w"]) if kind == "xgft" else \
                kary_shape(topo["k"], topo["n"], topo["taper"], topo["rails"])
            return sum(math.prod(m[level:]) * math.prod(w[:level])
                       for level in range(len(m) + 1))
        case "shortcut" | "circulant" | "dragonfly":
            return topo["switches"]
        case "islands":
            return sum(math.ceil(n / topo["per_leaf"]) + topo["spines"] for n in topo["nodes"])
    return 0


def _check_switch_count(kind: str, topo: dict, path: Path, where: str) -> None:
    count = _switch_count(kind, topo)
    if count > MAX_LIDS:
        raise ConfError(f"{count} switches exceed the {MAX_LIDS} LIDs of an InfiniBand subnet",
                        file=path, field=where, fix="check the topology's sizes")


def _check_hosts(system: System) -> None:
    names = system.hostnames()
    seen: set[str] = set()
    for name in names:
        if not HOSTNAME_RE.fullmatch(name):
            raise ConfError(f"hostname pattern gives {name!r}", file=system.path,
                            field="nodes.hostname",
                            fix="names of 1-63 letters, digits, '.', '_' and '-'")
        if name in seen:
            raise ConfError(f"hostname pattern gives '{name}' twice", file=system.path,
                            field="nodes.hostname", fix="include {index} or {rack} and {slot}")
        seen.add(name)
    down = system.nodes["down"]
    for name in down:
        if down.count(name) > 1:       # counted twice, the usable nodes would be miscounted
            raise ConfError(f"down node '{name}' is listed twice", file=system.path,
                            field="nodes.down", fix="list each down node once")
        if name not in seen:
            raise ConfError(f"down node '{name}' is not a host of this system", file=system.path,
                            field="nodes.down", fix="list hostnames the pattern produces")


def system_path(name_or_path: str) -> Path:
    """Accept ``t2hx`` or ``conf/systems/t2hx.yaml``; a name is looked up in the systems
    directory ($T2HX_CONF_SYSTEMS, default conf/systems)."""
    from t2hx.paths import conf_dir

    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return path
    return conf_dir() / f"{name_or_path}.yaml"
