/* Event loop of the fast fluid engine (t2hx/flowsim/fluid_fast.py): the semantics of the
 * exact engine (t2hx/flowsim/fluid.py, run_jobs) compiled, with max-min rates solved per
 * connected component of the in-flight flows and cached under that component's flow set.
 * Why C: a capacity window of the 664-node mix is ~1e8 fluid events; at numpy's ~0.1 ms
 * per event it took hours (docs/modelling.md#capacity-mode). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-9

typedef struct {
    uint64_t h1, h2;
    int64_t n, off;        /* off: first (fid, rate) pair in the pool; n == -1: empty */
} entry_t;

typedef struct {
    /* inputs */
    const int32_t *paths; int width;
    const double *size, *lat, *cap;
    const int64_t *plan_off, *step_off, *step_plan, *repeat;
    const double *step_sec;
    int njobs, nlinks;
    /* flows in flight */
    int64_t nf, *fid; int *owner; double *rem, *rate;
    /* jobs */
    double *timer, *wait_after; int64_t *step, *iter, *outstanding;
    /* solver scratch */
    int64_t *parent, *link_flow, *link_stamp, stamp, *order, *comp_start;
    double *link_rem, *link_share, *rate_of_fid; int64_t *link_cnt, *touched, *live;
    int32_t *local_path;
    char *link_veto;
    double *flow_best;
    /* cache */
    entry_t *table; int64_t tsize, tused;
    int64_t *pool_fid; double *pool_rate; int64_t pool_cap, pool_used;
    int64_t hits, misses, events, flowsum, set_hits, rounds, solved_flows, solved_links;
    uint64_t set1, set2;      /* order-free hash of the in-flight flow set */
    int64_t *ident;
} st_t;

static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int64_t find(int64_t *p, int64_t i) {
    while (p[i] != i) { p[i] = p[p[i]]; i = p[i]; }
    return i;
}

static const int32_t *path_of(const st_t *s, int64_t f) { return s->paths + f * s->width; }

/* Max-min by parallel progressive filling, as t2hx/flowsim/maxmin.py: each round every
 * link offers remaining / unfrozen flows; a link is a local bottleneck when no flow through
 * it has a smaller share elsewhere; flows through local bottlenecks freeze at their
 * smallest share. Rounds = the length of the bottleneck chain, not the number of rates. */
static void solve(st_t *s, const int64_t *idx, int64_t m) {
    /* The component's paths are copied once with links renumbered 0..nt): the rounds then
     * read small dense arrays instead of the fabric's. */
    const int w = s->width;
    int32_t *lp = s->local_path;
    int64_t nt = 0, left = m;
    s->stamp++;
    for (int64_t k = 0; k < m; k++) {
        const int32_t *p = path_of(s, s->fid[idx[k]]);
        s->live[k] = k;
        for (int h = 0; h < w; h++) {
            int32_t l = p[h];
            if (l < 0) { lp[k * w + h] = -1; continue; }
            if (s->link_stamp[l] != s->stamp) {
                s->link_stamp[l] = s->stamp;
                s->link_flow[l] = nt;
                s->link_rem[nt] = s->cap[l];
                s->link_cnt[nt] = 0;
                nt++;
            }
            lp[k * w + h] = (int32_t)s->link_flow[l];
            s->link_cnt[s->link_flow[l]]++;
        }
    }
    s->solved_flows += m; s->solved_links += nt;
    double *share = s->link_share, *rem = s->link_rem;
    int64_t *cnt = s->link_cnt;
    char *veto = s->link_veto;
    while (left > 0) {
        s->rounds++;
        for (int64_t t = 0; t < nt; t++) {
            double sh = cnt[t] > 0 ? rem[t] / (double)cnt[t] : INFINITY;
            share[t] = sh < 0 ? 0 : sh;
            veto[t] = cnt[t] == 0;
        }
        for (int64_t k = 0; k < left; k++) {
            const int32_t *p = lp + s->live[k] * w;
            double best = INFINITY;
            for (int h = 0; h < w && p[h] >= 0; h++)
                if (share[p[h]] < best) best = share[p[h]];
            s->flow_best[k] = best;
            double lim = best * (1 + RTOL);
            for (int h = 0; h < w && p[h] >= 0; h++)
                if (share[p[h]] > lim) veto[p[h]] = 1;
        }
        int64_t kept = 0;
        for (int64_t k = 0; k < left; k++) {
            int64_t i = s->live[k];
            const int32_t *p = lp + i * w;
            int hit = 0;
            for (int h = 0; h < w && p[h] >= 0; h++) hit |= !veto[p[h]];
            if (!hit) {
                s->flow_best[kept] = s->flow_best[k];
                s->live[kept++] = i;
                continue;
            }
            double r = s->flow_best[k];
            s->rate[idx[i]] = r;
            for (int h = 0; h < w && p[h] >= 0; h++) {
                rem[p[h]] -= r;
                if (rem[p[h]] < 0) rem[p[h]] = 0;
                cnt[p[h]]--;
            }
        }
        left = kept;
    }
}

static entry_t *slot(st_t *s, uint64_t h1, uint64_t h2, int64_t n) {
    uint64_t i = h1 & (uint64_t)(s->tsize - 1);
    for (;;) {
        entry_t *e = &s->table[i];
        if (e->n == -1 || (e->h1 == h1 && e->h2 == h2 && e->n == n)) return e;
        i = (i + 1) & (uint64_t)(s->tsize - 1);
    }
}

static void clear_cache(st_t *s) {
    for (int64_t i = 0; i < s->tsize; i++) s->table[i].n = -1;
    s->tused = 0; s->pool_used = 0;
}

#define SALT1 0x5851f42d4c957f2dULL
#define SALT2 0x14057b7ef767814fULL

static uint64_t key1(uint64_t f) { return mix64(f); }
static uint64_t key2(uint64_t f) { return mix64(f ^ SALT1); }

/* The cached rates of flows idx[0..m) under key (h1, h2, m); 1 on a hit. */
static int lookup(st_t *s, uint64_t h1, uint64_t h2, const int64_t *idx, int64_t m) {
    entry_t *e = slot(s, h1, h2, m);
    if (e->n != m) return 0;
    for (int64_t k = 0; k < m; k++)
        s->rate_of_fid[s->pool_fid[e->off + k]] = s->pool_rate[e->off + k];
    for (int64_t k = 0; k < m; k++) s->rate[idx[k]] = s->rate_of_fid[s->fid[idx[k]]];
    return 1;
}

static void store(st_t *s, uint64_t h1, uint64_t h2, const int64_t *idx, int64_t m) {
    if (m > s->pool_cap) return;
    if (s->pool_used + m > s->pool_cap || 2 * (s->tused + 1) > s->tsize) clear_cache(s);
    entry_t *e = slot(s, h1, h2, m);
    e->h1 = h1; e->h2 = h2; e->n = m; e->off = s->pool_used;
    for (int64_t k = 0; k < m; k++) {
        s->pool_fid[s->pool_used + k] = s->fid[idx[k]];
        s->pool_rate[s->pool_used + k] = s->rate[idx[k]];
    }
    s->pool_used += m; s->tused++;
}

/* Rates of a component: from the cache when the same flow set was solved before. */
static void component_rates(st_t *s, const int64_t *idx, int64_t m) {
    uint64_t h1 = 0, h2 = 0;
    for (int64_t k = 0; k < m; k++) {
        uint64_t f = (uint64_t)s->fid[idx[k]];
        h1 += key1(f); h2 += key2(f);
    }
    if (lookup(s, h1, h2, idx, m)) { s->hits++; return; }
    s->misses++;
    solve(s, idx, m);
    store(s, h1, h2, idx, m);
}

/* Flows that share a link interact; the rest do not: solve each component on its own. */
static void rates(st_t *s) {
    int64_t nf = s->nf;
    uint64_t w1 = s->set1 ^ SALT2, w2 = s->set2 ^ SALT1;
    if (lookup(s, w1, w2, s->ident, nf)) { s->set_hits++; return; }
    s->flowsum += nf;
    s->stamp++;
    for (int64_t i = 0; i < nf; i++) s->parent[i] = i;
    for (int64_t i = 0; i < nf; i++) {
        const int32_t *p = path_of(s, s->fid[i]);
        for (int h = 0; h < s->width && p[h] >= 0; h++) {
            int32_t l = p[h];
            if (s->link_stamp[l] != s->stamp) {
                s->link_stamp[l] = s->stamp; s->link_flow[l] = i;
            } else {
                int64_t a = find(s->parent, i), b = find(s->parent, s->link_flow[l]);
                if (a != b) s->parent[a < b ? b : a] = a < b ? a : b;
            }
        }
    }
    for (int64_t i = 0; i < nf; i++) s->parent[i] = find(s->parent, i);
    /* counting sort of the flows by root, keeping flow order inside a component */
    for (int64_t i = 0; i <= nf; i++) s->comp_start[i] = 0;
    for (int64_t i = 0; i < nf; i++) s->comp_start[s->parent[i] + 1]++;
    for (int64_t i = 0; i < nf; i++) s->comp_start[i + 1] += s->comp_start[i];
    for (int64_t i = 0; i < nf; i++) s->order[s->comp_start[s->parent[i]]++] = i;
    int64_t at = 0;
    while (at < nf) {
        int64_t r = s->parent[s->order[at]], end = at;
        while (end < nf && s->parent[s->order[end]] == r) end++;
        component_rates(s, s->order + at, end - at);
        at = end;
    }
    store(s, w1, w2, s->ident, nf);
}

/* Job j's wait is over: start its next step. Returns 1 if flows were added. */
static int advance(st_t *s, int j, double now, double *ends, const int64_t *ends_cap,
                   const int64_t *ends_off, int64_t *nends) {
    s->timer[j] = INFINITY;
    s->step[j]++;
    int64_t nsteps = s->step_off[j + 1] - s->step_off[j];
    if (s->step[j] >= nsteps) {
        if (nends[j] < ends_cap[j]) ends[ends_off[j] + nends[j]] = now;
        nends[j]++;
        s->iter[j]++;
        if (s->iter[j] >= s->repeat[j]) return 0;
        s->step[j] = 0;
    }
    int64_t st = s->step_off[j] + s->step[j];
    int64_t p = s->step_plan[st];
    if (p < 0) { s->timer[j] = now + s->step_sec[st]; return 0; }
    s->wait_after[j] = 0.0;
    s->outstanding[j] = s->plan_off[p + 1] - s->plan_off[p];
    for (int64_t f = s->plan_off[p]; f < s->plan_off[p + 1]; f++) {
        s->fid[s->nf] = f; s->rem[s->nf] = s->size[f]; s->owner[s->nf] = j; s->nf++;
        s->set1 += key1((uint64_t)f); s->set2 += key2((uint64_t)f);
    }
    return 1;
}

/* Returns 0, or -1 when memory ran out. stats: component hits, misses, events, flows
 * visited by the component search, whole-set hits, solver rounds, flows and links solved. */
int t2hx_fluid_run(const int32_t *paths, int width, const double *size, const double *lat,
                   int64_t nflows, const int64_t *plan_off, const int64_t *step_off,
                   const int64_t *step_plan, const double *step_sec, int njobs,
                   const int64_t *repeat, const double *start, const double *cap, int nlinks,
                   double until, int64_t max_inflight, int64_t pool_cap, double *ends,
                   const int64_t *ends_off, const int64_t *ends_cap, int64_t *nends,
                   int64_t *stats) {
    st_t s;
    memset(&s, 0, sizeof s);
    s.paths = paths; s.width = width; s.size = size; s.lat = lat; s.cap = cap;
    s.plan_off = plan_off; s.step_off = step_off; s.step_plan = step_plan;
    s.step_sec = step_sec; s.repeat = repeat; s.njobs = njobs; s.nlinks = nlinks;
    int64_t F = max_inflight > 0 ? max_inflight : 1;
    s.fid = malloc(F * sizeof *s.fid); s.owner = malloc(F * sizeof *s.owner);
    s.rem = malloc(F * sizeof *s.rem); s.rate = malloc(F * sizeof *s.rate);
    s.parent = malloc(F * sizeof *s.parent); s.order = malloc(F * sizeof *s.order);
    s.comp_start = malloc((F + 1) * sizeof *s.comp_start);
    s.live = malloc(F * sizeof *s.live);
    s.local_path = malloc(F * width * sizeof *s.local_path); s.ident = malloc(F * sizeof *s.ident); s.flow_best = malloc(F * sizeof *s.flow_best);
    s.timer = malloc(njobs * sizeof(double)); s.wait_after = malloc(njobs * sizeof(double));
    s.step = malloc(njobs * sizeof(int64_t)); s.iter = malloc(njobs * sizeof(int64_t));
    s.outstanding = malloc(njobs * sizeof(int64_t));
    s.link_flow = malloc(nlinks * sizeof(int64_t));
    s.link_stamp = calloc(nlinks, sizeof(int64_t));
    s.link_rem = malloc(nlinks * sizeof(double)); s.link_veto = malloc(nlinks); s.link_share = malloc(nlinks * sizeof(double));
    s.link_cnt = malloc(nlinks * sizeof(int64_t)); s.touched = malloc(nlinks * sizeof(int64_t));
    s.rate_of_fid = malloc((nflows > 0 ? nflows : 1) * sizeof(double));
    s.tsize = 1 << 20;
    s.table = malloc(s.tsize * sizeof *s.table);
    s.pool_cap = pool_cap;
    s.pool_fid = malloc(pool_cap * sizeof(int64_t)); s.pool_rate = malloc(pool_cap * sizeof(double));
    int rc = 0;
    if (!s.fid || !s.owner || !s.rem || !s.rate || !s.parent || !s.order || !s.comp_start ||
        !s.live || !s.local_path || !s.link_veto || !s.ident || !s.flow_best || !s.timer || !s.wait_after || !s.step || !s.iter ||
        !s.outstanding || !s.link_flow || !s.link_stamp || !s.link_rem || !s.link_share ||
        !s.link_cnt || !s.touched || !s.rate_of_fid || !s.table || !s.pool_fid ||
        !s.pool_rate) {
        rc = -1;
        goto out;
    }
    clear_cache(&s);
    for (int64_t i = 0; i < F; i++) s.ident[i] = i;
    for (int j = 0; j < njobs; j++) {
        s.timer[j] = start[j]; s.step[j] = -1; s.iter[j] = 0; s.outstanding[j] = 0;
        s.wait_after[j] = 0; nends[j] = 0;
    }
    double now = 0.0;
    int dirty = 1;
    for (;;) {
        if (dirty && s.nf) rates(&s);
        dirty = 0;
        double t_flow = INFINITY, t_timer = INFINITY;
        for (int64_t i = 0; i < s.nf; i++) {
            double x = s.rem[i] / s.rate[i];
            if (x < t_flow) t_flow = x;
        }
        for (int j = 0; j < njobs; j++)
            if (s.timer[j] - now < t_timer) t_timer = s.timer[j] - now;
        double dt = t_flow < t_timer ? t_flow : t_timer;
        if (!isfinite(dt) || now + dt > until) break;
        s.events++;
        double lim = dt * (1 + 1e-9) + 1e-15;
        int64_t kept = 0;
        for (int64_t i = 0; i < s.nf; i++) {
            int done = s.rem[i] / s.rate[i] <= lim;
            if (done) {
                int j = s.owner[i];
                double tail = lat[s.fid[i]];
                s.outstanding[j]--;
                if (tail > s.wait_after[j]) s.wait_after[j] = tail;
                if (s.outstanding[j] == 0) s.timer[j] = now + dt + s.wait_after[j];
                s.set1 -= key1((uint64_t)s.fid[i]); s.set2 -= key2((uint64_t)s.fid[i]);
                dirty = 1;
                continue;
            }
            s.fid[kept] = s.fid[i]; s.owner[kept] = s.owner[i];
            s.rem[kept] = s.rem[i] - s.rate[i] * dt; s.rate[kept] = s.rate[i];
            kept++;
        }
        s.nf = kept;
        now += dt;
        for (int j = 0; j < njobs; j++)
            if (s.timer[j] <= now + 1e-15)
                dirty |= advance(&s, j, now, ends, ends_cap, ends_off, nends);
    }
    stats[0] = s.hits; stats[1] = s.misses; stats[2] = s.events; stats[3] = s.flowsum; stats[4] = s.set_hits; stats[5] = s.rounds; stats[6] = s.solved_flows; stats[7] = s.solved_links;
out:
    free(s.fid); free(s.owner); free(s.rem); free(s.rate); free(s.parent); free(s.order);
    free(s.comp_start); free(s.live); free(s.local_path); free(s.link_veto); free(s.ident); free(s.flow_best); free(s.timer); free(s.wait_after);
    free(s.step); free(s.iter); free(s.outstanding); free(s.link_flow); free(s.link_stamp);
    free(s.link_rem); free(s.link_share); free(s.link_cnt); free(s.touched);
    free(s.rate_of_fid); free(s.table); free(s.pool_fid); free(s.pool_rate);
    return rc;
}
