/*
 * px_standalone: what the routing core (px_graph, px_run, px_layers, sar, parx) takes from
 * OpenSM's headers, for px-sar (px_sar.c), which runs that core on a graph snapshot the
 * plugin wrote (px_snapshot.c) instead of on OpenSM's subnet. Log lines go to stderr at
 * the levels OpenSM would print by default (errors and info).
 */
#ifndef PX_STANDALONE_H
#define PX_STANDALONE_H

#include <stdio.h>

#define OSM_LOG_ERROR 0x01
#define OSM_LOG_INFO 0x02
#define OSM_LOG_VERBOSE 0x04
#define OSM_NO_PATH 0xFF

/* The plugin's OpenSM handle; px-sar has none (px_option reads its own table). */
typedef struct px_no_osm osm_opensm_t;

extern int px_log_level;	/* px_sar.c: the levels printed */

#define PX_LOG(g, level, fmt, ...) \
	do { \
		if ((level) & px_log_level) \
			fprintf(stderr, "%s: " fmt, (g)->engine, ##__VA_ARGS__); \
	} while (0)

#endif
