/* Training run for the profile-guided build of the packet kernel (Makefile, docs/modelling.md
 * #packet-engine-speed). GCC's -fprofile-use lays out and inlines the kernel by the branch
 * counts of this run, so it drives the kernel the way the campaigns do: on a synthetic 2D
 * HyperX (6 x 4 switches, 7 hosts each, dimension-order routes; every host with its two
 * host-interface links and a read-request charge, as t2hx/flowsim/packet.py builds them),
 * random bisections and shifts of 1 MiB (eBB, mpiGraph), rendezvous handshakes (RTS, CTS,
 * data) and a ring of dependent steps behind joins (the collectives' programs), on two VLs
 * and on one and two threads. The profile only moves code: results are bit-identical
 * (tests/test_packet_kernel.py compares a build without it). Exit status: the kernel's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void *t2hx_packet_new(int nlinks, const double *rate, const double *lat, const double *fwd,
                      const int32_t *hdr, const int32_t *cap, const int32_t *pair,
                      const double *debt_per_byte, const int32_t *obuf, const double *xrate,
                      int mtu, int ib_hdr, int oldest, int voq, int nhigh, const int32_t *high,
                      int nlow, const int32_t *low, int64_t high_limit, int *rc);
void t2hx_packet_free(void *ctx);
int t2hx_packet_phases(void **ctx, int nctx, int64_t nphase, const int64_t *msg_off,
                       const int64_t *bytes, const int64_t *route_off, const int32_t *route,
                       const int8_t *vl, const int64_t *dep_off, const int32_t *dep,
                       const double *delay, double *first, double *end, int64_t *counters,
                       int32_t *rc);

enum { SX = 6, SY = 4, PER = 7, SW = SX * SY, HOSTS = SW * PER, MIB = 1 << 20 };
/* links: switch-to-switch (SW x SW slots, used when in one row or column), host->switch,
 * switch->host, then each host's DMA read and DMA write */
enum { S2S = 0, UP = SW * SW, DOWN = UP + HOSTS, READ = DOWN + HOSTS, WRITE = READ + HOSTS,
       NLINKS = WRITE + HOSTS, MAXMSG = 8192, MAXROUTE = MAXMSG * 8 };

typedef struct {
    int64_t n, nr, nd, off[MAXMSG + 1], bytes[MAXMSG], roff[MAXMSG + 1], doff[MAXMSG + 1];
    int32_t route[MAXROUTE], dep[MAXMSG * 2];
    int8_t vl[MAXMSG];
    double delay[MAXMSG];
} batch_t;

static uint64_t seed = 2019;
static int draw(int n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((seed >> 33) % (uint64_t)n);
}

static void route(batch_t *b, int src, int dst) {
    int s = src / PER, d = dst / PER;
    b->route[b->nr++] = READ + src;
    b->route[b->nr++] = UP + src;
    if (s % SX != d % SX) {                        /* along x, then along y */
        int via = (s / SX) * SX + d % SX;
        b->route[b->nr++] = S2S + s * SW + via;
        s = via;
    }
    if (s != d) b->route[b->nr++] = S2S + s * SW + d;
    b->route[b->nr++] = DOWN + dst;
    b->route[b->nr++] = WRITE + dst;
}

/* a message of the phase being built; deps are indices within the phase (< its own) */
static int message(batch_t *b, int64_t first, int src, int dst, int64_t bytes, double delay,
                   const int64_t *deps, int ndeps) {
    int64_t m = b->n++;
    b->bytes[m] = bytes;
    b->vl[m] = (int8_t)((src + dst) % 2);
    b->delay[m] = delay;
    if (src >= 0) route(b, src, dst);
    for (int i = 0; i < ndeps; i++) b->dep[b->nd++] = (int32_t)(deps[i] - first);
    b->roff[m + 1] = b->nr;
    b->doff[m + 1] = b->nd;
    return (int)(m - first);
}

static void bisection(batch_t *b, int64_t first, int64_t size) {
    int perm[HOSTS];
    for (int i = 0; i < HOSTS; i++) perm[i] = i;
    for (int i = HOSTS - 1; i > 0; i--) {
        int j = draw(i + 1), t = perm[i];
        perm[i] = perm[j]; perm[j] = t;
    }
    for (int i = 0; i + 1 < HOSTS; i += 2) {
        message(b, first, perm[i], perm[i + 1], size, 1e-6 + 1e-8 * i, NULL, 0);
        message(b, first, perm[i + 1], perm[i], size, 1e-6 + 1e-8 * i, NULL, 0);
    }
}

static void shift(batch_t *b, int64_t first, int k, int64_t size) {
    for (int r = 0; r < HOSTS; r++) message(b, first, r, (r + k) % HOSTS, size, 1e-6, NULL, 0);
}

/* every rank to a few partners, each above the eager limit: RTS, CTS, then the data */
static void rendezvous(batch_t *b, int64_t first, int64_t size) {
    for (int r = 0; r < HOSTS; r++)
        for (int k = 1; k <= 4; k++) {
            int d = (r + k * 13) % HOSTS;
            int64_t rts = first + message(b, first, r, d, 0, 1e-6 + 2e-7 * k, NULL, 0);
            int64_t cts = first + message(b, first, d, r, 0, 1e-6, &rts, 1);
            message(b, first, r, d, size, 1e-6, &cts, 1);
        }
}

/* ring steps: each rank's send waits on its previous send and on what its left neighbour
 * sent it; every step ends in a join of all its messages */
static void ring(batch_t *b, int64_t first, int steps, int64_t size) {
    int64_t prev[HOSTS], join = -1;
    for (int r = 0; r < HOSTS; r++) prev[r] = -1;
    for (int i = 0; i < steps; i++) {
        int64_t now[HOSTS];
        for (int r = 0; r < HOSTS; r++) {
            int64_t deps[3];
            int nd = 0;
            if (prev[r] >= 0) deps[nd++] = prev[r];
            if (prev[(r + HOSTS - 1) % HOSTS] >= 0) deps[nd++] = prev[(r + HOSTS - 1) % HOSTS];
            if (join >= 0 && i % 8 == 0) deps[nd++] = join;
            now[r] = first + message(b, first, r, (r + 1) % HOSTS, size, 2e-6, deps, nd);
        }
        join = first + message(b, first, -1, -1, 0, 1e-7, now, HOSTS);
        for (int r = 0; r < HOSTS; r++) prev[r] = now[r];
    }
}

static int run(void **ctx, int nctx, batch_t *b, int64_t nphase) {
    double *first = malloc(sizeof(double) * (size_t)(b->n + 1));
    double *end = malloc(sizeof(double) * (size_t)(b->n + 1));
    int64_t *counters = calloc((size_t)nphase * 7, sizeof(int64_t));
    int32_t *rc = calloc((size_t)nphase, sizeof(int32_t));
    int out = !first || !end || !counters || !rc ? 1 :
        t2hx_packet_phases(ctx, nctx, nphase, b->off, b->bytes, b->roff, b->route, b->vl,
                           b->doff, b->dep, b->delay, first, end, counters, rc);
    free(first); free(end); free(counters); free(rc);
    return out;
}

static void *fabric(void) {
    static double rate[NLINKS], lat[NLINKS], fwd[NLINKS], debt[NLINKS], xrate[NLINKS];
    static int32_t hdr[NLINKS], cap[NLINKS], pair[NLINKS], obuf[NLINKS];
    for (int l = 0; l < NLINKS; l++) {
        int host = l >= READ;
        rate[l] = host ? 3.2e9 : 4e9;
        xrate[l] = rate[l];
        lat[l] = host ? 0 : 10e-9;
        fwd[l] = l < DOWN ? 100e-9 : 0;
        hdr[l] = host ? 0 : 26;
        cap[l] = l >= WRITE ? -1 : 256;
        pair[l] = l >= READ && l < WRITE ? l + HOSTS : -1;
        debt[l] = l >= READ && l < WRITE ? 0.03 / 4e9 : 0;
        obuf[l] = 0;
    }
    static const int32_t high[] = {0, 4}, low[] = {1, 4, 0, 0};
    int rc;
    return t2hx_packet_new(NLINKS, rate, lat, fwd, hdr, cap, pair, debt, obuf, xrate, 2048, 26,
                           0, 0, 1, high, 2, low, 0, &rc);
}

int main(void) {
    batch_t *b = calloc(1, sizeof *b);
    void *ctx[2] = {fabric(), fabric()};
    if (!b || !ctx[0] || !ctx[1]) return 1;
    int rc = 0;
    for (int threads = 1; threads <= 2 && !rc; threads++) {
        b->n = b->nr = b->nd = 0;
        int64_t p = 0;
        for (int i = 0; i < 6; i++, p++) { b->off[p] = b->n; bisection(b, b->n, MIB); }
        for (int k = 1; k <= 3; k++, p++) { b->off[p] = b->n; shift(b, b->n, k * 11, MIB); }
        b->off[p++] = b->n; rendezvous(b, b->off[p - 1], 65536);
        b->off[p++] = b->n; ring(b, b->off[p - 1], 12, 16384);
        b->off[p++] = b->n; bisection(b, b->off[p - 1], 0);
        b->off[p] = b->n;
        rc = run(ctx, threads, b, p);
    }
    t2hx_packet_free(ctx[0]);
    t2hx_packet_free(ctx[1]);
    free(b);
    if (rc) fprintf(stderr, "packetk_train: kernel error %d\n", rc);
    return rc;
}
