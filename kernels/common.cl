/* common.cl - what every conversion kernel starts from
 *
 * Before it, the code generator (lib/codegen/codegen.c) writes each plan's
 * constants: RL_T, the destination's type (an unsigned integer of the
 * element's width; bytes for 4-bit types) and RL_TS the source's, the same
 * but in a cast; RL_I, the index type (int where every offset fits, else
 * long); RL_COUNT, the destination's elements; RL_VEC, the vector width of
 * rl_rows or the side of rl_lines' squares; RL_TRANSFORM(x), the
 * per-element hook, and RL_PAD, what padding holds (the identity and zero,
 * or in a cast, kernels/cast.cl's conversion and the destination's zero
 * point); RL_NIBBLES for 4-bit
 * elements; and rl_map(o, &s), which says whether destination element o
 * holds data and where its source element is. Then come this file and the
 * kernel's family (docs/KERNELS.md). Every kernel writes each destination
 * element once; offsets src_off and dst_off are in elements (bytes for
 * 4-bit types).
 */

/* A per-channel cast's table argument and its per-element hook (at
 * destination offset o), where kernels/cast.cl has not defined them. */
#ifndef RL_QC_ARG
#define RL_QC_ARG
#define RL_QC_PASS
#define RL_TRANSFORM_AT(x, o) RL_TRANSFORM(x)
#endif
/* Source element s: a nibble, low first, where the source is 4-bit. */
#ifdef RL_SRC_NIBBLES
#define RL_SRC(p, s) (((p)[(s) >> 1] >> (((s) & 1) * 4)) & 0xF)
#else
#define RL_SRC(p, s) ((p)[s])
#endif

#define RL_CAT_(a, b) a##b
#define RL_CAT(a, b) RL_CAT_(a, b)

/* A vector V moved unaligned, as one, through packed struct T (T##_v: V;
 * RL_PACKED_AT(T, p): the one at global p): PoCL compiles vloadn and
 * vstoren of 1- and 2-byte elements one element at a time. */
#define RL_PACKED(T, V)                                                        \
  typedef V T##_v;                                                             \
  typedef struct __attribute__((packed)) T {                                   \
    V v;                                                                       \
  } T
#define RL_PACKED_AT(T, p) (((__global T *)(p))->v)

/* Transposes the square in r, n rows of n-element vectors of type T (n =
 * 2^rounds): each round interleaves row i with row i + n / 2 into rows 2i
 * and 2i + 1 (zip: the swizzle that interleaves the two rows' halves, put
 * side by side). For the lines family's squares, a cast's (lines_casts.cl)
 * and the generic tiles (generic.cl). */
#define RL_TRANSPOSE(T, n, rounds, zip, r)                                     \
  _Pragma("unroll") for (int round = 0; round < (rounds); round++) {          \
    T t_[n];                                                                   \
    _Pragma("unroll") for (int i = 0; i < (n) / 2; i++) {                      \
      T lo = (T)((r)[i].lo, (r)[i + (n) / 2].lo),                              \
        hi = (T)((r)[i].hi, (r)[i + (n) / 2].hi);                              \
      t_[2 * i] = lo.zip;                                                      \
      t_[2 * i + 1] = hi.zip;                                                  \
    }                                                                          \
    _Pragma("unroll") for (int i = 0; i < (n); i++)(r)[i] = t_[i];             \
  }
