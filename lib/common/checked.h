/* checked.h - overflow-checked 64-bit size arithmetic; each returns 0 on
 * overflow */
#ifndef RELAYOUT_CHECKED_H
#define RELAYOUT_CHECKED_H

#include <stdint.h>

static inline int rl_mul(int64_t *r, int64_t a, int64_t b) {
  return !__builtin_mul_overflow(a, b, r);
}

static inline int rl_add(int64_t *r, int64_t a, int64_t b) {
  return !__builtin_add_overflow(a, b, r);
}

/* x rounded up to a multiple of m (x >= 0, m >= 1). */
static inline int rl_roundup(int64_t *r, int64_t x, int64_t m) {
  int64_t t;
  if (!rl_add(&t, x, m - 1)) return 0;
  *r = t / m * m;
  return 1;
}

static inline int64_t rl_ceil_div(int64_t x, int64_t m) {
  return x / m + (x % m != 0);
}

#endif /* RELAYOUT_CHECKED_H */
