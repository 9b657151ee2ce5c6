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
#include "px_run.h"

typedef struct jobs {
	char **names;		/* job ids */
	int njobs, capjobs;
	int **of_node;		/* per node: job indices */
	int *n_of_node, *cap_of_node;
	int *size;		/* per job: number of nodes */
	uint64_t *largest;	/* per node: size of its largest job */
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

/* A job line: <node> <job-id> [<job-id> ...]; unknown nodes are skipped. */
static int job_line(px_graph_t *g, px_input_t *in, int node, char **save, void *arg)
{
	jobs_t *j = arg;
	char *tok = strtok_r(NULL, PX_BLANKS, save);

	if (node < 0)
		return 0;
	if (!tok) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA41: %s:%d: node '%s' has no job id\n", in->path,
		       in->lineno, g->nodes[node].name);
		return -1;
	}
	for (; tok; tok = strtok_r(NULL, PX_BLANKS, save)) {
		int job = job_index(j, tok);

		if (job < 0 || node_add_job(j, node, job)) {
			PX_LOG(g, OSM_LOG_ERROR, "ERR FA42: out of memory reading %s\n", in->path);
			return -1;
		}
	}
	return 0;
}

static int read_jobs(px_engine_t *e, px_graph_t *g, jobs_t *j)
{
	int n, k, rc;

	memset(j, 0, sizeof(*j));
	j->of_node = calloc((size_t)g->nnode + 1, sizeof(*j->of_node));
	j->n_of_node = calloc((size_t)g->nnode + 1, sizeof(int));
	j->cap_of_node = calloc((size_t)g->nnode + 1, sizeof(int));
	j->largest = calloc((size_t)g->nnode + 1, sizeof(uint64_t));
	if (!j->of_node || !j->n_of_node || !j->cap_of_node || !j->largest)
		return -1;
	rc = px_read_input(e, g, "sar_jobs", "no job-aware ordering (plain +1)", job_line, j);
	for (n = 0; n < g->nnode; n++)
		for (k = 0; k < j->n_of_node[n]; k++)
			if ((uint64_t)j->size[j->of_node[n][k]] > j->largest[n])
				j->largest[n] = (uint64_t)j->size[j->of_node[n][k]];
	if (rc > 0)
		PX_LOG(g, OSM_LOG_INFO, "job file %s: %d jobs\n", e->input, j->njobs);
	return rc < 0 ? -1 : 0;
}

/* Source weights towards node nd: +1 per terminal of every node sharing a job with nd. */
static void job_weights(const px_graph_t *g, const jobs_t *j, int nd, unsigned char *mark,
			uint64_t *w)
{
	int k, x;

	memset(mark, 0, (size_t)j->njobs);
	for (k = 0; k < j->n_of_node[nd]; k++)
		mark[j->of_node[nd][k]] = 1;
	memset(w, 0, (size_t)g->nsw * sizeof(uint64_t));
	for (x = 0; x < g->nnode; x++) {
		int shares = 0;

		for (k = 0; k < j->n_of_node[x] && !shares; k++)
			shares = mark[j->of_node[x][k]];
		if (shares)
			px_add_node_weight(g, x, 1, w);
	}
}

int sar_route(px_engine_t *e, px_graph_t *g, int *order)
{
	jobs_t j;
	px_run_t r;
	int *sorted = NULL, i, n, rc = -1;
	unsigned char *mark = NULL;

	if (read_jobs(e, g, &j) || px_run_init(&r, g, order, NULL, NULL, NULL))
		goto out_jobs;
	sorted = malloc(((size_t)g->nnode + 1) * sizeof(int));
	mark = calloc((size_t)j.njobs + 1, 1);
	if (!sorted || !mark)
		goto out;
	/* nodes by the size of their largest job, largest first; intra-job +1 updates */
	for (n = 0; n < g->nnode; n++)
		sorted[n] = n;
	px_sort_nodes_desc(sorted, g->nnode, j.largest);
	for (i = 0; i < g->nnode && j.largest[sorted[i]] > 0; i++) {
		job_weights(g, &j, sorted[i], mark, r.w);
		px_run_node(&r, sorted[i], r.w);
	}
	if (px_run_finish(&r)) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA44: %d destination LIDs are unreachable; not routing\n",
		       r.unreachable);
		goto out;
	}
	rc = 0;
out:
	free(sorted);
	free(mark);
	px_run_free(&r);
out_jobs:
	jobs_free(&j, g->nnode);
	return rc;
}
