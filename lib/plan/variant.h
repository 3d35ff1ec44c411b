/* variant.h - the vocabulary of a CPU box plan (RL_FAMILY_LINES): each way
 * a box can move, defined once, as X(field, MACRO, how, meaning): its field
 * in rl_layout_plan, the kernel macro the code generator defines where the
 * field is set (how: RL_AS_VALUE, to the field's value; RL_AS_FLAG, to 1;
 * RL_AS_MANY, to the value where it is over 1; RL_AS_PLANES, by the planes'
 * shuffles, mix_planes in codegen.c), and what it means. A box spans P x Q
 * rows of K elements (docs/KERNELS.md); the planner (plan_lines.c) sets
 * these, the kernels (kernels/lines*.cl) test the macros, and the tests
 * check the fields. */
#ifndef RELAYOUT_VARIANT_H
#define RELAYOUT_VARIANT_H

enum { RL_AS_VALUE, RL_AS_FLAG, RL_AS_MANY, RL_AS_PLANES };

#define RL_LINES_VARIANT(X)                                                    \
  X(tile, RL_TILE, RL_AS_VALUE,                                                \
    "0, or 16 bytes' worth of elements: the squares are tiles of vec rows of " \
    "that many elements (1- and 2-byte types, 4 rows of 16 bytes)")            \
  X(span, RL_SPAN, RL_AS_VALUE,                                                \
    "0, or the steps along Q a square's or tile's rows span, K's whole "       \
    "block at each (K's block under 16 bytes)")                                \
  X(flat, RL_FLAT, RL_AS_VALUE,                                                \
    "squares take the box's rows in destination order, Q step after Q "        \
    "step, wherever along Q and K they fall (K whole, Q continuing its "       \
    "rows, K's extent not whole squares); 2: its columns in source order "     \
    "likewise (P whole, under a square, Q continuing its run in the source)")  \
  X(flat_stage, RL_FLAT_STAGE, RL_AS_VALUE,                                    \
    "flat 1: 0, or the elements of a private buffer the box's destination "    \
    "rows are put together in (more than 16 of them in one cache set), then "  \
    "written whole")                                                           \
  X(wide, RL_WIDE, RL_AS_FLAG,                                                 \
    "1-byte squares of 4 rows along K by 16 bytes along P (K's block 4, the "  \
    "rows it writes following one another)")                                   \
  X(p_first, RL_P_FIRST, RL_AS_FLAG,                                           \
    "consecutive work-items step along P, not Q")                              \
  X(ahead, RL_AHEAD, RL_AS_VALUE,                                              \
    "squares prefetch the source of the Q step this many steps ahead (with "   \
    "flat, of the squares this many on along the box's rows); 0: none")        \
  X(lead, RL_LEAD, RL_AS_VALUE,                                                \
    "squares first prefetch each source row's line this many elements past "   \
    "the box along P (4-bit squares and interleaved planes: past each "        \
    "load); 0: none")                                                          \
  X(tail, RL_SQUARE_TAIL, RL_AS_FLAG,                                          \
    "squares' boxes build their rows past the last square along P into "       \
    "vectors, not element by element")                                         \
  X(group, RL_GROUP, RL_AS_MANY,                                               \
    "squares side by side along K a box moves at once, writing each row's "    \
    "pieces one after another (0 or 1: one square at a time)")                 \
  X(stream, RL_STREAM, RL_AS_VALUE,                                            \
    "elements (bytes for 4-bit types) per non-temporal store; 0: plain "       \
    "stores")                                                                  \
  X(cast_stream, RL_CAST_STREAM, RL_AS_FLAG,                                   \
    "a cast's box writes its rows, whole vectors of 16 elements, with "        \
    "non-temporal stores (not where a row's elements lie in different "        \
    "channels: those go one by one)")                                          \
  X(staged, RL_STAGED, RL_AS_VALUE,                                            \
    "0, or the 16-byte rows of a private buffer that holds a box's "           \
    "destination (one run of whole rows) before it is written out")            \
  X(shift, RL_SHIFT, RL_AS_FLAG,                                               \
    "each row of the box (Q's pieces of K's block, one run in the "            \
    "destination that starts off the 16-byte grid) goes through a private "    \
    "buffer, to stream from that grid on")                                     \
  X(copy_in, RL_COPY_IN, RL_AS_FLAG,                                           \
    "1-byte squares whose source rows, or destination rows, fall into one "    \
    "cache set: the box's source read whole into a private buffer, its "       \
    "destination rows put together in another and written one after "          \
    "another")                                                                 \
  X(planes, RL_PLANES, RL_AS_PLANES,                                           \
    "0, or K's extent, the planes a box interleaves 16 bytes of each at a "    \
    "time (rows of K elements, strided in the source, that follow one "        \
    "another in the destination); with split or weave, P's extent, the "       \
    "elements of a pixel one after another in the source; in a cast, K's "     \
    "extent (2 to 15), where 16 of P's rows make one run of K vectors in "     \
    "the destination (RL_CAST_PLANES), or with weave P's (RL_CAST_WEAVE), "    \
    "or with split P's (2 to 15), 16 of K's rows P vectors in the source")     \
  X(split, RL_SPLIT, RL_AS_FLAG,                                               \
    "with planes: the other way, P's few elements of each pixel, one after "   \
    "another in the source, into as many planes, K's rows in the "             \
    "destination")                                                             \
  X(weave, RL_WEAVE, RL_AS_FLAG,                                               \
    "with planes (P's extent): 0, or K's extent; both ways at once, the "      \
    "pixels along Q (NCHW4 -> 2N: each pixel's 4 channels one after another "  \
    "in the source, its 2 images in the destination); a cast's the same, "     \
    "16 pixels at a time")                                                     \
  X(odd, RL_ODD_ROWS, RL_AS_FLAG,                                              \
    "4-bit squares: a source row may start mid-byte (a source stride other "   \
    "than P's, or P's extent, is odd)")                                        \
  X(odd_k, RL_ODD_K, RL_AS_FLAG,                                               \
    "4-bit squares: K's extent is odd, so destination rows start mid-byte; "   \
    "each Q step's run of P's rows, whole bytes, goes through a private "      \
    "buffer")

#endif /* RELAYOUT_VARIANT_H */
