/*
 * px_snapshot: the switch graph of one routing run as a text file, written by the plugin
 * (option px_snapshot=<file>) and read by px-sar, so that a job-history replay routes SAR for
 * each job set on exactly the graph OpenSM built (same switch, channel and LID order, hence
 * the same tie-breaking and the same LFTs) without sweeping the subnet again.
 *
 *   px-snapshot 1
 *   graph <nsw> <nchan> <nterm> <nnode> <ndest> <max_lid> <layers>
 *   sw <guid> <lid> <lft_size> <max_lid_ho>           one per switch, in graph order
 *   chan <from> <to> <port>                           one per channel, in index order
 *   node <guid> =<name>                               one per node
 *   term <port_guid> <node> <sw> <sw_port> <base_lid> <top_lid>
 *   dest <lid> <sw> <last_port> <term> <offset>
 *
 * <layers> is the VL layering's limit of that run (min(available VLs, max_vls)).
 */
#ifndef PX_SNAPSHOT_H
#define PX_SNAPSHOT_H

#include "px_graph.h"

#define PX_SNAPSHOT_MAGIC "px-snapshot 1"

#ifndef PX_STANDALONE
/* Writes g (fresh from px_graph_build) to path via path.tmp and a rename. 0 or -1 (logged). */
int px_snapshot_write(const px_graph_t *g, int layers, const char *path);
#else
/* Reads a snapshot into g (engine name `engine`), LFTs all OSM_NO_PATH, scratch allocated.
 * Returns 0, or -1 with why in err. */
int px_snapshot_read(px_graph_t *g, int *layers, const char *path, const char *engine,
		     char *err, size_t errlen);
#endif

#endif
