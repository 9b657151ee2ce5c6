/*
 * sar: Scheduling-Aware Routing (Domke et al., SC16, Algorithm 1) on the shared DFSSSP-style
 * path search.
 *
 * Job file (plugin option sar_jobs=<file>, re-read on every routing run):
 *   # comment
 *   <node> <job-id> [<job-id> ...]
 * one line per node (a node may also appear on several lines); nodes are hostnames (first
 * word of the NodeDescription) or node/port GUIDs written 0x...; job ids are any words.
 * Unknown nodes are logged and skipped.
 *
 * Order: nodes sorted by the size of the largest job on them, descending; for each, paths to
 * all its LIDs, and +1 only on links of paths whose source shares a job with it; then every
 * other terminal LID and the switch LIDs with +1 per source terminal. This fabric model has
 * no storage nodes, so SC16's storage step is empty. Paths stay minimal.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "px_engine.h"

typedef struct jobs {
	char **names;		/* job ids */
	int njobs, capjobs;
	int **of_node;		/* per node: job indices */
	int *n_of_node, *cap_of_node;
	int *size;		/* per job: number of nodes */
	int *largest;		/* per node: size of its largest job */
} jobs_t;

static void jobs_free(jobs_t *j, int nnode)
{
	int i;

	for (i = 0; j->names && i < j->njobs; i++)
		free(j->names[i]);
	for (i = 0; j->of_node && i < nnode; i++)
		free(j->of_node[i]);
	free(j->names);
	free(j->of_node);
	free(j->n_of_node);
	free(j->cap_of_node);
	free(j->size);
	free(j->largest);
}

static int job_index(jobs_t *j, const char *name)
{
	int i;

	for (i = 0; i < j->njobs; i++)
		if (!strcmp(j->names[i], name))
			return i;
	if (j->njobs == j->capjobs) {
		int cap = j->capjobs ? 2 * j->capjobs : 16;
		char **n = realloc(j->names, (size_t)cap * sizeof(*n));
		int *sz = realloc(j->size, (size_t)cap * sizeof(int));

		if (n)
			j->names = n;
		if (sz)
			j->size = sz;
		if (!n || !sz)
			return -1;
		j->capjobs = cap;
	}
	if (!(j->names[j->njobs] = strdup(name)))
		return -1;
	j->size[j->njobs] = 0;
	return j->njobs++;
}

static int node_add_job(jobs_t *j, int node, int job)
{
	int i;

	for (i = 0; i < j->n_of_node[node]; i++)
		if (j->of_node[node][i] == job)
			return 0;
	if (j->n_of_node[node] == j->cap_of_node[node]) {
		int cap = j->cap_of_node[node] ? 2 * j->cap_of_node[node] : 2;
		int *n = realloc(j->of_node[node], (size_t)cap * sizeof(int));

		if (!n)
			return -1;
		j->of_node[node] = n;
		j->cap_of_node[node] = cap;
	}
	j->of_node[node][j->n_of_node[node]++] = job;
	j->size[job]++;
	return 0;
}

static int parse_jobs(px_graph_t *g, const char *path, char *text, jobs_t *j)
{
	char *line = text, *next;
	int lineno = 0, unknown = 0;

	for (; line && *line; line = next) {
		char *save = NULL, *tok, *name;
		int node;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		if (!(name = strtok_r(line, " \t\r", &save)))
			continue;
		if ((node = px_graph_find_node(g, name)) < 0) {
			if (unknown++ < 20)
				PX_LOG(g, OSM_LOG_INFO, "WARNING: %s:%d: node '%s' is not in the "
				       "fabric; skipped\n", path, lineno, name);
			continue;
		}
		if (!(tok = strtok_r(NULL, " \t\r", &save))) {
			PX_LOG(g, OSM_LOG_ERROR, "ERR FA41: %s:%d: node '%s' has no job id\n", path,
			       lineno, name);
			return -1;
		}
		for (; tok; tok = strtok_r(NULL, " \t\r", &save)) {
			int job = job_index(j, tok);

			if (job < 0 || node_add_job(j, node, job)) {
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA42: out of memory reading %s\n", path);
				return -1;
			}
		}
	}
	return 0;
}

static int read_jobs(px_engine_t *e, px_graph_t *g, jobs_t *j)
{
	char path[4096], *text;
	int n, k, rc;

	memset(j, 0, sizeof(*j));
	j->of_node = calloc((size_t)g->nnode + 1, sizeof(*j->of_node));
	j->n_of_node = calloc((size_t)g->nnode + 1, sizeof(int));
	j->cap_of_node = calloc((size_t)g->nnode + 1, sizeof(int));
	j->largest = calloc((size_t)g->nnode + 1, sizeof(int));
	if (!j->of_node || !j->n_of_node || !j->cap_of_node || !j->largest)
		return -1;
	if (!px_option(e->osm, "sar_jobs", path, sizeof(path))) {
		PX_LOG(g, OSM_LOG_INFO, "no sar_jobs option: no job-aware ordering (plain +1)\n");
		return 0;
	}
	if (!(text = px_read_file(g, path)))
		return -1;
	rc = parse_jobs(g, path, text, j);
	free(text);
	for (n = 0; n < g->nnode; n++)
		for (k = 0; k < j->n_of_node[n]; k++)
			if (j->size[j->of_node[n][k]] > j->largest[n])
				j->largest[n] = j->size[j->of_node[n][k]];
	if (!rc)
		PX_LOG(g, OSM_LOG_INFO, "job file %s: %d jobs\n", path, j->njobs);
	return rc;
}

static const int *sort_largest;

static int cmp_largest(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (sort_largest[x] != sort_largest[y])
		return sort_largest[y] - sort_largest[x];
	return x - y;
}

static int route_and_update(px_graph_t *g, int d, const uint64_t *w, int *order, int *norder)
{
	int miss = px_route_dest(g, d, NULL, NULL);

	if (miss)
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA43: LID %u is unreachable from %d switches\n",
		       g->dests[d].lid, miss);
	px_update_weights(g, d, w);
	g->dests[d].routed = 1;
	order[(*norder)++] = d;
	return miss ? 1 : 0;
}

static int sar_route(px_engine_t *e, px_graph_t *g, int *order)
{
	jobs_t j;
	int *sorted = NULL, *first = NULL, norder = 0, unreachable = 0, i, n, d, t, rc = -1;
	uint64_t *w = NULL, *ones = NULL;
	unsigned char *mark = NULL;

	memset(&j, 0, sizeof(j));
	if (read_jobs(e, g, &j))
		goto out;
	sorted = malloc(((size_t)g->nnode + 1) * sizeof(int));
	first = malloc(((size_t)g->nterm + 1) * sizeof(int));
	w = calloc((size_t)g->nsw + 1, sizeof(uint64_t));
	ones = calloc((size_t)g->nsw + 1, sizeof(uint64_t));
	mark = calloc((size_t)j.njobs + 1, 1);
	if (!sorted || !first || !w || !ones || !mark)
		goto out;
	px_terminal_counts(g, ones);
	for (t = 0; t < g->nterm; t++)
		first[t] = -1;
	for (d = g->ndest - 1; d >= 0; d--)
		if (g->dests[d].term >= 0)
			first[g->dests[d].term] = d;
	for (n = 0; n < g->nnode; n++)
		sorted[n] = n;
	sort_largest = j.largest;
	qsort(sorted, (size_t)g->nnode, sizeof(int), cmp_largest);

	for (i = 0; i < g->nnode && j.largest[sorted[i]] > 0; i++) {
		int nd = sorted[i], k, x;

		/* sources sharing a job with nd, counted per switch */
		memset(mark, 0, (size_t)j.njobs);
		for (k = 0; k < j.n_of_node[nd]; k++)
			mark[j.of_node[nd][k]] = 1;
		memset(w, 0, (size_t)g->nsw * sizeof(uint64_t));
		for (x = 0; x < g->nnode; x++) {
			int shares = 0, m;

			for (k = 0; k < j.n_of_node[x] && !shares; k++)
				shares = mark[j.of_node[x][k]];
			for (m = 0; shares && m < g->nodes[x].nterms; m++)
				w[g->terms[g->nodes[x].terms[m]].sw]++;
		}
		for (k = 0; k < g->nodes[nd].nterms; k++) {
			t = g->nodes[nd].terms[k];
			for (d = first[t]; d >= 0 && d < g->ndest && g->dests[d].term == t; d++)
				unreachable += route_and_update(g, d, w, order, &norder);
		}
	}
	for (d = 0; d < g->ndest; d++)
		if (!g->dests[d].routed && g->dests[d].term >= 0)
			unreachable += route_and_update(g, d, ones, order, &norder);
	for (d = 0; d < g->ndest; d++)
		if (!g->dests[d].routed)
			unreachable += route_and_update(g, d, ones, order, &norder);
	if (unreachable) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA44: %d destination LIDs are unreachable; not routing\n",
		       unreachable);
		goto out;
	}
	rc = 0;
out:
	free(sorted);
	free(first);
	free(w);
	free(ones);
	free(mark);
	jobs_free(&j, g->nnode);
	return rc;
}

int sar_setup(osm_routing_engine_t *re, osm_opensm_t *osm)
{
	px_engine_t *e = re->context;

	e->osm = osm;
	e->route = sar_route;
	px_engine_setup(re, e);
	OSM_LOG(&osm->log, OSM_LOG_VERBOSE, "sar: routing engine set up\n");
	return 0;
}
