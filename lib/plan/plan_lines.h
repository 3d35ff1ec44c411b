/* plan_lines.h - the planner's CPU family (lines), whole-byte elements in
 * plan_lines.c and 4-bit ones in plan_nibbles.c */
#ifndef RELAYOUT_PLAN_LINES_H
#define RELAYOUT_PLAN_LINES_H

#include "plan.h"

/* An affine plan of `size`-byte elements (K, its innermost axis, whole
 * rows) as a lines plan: the box, its squares, its stores. */
void rl_plan_lines(rl_layout_plan *p, const rl_desc *dst, int size,
                   int64_t stream_from);

/* An affine plan of 4-bit elements whose innermost destination axis is
 * contiguous: a lines plan where its boxes can write whole bytes, else p
 * unchanged (the gather). */
void rl_plan_nibbles(rl_layout_plan *p, const rl_desc *dst,
                     int64_t stream_from);

/* The box of a lines plan: P, Q and K's blocks (plan_lines.c). */
void rl_plan_box(rl_layout_plan *p, int size);

/* The block along box axis b: `want`, at most the axis' extent; an axis
 * left with a block of 1 leaves the box. */
void rl_box_block(rl_layout_plan *p, int b, int64_t want);

/* Whether a destination is too big for the cache: stream_from bytes or
 * more (stream_from 0: never). */
int rl_too_big(const rl_desc *dst, int64_t stream_from);

#endif
