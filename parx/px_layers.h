/*
 * px_layers: deadlock freedom by virtual layers (DFSSSP/LASH style). Every path (source
 * switch -> destination LID) is put into the first virtual layer whose channel dependency
 * graph (CDG) stays acyclic with the path's dependencies added. Acyclicity is maintained
 * incrementally with a dynamic topological order (Pearce & Kelly 2006), so adding a
 * dependency that respects the current order costs O(1) and only order violations trigger
 * a search restricted to the affected region.
 *
 * Layer i is served as SL i and mapped SL i -> VL i on every port.
 */
#ifndef PX_LAYERS_H
#define PX_LAYERS_H

#include <stdint.h>
#include "px_graph.h"

#define PX_MAX_LAYERS 8
#define PX_NO_LAYER 0xff

typedef struct px_layer_result {
	int nlayers;		/* layers (VLs) used */
	int nsw, ndest;
	uint8_t *layer;		/* [dest * nsw + sw] -> layer, PX_NO_LAYER when no path */
	uint64_t *paths_per_layer;
} px_layer_result_t;

#ifndef PX_STANDALONE
/* Number of data VLs every port of the subnet supports, capped by max_op_vls and 8. */
int px_available_vls(const px_graph_t *g);
#endif

/* Assigns every path of g->next to a layer, destinations in `dest_order` order (all dests if
 * NULL). Returns 0, or -1 when more than `max_layers` layers would be needed (logged). */
int px_layers_assign(px_graph_t *g, const int *dest_order, int max_layers,
		     px_layer_result_t *out);
/* Puts every path of g->next into layer 0, with no deadlock check (engines that model no
 * deadlock and route on one VL, e.g. floyd). Returns 0, or -1 when out of memory (logged). */
int px_layers_single(const px_graph_t *g, px_layer_result_t *out);
void px_layers_free(px_layer_result_t *r);

#endif
