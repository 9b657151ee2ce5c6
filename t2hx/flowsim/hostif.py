"""The HCA's host interface as the packet engine sees it: PCI Express rates per direction.

An HCA moves a message's bytes over PCIe: the sender's HCA *reads* them from host memory
(memory-read requests go upstream, completions with the data come downstream), the
receiver's HCA *writes* them (posted memory-write TLPs go upstream). Each direction of a
link is ``lanes × GT/s × encoding`` raw, of which every TLP takes framing, sequence
number, header and LCRC, and the data-link layer adds Ack/UpdateFC DLLPs. A host that
sends and receives at once shares the upstream direction between its write data and its
read requests: the packet engine charges those request bytes to the receive direction
(``request_bytes_per_byte``). Every number is a field of the conf's ``model.packet.hca``
(docs/modelling.md#packet-engine lists the specification clause of each).
"""

from __future__ import annotations

from dataclasses import dataclass

#: PCI Express Base Specification 1.1/2.0/3.0/4.0/5.0: transfer rate per lane (GT/s) and
#: encoding (8b/10b up to 2.0, 128b/130b from 3.0). 6.0's FLIT mode (PAM4, FEC, 256-byte flits)
#: frames TLPs differently and is not modelled.
GENERATIONS = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130),
               5: (32.0, 128 / 130)}
#: Per TLP on the wire: up to 2.0 STP and END framing symbols (1 + 1), sequence number (2),
#: LCRC (4); from 3.0 a 4-byte STP token that carries the sequence number, and the LCRC (4):
#: 8 bytes in every generation. The header adds 12 bytes (3 DW) or 16 (4 DW, 64-bit
#: addresses). No ECRC (optional, off by default).
TLP_FRAMING = 1 + 1 + 2 + 4
HEADER_3DW, HEADER_4DW = 12, 16
#: A DLLP (Ack, UpdateFC) on the wire: 6 bytes plus SDP/END framing up to 2.0, plus a
#: 2-byte SDP token from 3.0: 8 bytes in every generation.
DLLP_BYTES = 8


@dataclass(frozen=True)
class HostInterface:
    """Payload rates (bytes/s) of the two directions, and the upstream bytes a read costs."""
    read_rate: float                 # host memory -> HCA (send data: read completions)
    write_rate: float                # HCA -> host memory (received data: posted writes)
    request_bytes_per_byte: float    # upstream read-request bytes per byte read
    raw_rate: float                  # bytes/s per direction before any overhead


def pcie(gen: int, lanes: int, max_payload: int, max_read_request: int,
         completion_bytes: int, tlps_per_dllp: float, addr64: bool = True) -> HostInterface:
    """Rates of a PCIe link of generation ``gen`` and width ``lanes``.

    Writes carry ``max_payload`` bytes per TLP with a 3/4-DW header; reads return
    ``completion_bytes`` per completion TLP (3-DW header) and cost one request TLP without
    data per ``max_read_request`` bytes upstream; each direction carries one DLLP per
    ``tlps_per_dllp`` TLPs of the other."""
    gts, coding = GENERATIONS[gen]
    raw = gts * 1e9 * coding * lanes / 8
    header = HEADER_4DW if addr64 else HEADER_3DW
    dllp = DLLP_BYTES / tlps_per_dllp
    write = raw * max_payload / (max_payload + TLP_FRAMING + header + dllp)
    read = raw * completion_bytes / (completion_bytes + TLP_FRAMING + HEADER_3DW + dllp)
    request = (TLP_FRAMING + header + dllp) / max_read_request
    return HostInterface(read, write, request, raw)


def describe(hca: dict | None) -> str:
    """The conf's ``model.packet.hca`` in words, for reports: "PCIe 2.0 x8", "as fast as the
    link", or "not described"."""
    if not hca or not hca.get("interface"):
        return "not described"
    if hca["interface"] == "link":
        return "as fast as the link"
    return f"PCIe {hca['pcie_gen']}.0 x{hca['lanes']}"


def unlimited(rate: float) -> HostInterface:
    """A host interface as fast as the HCA's link (``rate`` bytes/s) and free of read
    requests: for comparisons with the flow model, which has no host interface."""
    return HostInterface(rate, rate, 0.0, rate)
