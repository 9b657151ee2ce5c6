/* Event loop of the fast fluid engine (t2hx/flowsim/fluid_fast.py): the semantics of the
 * exact engine (t2hx/flowsim/fluid.py, run_jobs) compiled. Rates after an event come, in
 * order of cost, from a partial re-solve of only the flows at or above a level (exact, see
 * partial_rates), from the cache of whole in-flight sets, or from max-min solved per
 * connected component of the in-flight flows and cached under that component's flow set.
 * Heaps by due time and by rate keep an event's cost to the flows whose rate changed.
 * Why C: a 3 h capacity window of the 664-node mix is ~5e7 fluid events; at numpy's
 * ~0.1 ms per event it took hours (docs/modelling.md#capacity-mode). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-9
/* Relative margin of a rate level in partial_rates: far above the rounding noise of
 * solved rates (~1e-15), far below any real difference of rates. */
#define TIE 1e-7

typedef struct {
    uint64_t h1, h2;
    int64_t n, off;        /* off: first (fid, rate) pair in the pool; n == -1: empty */
} entry_t;

/* An indexed binary heap of flow slots, smallest key first; key[at] is kept beside h[at]
 * (no indirection while sifting) and pos[slot] is where a slot sits, so a slot whose key
 * changed moves in O(log n). */
typedef struct {
    double *key;
    int64_t *h, *pos, n;
} heap_t;

typedef struct st st_t;

struct st {
    /* inputs */
    const int32_t *paths; int width;
    const double *size, *lat, *cap;
    const int64_t *plan_off, *step_off, *step_plan, *repeat;
    const double *step_sec;
    int njobs, nlinks;
    /* flows in flight */
    int64_t nf, *fid; int *owner; double *rem, *rate;
    double *t_rem, *fin;   /* rem is the remainder at t_rem; fin the due time at rate */
    double *load;          /* per link: sum of the rates of the flows in flight on it */
    double *last_rate;     /* per flow id: its first rate when it last started (a guess) */
    double *old_rate, *new_rate; int64_t *sel;
    heap_t due, fast;      /* flows by due time (earliest first), by rate (fastest first) */
    int64_t epoch, *link_touch;   /* links an ended or new flow used since the last solve */
    char *comp_touched;           /* per component root: holds such a link */
    /* jobs */
    double *timer, *wait_after; int64_t *step, *iter, *outstanding;
    /* solver scratch */
    int64_t *parent, *link_flow, *link_stamp, stamp, *order, *comp_start;
    double *link_rem, *link_share, *rate_of_fid; int64_t *link_cnt, *live;
    int32_t *local_path;
    char *link_veto;
    double *flow_best;
    /* cache */
    entry_t *table; int64_t tsize, tused;
    int64_t *pool_fid; double *pool_rate; int64_t pool_cap, pool_used;
    int64_t hits, misses, events, flowsum, set_hits, rounds, solved_flows, solved_links;
    int64_t partial_ok, partial_flows, partial_fail, solves_since_sum;
    int verify; double verify_diff;   /* check every event's rates against a full solve */
    uint64_t set1, set2;      /* order-free hash of the in-flight flow set */
    int64_t *ident;
};

static void heap_put(heap_t *q, int64_t at, int64_t slot, double k) {
    q->h[at] = slot; q->key[at] = k; q->pos[slot] = at;
}

/* Slot at position at now has key k: move it up or down to its place. */
static void sift(heap_t *q, int64_t at, double k) {
    int64_t slot = q->h[at];
    while (at > 0 && q->key[(at - 1) / 2] > k) {
        int64_t up = (at - 1) / 2;
        heap_put(q, at, q->h[up], q->key[up]);
        at = up;
    }
    for (;;) {
        int64_t c = 2 * at + 1;
        if (c >= q->n) break;
        if (c + 1 < q->n && q->key[c + 1] < q->key[c]) c++;
        if (q->key[c] >= k) break;
        heap_put(q, at, q->h[c], q->key[c]);
        at = c;
    }
    heap_put(q, at, slot, k);
}

static void heap_push(heap_t *q, int64_t slot, double k) {
    q->h[q->n] = slot;
    q->pos[slot] = q->n;
    sift(q, q->n++, k);
}

static void heap_remove(heap_t *q, int64_t slot) {
    int64_t at = q->pos[slot], last = --q->n;
    if (at == last) return;
    q->h[at] = q->h[last];
    q->pos[q->h[at]] = at;
    sift(q, at, q->key[last]);
}

/* The flow in slot from now lives in slot to. */
static void heap_move(heap_t *q, int64_t from, int64_t to) {
    int64_t at = q->pos[from];
    q->h[at] = to; q->pos[to] = at;
}

/* Slots of the fast heap whose rate is at least cut: a subtree below cut holds none. */
static int64_t at_least(const st_t *s, double cut, int64_t *out) {
    const heap_t *q = &s->fast;
    int64_t m = 0, top = 0;
    int64_t *stack = s->order;        /* scratch: the component path is not running */
    if (q->n) stack[top++] = 0;
    while (top) {
        int64_t at = stack[--top], slot = q->h[at];
        if (-q->key[at] < cut) continue;
        out[m++] = slot;
        if (2 * at + 1 < q->n) stack[top++] = 2 * at + 1;
        if (2 * at + 2 < q->n) stack[top++] = 2 * at + 2;
    }
    return m;
}

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
static void solve(st_t *s, const int64_t *idx, int64_t m, int reduced, double *out) {
    /* The component's paths are copied once with links renumbered 0..nt): the rounds then
     * read small dense arrays instead of the fabric's. reduced: the flows outside idx keep
     * their rates, so a link offers its capacity less their load (partial_rates). */
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
                s->link_rem[nt] = reduced ? s->cap[l] - s->load[l] : s->cap[l];
                s->link_cnt[nt] = 0;
                nt++;
            }
            lp[k * w + h] = (int32_t)s->link_flow[l];
            s->link_cnt[s->link_flow[l]]++;
            if (reduced) s->link_rem[s->link_flow[l]] += s->rate[idx[k]];
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
            out[i] = r;
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

/* The cached rates of flows idx[0..m) under key (h1, h2, m) into out[0..m); 1 on a hit. */
static int lookup(st_t *s, uint64_t h1, uint64_t h2, const int64_t *idx, int64_t m,
                  double *out) {
    entry_t *e = slot(s, h1, h2, m);
    if (e->n != m) return 0;
    for (int64_t k = 0; k < m; k++)
        s->rate_of_fid[s->pool_fid[e->off + k]] = s->pool_rate[e->off + k];
    for (int64_t k = 0; k < m; k++) out[k] = s->rate_of_fid[s->fid[idx[k]]];
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
    if (lookup(s, h1, h2, idx, m, s->new_rate)) {
        s->hits++;
    } else {
        s->misses++;
        solve(s, idx, m, 0, s->new_rate);
    }
    for (int64_t k = 0; k < m; k++) s->rate[idx[k]] = s->new_rate[k];
    store(s, h1, h2, idx, m);
}

/* Flows that share a link interact; the rest do not: solve each component on its own. */
/* Components of the flows slots[0..m) (slots == NULL: every flow in flight, slot k = k):
 * flows that share a link, transitively. par[k] = the smallest k of flow k's component;
 * hit[root]: the component uses a link that a flow ended or started on since the last
 * solve. An untouched component is the same flow set as at the last solve (no flow of it
 * shared a link with a flow that came or went), so its rates still hold. */
static void components(st_t *s, const int64_t *slots, int64_t m, int64_t *par, char *hit) {
    s->stamp++;
    for (int64_t k = 0; k < m; k++) { par[k] = k; hit[k] = 0; }
    for (int64_t k = 0; k < m; k++) {
        const int32_t *p = path_of(s, s->fid[slots ? slots[k] : k]);
        for (int h = 0; h < s->width && p[h] >= 0; h++) {
            int32_t l = p[h];
            if (s->link_touch[l] == s->epoch) hit[k] = 1;
            if (s->link_stamp[l] != s->stamp) {
                s->link_stamp[l] = s->stamp; s->link_flow[l] = k;
            } else {
                int64_t x = find(par, k), y = find(par, s->link_flow[l]);
                if (x != y) par[x < y ? y : x] = x < y ? x : y;
            }
        }
    }
    for (int64_t k = 0; k < m; k++) {
        par[k] = find(par, k);
        hit[par[k]] |= hit[k];
    }
}

/* Keep of sel[0..m) only the flows whose component among the selected flows holds a
 * touched link: in the reduced problem the other components are unchanged, so are their
 * rates. Returns the new m. */
static int64_t touched_only(st_t *s, int64_t *sel, int64_t m) {
    /* scratch: the component path is not running */
    components(s, sel, m, s->comp_start, s->comp_touched);
    int64_t kept = 0;
    for (int64_t k = 0; k < m; k++)
        if (s->comp_touched[s->comp_start[k]]) sel[kept++] = sel[k];
    return kept;
}

/* Rates of every touched component, from the component cache or solved. */
static void component_path(st_t *s) {
    int64_t nf = s->nf;
    s->flowsum += nf;
    components(s, NULL, nf, s->parent, s->comp_touched);
    /* counting sort of the flows by root, keeping flow order inside a component */
    for (int64_t i = 0; i <= nf; i++) s->comp_start[i] = 0;
    for (int64_t i = 0; i < nf; i++) s->comp_start[s->parent[i] + 1]++;
    for (int64_t i = 0; i < nf; i++) s->comp_start[i + 1] += s->comp_start[i];
    for (int64_t i = 0; i < nf; i++) s->order[s->comp_start[s->parent[i]]++] = i;
    int64_t at = 0;
    while (at < nf) {
        int64_t r = s->parent[s->order[at]], end = at;
        while (end < nf && s->parent[s->order[end]] == r) end++;
        if (s->comp_touched[r]) component_rates(s, s->order + at, end - at);
        at = end;
    }
}

static void set_rate(st_t *s, int64_t i, double r, double now);

/* Tests only: the largest relative difference between the rates an event left (by any
 * path) and a full solve of every flow in flight. */
static void verify_rates(st_t *s) {
    solve(s, s->ident, s->nf, 0, s->old_rate);
    for (int64_t i = 0; i < s->nf; i++) {
        double d = fabs(s->old_rate[i] - s->rate[i]) / s->old_rate[i];
        if (d > s->verify_diff) s->verify_diff = d;
    }
}

/* Exact re-solve of only the flows at or above a level lam (rates of all others kept).
 * Why it is exact: in progressive filling, a flow that ends at rate r changes nothing
 * below level r (until r its links are not saturated with or without it), so every flow
 * slower than the slowest ended one keeps its rate. For new flows lam is a guess (their
 * first rate last time) and the result is checked: if every re-solved flow gets at least
 * lam, every flow still has a bottleneck link (saturated, where no flow is faster), which
 * characterises the max-min allocation. Otherwise lam is lowered and tried again. Of the
 * flows at or above lam, only the components (among them) that hold a touched link move. */
static int partial_rates(st_t *s, int64_t mark, double dep_min, double now) {
    double lam = dep_min;
    for (int64_t i = mark; i < s->nf; i++) {
        double g = s->last_rate[s->fid[i]];
        if (!(g > 0)) return 0;
        if (g < lam) lam = g;
    }
    for (int tries = 0; tries < 3 && lam > 0 && isfinite(lam); tries++) {
        /* flows tied with lam within rounding noise may share its bottleneck: re-solve them */
        double cut = lam * (1 - TIE);
        /* new flows (rate 0) sit at the bottom of the fast heap: add them by slot */
        int64_t m = at_least(s, cut, s->sel);
        for (int64_t i = mark; i < s->nf; i++) s->sel[m++] = i;
        m = touched_only(s, s->sel, m);
        solve(s, s->sel, m, 1, s->new_rate);
        double lo = INFINITY;
        for (int64_t k = 0; k < m; k++)
            if (s->new_rate[k] < lo) lo = s->new_rate[k];
        if (lo >= cut) {
            for (int64_t k = 0; k < m; k++) set_rate(s, s->sel[k], s->new_rate[k], now);
            s->partial_ok++; s->partial_flows += m;
            return 1;
        }
        lam = lo * (1 - TIE);
    }
    s->partial_fail++;
    return 0;
}

/* Flow i's rate becomes r at time now: its remainder, due time and links' load follow. */
static void set_rate(st_t *s, int64_t i, double r, double now) {
    double old = s->rate[i];
    if (r == old) return;
    const int32_t *p = path_of(s, s->fid[i]);
    for (int h = 0; h < s->width && p[h] >= 0; h++) s->load[p[h]] += r - old;
    if (old == 0) s->last_rate[s->fid[i]] = r;
    s->rem[i] -= old * (now - s->t_rem[i]);
    if (s->rem[i] < 0) s->rem[i] = 0;
    s->t_rem[i] = now; s->rate[i] = r;
    s->fin[i] = r > 0 ? now + s->rem[i] / r : INFINITY;
    sift(&s->due, s->due.pos[i], s->fin[i]);
    sift(&s->fast, s->fast.pos[i], -r);
}

/* The links' load summed afresh: the incremental sums drift by rounding. */
static void resum_load(st_t *s) {
    for (int l = 0; l < s->nlinks; l++) s->load[l] = 0;
    for (int64_t i = 0; i < s->nf; i++) {
        const int32_t *p = path_of(s, s->fid[i]);
        for (int h = 0; h < s->width && p[h] >= 0; h++) s->load[p[h]] += s->rate[i];
    }
    s->solves_since_sum = 0;
}

/* Rates after an event: flows [mark, nf) are new; dep_min is the slowest ended flow's rate
 * (INFINITY if none ended). */
static void rates(st_t *s, int64_t mark, double dep_min, double now) {
    int64_t nf = s->nf;
    uint64_t w1 = s->set1 ^ SALT2, w2 = s->set2 ^ SALT1;
    if (partial_rates(s, mark, dep_min, now)) {
        /* the common case: no lookup, whose hash probe costs a cache miss per event */
    } else if (lookup(s, w1, w2, s->ident, nf, s->new_rate)) {
        s->set_hits++;
        for (int64_t i = 0; i < nf; i++) set_rate(s, i, s->new_rate[i], now);
    } else {
        /* the component path writes rates in place: put the old ones back (the heaps are
         * ordered by them) and apply the new ones one by one */
        size_t bytes = (size_t)nf * sizeof *s->rate;
        memcpy(s->old_rate, s->rate, bytes);
        component_path(s);
        store(s, w1, w2, s->ident, nf);
        memcpy(s->new_rate, s->rate, bytes);
        memcpy(s->rate, s->old_rate, bytes);
        for (int64_t i = 0; i < nf; i++) set_rate(s, i, s->new_rate[i], now);
    }
    s->epoch++;
    if (++s->solves_since_sum >= 4096) resum_load(s);
    if (s->verify) verify_rates(s);
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
        int64_t i = s->nf++;
        s->fid[i] = f; s->rem[i] = s->size[f]; s->owner[i] = j;
        s->rate[i] = 0; s->t_rem[i] = now; s->fin[i] = INFINITY;
        heap_push(&s->due, i, INFINITY);
        heap_push(&s->fast, i, 0.0);
        const int32_t *path = path_of(s, f);
        for (int h = 0; h < s->width && path[h] >= 0; h++) s->link_touch[path[h]] = s->epoch;
        s->set1 += key1((uint64_t)f); s->set2 += key2((uint64_t)f);
    }
    return 1;
}

/* Returns 0, or -1 when memory ran out. stats: component hits, misses, events, flows
 * visited by the component search, whole-set hits, solver rounds, flows and links solved,
 * partial re-solves, flows they solved, partial attempts that fell back. verify (tests):
 * compare the rates after every event with a full solve; the largest relative difference
 * of a rate goes to *verify_diff. */
int t2hx_fluid_run(const int32_t *paths, int width, const double *size, const double *lat,
                   int64_t nflows, const int64_t *plan_off, const int64_t *step_off,
                   const int64_t *step_plan, const double *step_sec, int njobs,
                   const int64_t *repeat, const double *start, const double *cap, int nlinks,
                   double until, int64_t max_inflight, int64_t pool_cap,
                   double *ends, const int64_t *ends_off, const int64_t *ends_cap,
                   int64_t *nends, int64_t *stats, int verify, double *verify_diff) {
    st_t s;
    memset(&s, 0, sizeof s);
    s.paths = paths; s.width = width; s.size = size; s.lat = lat; s.cap = cap;
    s.plan_off = plan_off; s.step_off = step_off; s.step_plan = step_plan;
    s.step_sec = step_sec; s.repeat = repeat; s.njobs = njobs; s.nlinks = nlinks;
    size_t F = max_inflight > 0 ? (size_t)max_inflight : 1, L = (size_t)nlinks + 1;
    size_t N = nflows > 0 ? (size_t)nflows : 1, J = (size_t)njobs + 1;
    s.tsize = 1 << 20;
    s.pool_cap = pool_cap;
    s.verify = verify;
    /* every buffer with its length in elements; freed together */
    struct { void **p; size_t n, sz; } buf[] = {
        {(void **)&s.fid, F, 8}, {(void **)&s.owner, F, sizeof(int)}, {(void **)&s.rem, F, 8},
        {(void **)&s.rate, F, 8}, {(void **)&s.t_rem, F, 8},
        {(void **)&s.fin, F, 8}, {(void **)&s.old_rate, F, 8}, {(void **)&s.new_rate, F, 8},
        {(void **)&s.sel, F, 8}, {(void **)&s.due.h, F, 8}, {(void **)&s.due.pos, F, 8},
        {(void **)&s.due.key, F, 8}, {(void **)&s.fast.h, F, 8}, {(void **)&s.fast.pos, F, 8},
        {(void **)&s.fast.key, F, 8}, {(void **)&s.parent, F, 8}, {(void **)&s.order, F, 8},
        {(void **)&s.comp_start, F + 1, 8}, {(void **)&s.live, F, 8},
        {(void **)&s.local_path, F * (size_t)width, 4}, {(void **)&s.ident, F, 8},
        {(void **)&s.flow_best, F, 8}, {(void **)&s.timer, J, 8},
        {(void **)&s.wait_after, J, 8}, {(void **)&s.step, J, 8}, {(void **)&s.iter, J, 8},
        {(void **)&s.outstanding, J, 8}, {(void **)&s.link_flow, L, 8},
        {(void **)&s.link_stamp, L, 8}, {(void **)&s.link_rem, L, 8},
        {(void **)&s.link_veto, L, 1}, {(void **)&s.link_share, L, 8},
        {(void **)&s.link_cnt, L, 8}, {(void **)&s.link_touch, L, 8},
        {(void **)&s.comp_touched, F, 1}, {(void **)&s.load, L, 8},
        {(void **)&s.rate_of_fid, N, 8}, {(void **)&s.last_rate, N, 8},
        {(void **)&s.table, (size_t)s.tsize, sizeof(entry_t)},
        {(void **)&s.pool_fid, (size_t)pool_cap, 8}, {(void **)&s.pool_rate, (size_t)pool_cap, 8},
    };
    const size_t nbuf = sizeof buf / sizeof buf[0];
    int rc = 0;
    for (size_t b = 0; b < nbuf; b++)
        if (!(*buf[b].p = calloc(buf[b].n, buf[b].sz))) rc = -1;
    if (rc) goto out;
    clear_cache(&s);
    s.epoch = 1;
    for (size_t i = 0; i < F; i++) s.ident[i] = (int64_t)i;
    for (int j = 0; j < njobs; j++) {
        s.timer[j] = start[j]; s.step[j] = -1; s.iter[j] = 0; s.outstanding[j] = 0;
        s.wait_after[j] = 0; nends[j] = 0;
    }
    double now = 0.0, dep_min = INFINITY;
    int64_t mark = 0;
    int dirty = 1;
    for (;;) {
        if (dirty && s.nf) rates(&s, mark, dep_min, now);
        dirty = 0;
        double t_timer = INFINITY;
        for (int j = 0; j < njobs; j++)
            if (s.timer[j] - now < t_timer) t_timer = s.timer[j] - now;
        double t_flow = s.due.n ? s.due.key[0] - now : INFINITY;
        double dt = t_flow < t_timer ? t_flow : t_timer;
        if (!isfinite(dt) || now + dt > until) break;
        s.events++;
        double lim = dt * (1 + 1e-9) + 1e-15, at = now + dt;
        dep_min = INFINITY;
        int64_t nc = 0;
        while (s.due.n && s.due.key[0] - now <= lim) {
            int64_t i = s.due.h[0];
            heap_remove(&s.due, i);
            heap_remove(&s.fast, i);
            s.sel[nc++] = i;
        }
        /* free the slots from the highest down, so that the flow moved into a freed slot is
         * never one still to be freed */
        for (int64_t a = 1; a < nc; a++) {    /* insertion sort: nc is mostly 1 or 2 */
            int64_t v = s.sel[a], b = a;
            for (; b > 0 && s.sel[b - 1] < v; b--) s.sel[b] = s.sel[b - 1];
            s.sel[b] = v;
        }
        for (int64_t c = 0; c < nc; c++) {
            int64_t i = s.sel[c];
            int j = s.owner[i];
            double tail = lat[s.fid[i]];
            s.outstanding[j]--;
            if (tail > s.wait_after[j]) s.wait_after[j] = tail;
            if (s.outstanding[j] == 0) s.timer[j] = at + s.wait_after[j];
            s.set1 -= key1((uint64_t)s.fid[i]); s.set2 -= key2((uint64_t)s.fid[i]);
            if (s.rate[i] < dep_min) dep_min = s.rate[i];
            const int32_t *p = path_of(&s, s.fid[i]);
            for (int h = 0; h < width && p[h] >= 0; h++) {
                s.load[p[h]] -= s.rate[i];
                s.link_touch[p[h]] = s.epoch;
            }
            dirty = 1;
            int64_t last = --s.nf;
            if (last == i) continue;
            s.fid[i] = s.fid[last]; s.owner[i] = s.owner[last];
            s.rem[i] = s.rem[last]; s.t_rem[i] = s.t_rem[last]; s.fin[i] = s.fin[last];
            s.rate[i] = s.rate[last];
            heap_move(&s.due, last, i);
            heap_move(&s.fast, last, i);
        }
        int64_t kept = s.nf;
        s.nf = kept;
        mark = kept;
        now = at;
        for (int j = 0; j < njobs; j++)
            if (s.timer[j] <= now + 1e-15)
                dirty |= advance(&s, j, now, ends, ends_cap, ends_off, nends);
    }
    int64_t out_stats[] = {s.hits, s.misses, s.events, s.flowsum, s.set_hits, s.rounds,
                           s.solved_flows, s.solved_links, s.partial_ok, s.partial_flows,
                           s.partial_fail};
    memcpy(stats, out_stats, sizeof out_stats);
    *verify_diff = s.verify_diff;
out:
    for (size_t b = 0; b < nbuf; b++) free(*buf[b].p);
    return rc;
}
