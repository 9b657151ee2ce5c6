/*
 * PARX Table 1 (Domke et al., SC19, Table 1) and the link removal rules R1-R4: which of the
 * 2^LMC = 4 destination LIDs a message uses, by source/destination quadrant and message size.
 *
 * This file and table1.c are the single C source of this logic. They are shared by the
 * OpenSM plugin (parx/), the Open MPI patch (patches/openmpi/, which carries a generated
 * copy) and the tests; t2hx/parx.py holds the Python twin, checked equal by the tests.
 * Plain C99, no dependencies, so it compiles inside any tree.
 *
 * Quadrants of a 2D HyperX (x = first dimension, y = second; left = x < D1/2,
 * top = y < D2/2):  Q0 = top-left, Q1 = bottom-left, Q2 = bottom-right, Q3 = top-right.
 * LID policy: terminal LIDs of Qq lie in q*1000 .. q*1000+999, switch LIDs 10000 higher,
 * so q = floor(LID / 1000) mod 10.
 */
#ifndef PARX_TABLE1_H
#define PARX_TABLE1_H

#include <stddef.h>

#define PARX_TABLE1_DEFAULT_THRESHOLD 512	/* bytes; below: Table 1a (small) */
#define PARX_NUM_LIDS 4				/* LMC = 2 */

#ifdef __cplusplus
extern "C" {
#endif

/* Quadrant 0..3 of a LID under the PARX LID policy, or -1 if the LID is outside it. */
int parx_lid_quadrant(unsigned lid);

/* The valid LID offsets x (0..3) for a message from quadrant src_q to quadrant dst_q;
 * large != 0 selects Table 1b. Writes 1 or 2 choices to out[] and returns their number,
 * or returns 0 for invalid quadrants. */
int parx_table1_choices(int src_q, int dst_q, int large, int out[2]);

/* The LID offset to use: Table 1a if msg_size < threshold, else 1b; where the table offers
 * two choices, the low bit of `coin` picks one (the paper picks at random). Returns 0..3, or
 * -1 for invalid quadrants. */
int parx_table1_select(int src_q, int dst_q, size_t msg_size, size_t threshold, unsigned coin);

/* Rules R1-R4: nonzero if, while routing towards LID offset `lid_offset`, a link between
 * switches of quadrants qa and qb is (virtually) removed: offset 0 removes links with both
 * ends in the left half, 1 the right half, 2 the top half, 3 the bottom half. */
int parx_rule_removes(int lid_offset, int qa, int qb);

#ifdef __cplusplus
}
#endif

#endif
