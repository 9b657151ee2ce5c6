/* PARX Table 1 and rules R1-R4; see table1.h. */
#include "table1.h"

/* [destination quadrant][source quadrant] -> one or two LID offsets (-1 = no second) */
static const signed char table_small[4][4][2] = {
	/* d=Q0 */ { { 1, 3 }, { 1, -1 }, { 0, 2 }, { 3, -1 } },
	/* d=Q1 */ { { 1, -1 }, { 1, 2 }, { 2, -1 }, { 0, 3 } },
	/* d=Q2 */ { { 1, 3 }, { 2, -1 }, { 0, 2 }, { 0, -1 } },
	/* d=Q3 */ { { 3, -1 }, { 1, 2 }, { 0, -1 }, { 0, 3 } },
};

static const signed char table_large[4][4][2] = {
	/* d=Q0 */ { { 0, 2 }, { 0, -1 }, { 0, 2 }, { 2, -1 } },
	/* d=Q1 */ { { 0, -1 }, { 0, 3 }, { 3, -1 }, { 0, 3 } },
	/* d=Q2 */ { { 1, 3 }, { 3, -1 }, { 1, 3 }, { 1, -1 } },
	/* d=Q3 */ { { 2, -1 }, { 1, 2 }, { 1, -1 }, { 1, 2 } },
};

/* quadrants (bit q) forming the half whose links rule x removes: left, right, top, bottom */
static const unsigned char rule_half[PARX_NUM_LIDS] = {
	(1u << 0) | (1u << 1),	/* R1, LID0: left = Q0 + Q1 */
	(1u << 2) | (1u << 3),	/* R2, LID1: right = Q2 + Q3 */
	(1u << 0) | (1u << 3),	/* R3, LID2: top = Q0 + Q3 */
	(1u << 1) | (1u << 2),	/* R4, LID3: bottom = Q1 + Q2 */
};

int parx_lid_quadrant(unsigned lid)
{
	unsigned q = (lid / 1000u) % 10u;

	return q < 4u ? (int)q : -1;
}

int parx_table1_choices(int src_q, int dst_q, int large, int out[2])
{
	const signed char *c;

	if (src_q < 0 || src_q > 3 || dst_q < 0 || dst_q > 3)
		return 0;
	c = large ? table_large[dst_q][src_q] : table_small[dst_q][src_q];
	out[0] = c[0];
	out[1] = c[1] < 0 ? c[0] : c[1];
	return c[1] < 0 ? 1 : 2;
}

int parx_table1_select(int src_q, int dst_q, size_t msg_size, size_t threshold, unsigned coin)
{
	int out[2], n = parx_table1_choices(src_q, dst_q, msg_size >= threshold, out);

	if (!n)
		return -1;
	return n == 1 ? out[0] : out[coin & 1u];
}

int parx_rule_removes(int lid_offset, int qa, int qb)
{
	if (lid_offset < 0 || lid_offset >= PARX_NUM_LIDS || qa < 0 || qa > 3 || qb < 0 || qb > 3)
		return 0;
	return (rule_half[lid_offset] >> qa & 1u) && (rule_half[lid_offset] >> qb & 1u);
}
