/* cast.cl - the casts of docs/CASTS.md on elements' bits, in integer
 * arithmetic only, so that no device needs fp16 or fp64 and every device
 * rounds alike. The generator defines each side's kind: RL_CS_M and RL_CS_E,
 * a float's fraction and exponent bits (RL_CS_M 0: an integer of RL_CS_BITS
 * bits, RL_CS_SIGNED or not); RL_CD_* the same for the destination, whose
 * integers saturate to RL_CD_LO..RL_CD_HI. The quantization (the source's
 * scale, as f32 bits, and zero point, the destination's, and the bits
 * padding is written as) is compiled in as RL_Q_* in a specialised kernel,
 * and read from the plan's block at RL_GC in a generic one. */

/* A float as sign, significand and exponent (value m * 2^e); kind 0 finite,
 * 1 infinite, 2 NaN (m: the payload). */
typedef struct {
  uint sign, kind;
  ulong m;
  int e;
} rl_unpacked;

static rl_unpacked rl_unpack(ulong b, int M, int E) {
  rl_unpacked u;
  int bias = (1 << (E - 1)) - 1, field = (int)((b >> M) & ((1UL << E) - 1));
  u.sign = (uint)(b >> (M + E)) & 1;
  u.m = b & ((1UL << M) - 1);
  u.kind = field == (1 << E) - 1 ? (u.m ? 2 : 1) : 0;
  u.e = (field ? field : 1) - bias - M;
  if (field && !u.kind) u.m |= 1UL << M;
  return u;
}

/* m * 2^e to nearest, ties to even, as a float of M fraction and E
 * exponent bits (subnormals kept, infinity past the largest). */
static ulong rl_round(uint sign, ulong m, int e, int M, int E) {
  int bias = (1 << (E - 1)) - 1;
  ulong s = (ulong)sign << (M + E), inf = s | (((1UL << E) - 1) << M);
  if (!m) return s;
  int lead = 63 - (int)clz(m);
  int shift = max(lead - M, 1 - bias - M - e); /* bits below the quantum */
  ulong q;
  if (shift <= 0) {
    q = m << -shift;
  } else if (shift >= 64) {
    q = shift == 64 && m > (1UL << 63);
  } else {
    ulong rem = m & ((1UL << shift) - 1), mid = 1UL << (shift - 1);
    q = m >> shift;
    q += rem > mid || (rem == mid && (q & 1));
  }
  if (q < (1UL << M)) return s | q; /* subnormal */
  long biased = e + shift + M + bias; /* q up to 2^(M+1): carries on */
  if (biased + (long)(q >> (M + 1)) >= (1 << E) - 1) return inf;
  return s | (((ulong)biased << M) + q - (1UL << M));
}

/* round_half_even(m * 2^e / scale) for a scale's f32 bits, exactly, capped
 * at 1024: past every integer type's range. A float division comes within
 * 1 of the quotient; the remainder, in integers, corrects it and rounds
 * (a 64-bit division per element would cost GPUs several times more). */
static long rl_quotient(ulong m, int e, ulong scale) {
  rl_unpacked s = rl_unpack(scale, 23, 8);
  int k = e - s.e;
  if (!m || k < -38) return 0;
  if (k > 38) return 1024;
  ulong n = k >= 0 ? m << k : m, d = k >= 0 ? s.m : s.m << -k;
  float f = (float)n / (float)d;
  if (f > 1100.0f) return 1024;
  long q = (long)f, r = (long)n - q * (long)d; /* |r| < 2d < 2^63 */
  if (r < 0) {
    q--;
    r += (long)d;
  } else if (r >= (long)d) {
    q++;
    r -= (long)d;
  }
  q += 2 * r > (long)d || (2 * r == (long)d && (q & 1));
  return q > 1024 ? 1024 : q;
}

/* The common weight casts in 32-bit arithmetic and selects: the same bits
 * as the general path below (f16 and bf16 go between each other through
 * f32, exactly: one rounding). The bf16 ones are defined for a uint and,
 * with the suffix _16, for a uint16, which CPU boxes convert a register at
 * a time (kernels/lines_casts.cl). */
#define RL_BF16_CASTS(V, U)                                                    \
  static U rl_f32_of_bf16##V(U u) {                                            \
    return (u & 0x7FFF) > 0x7F80 ? (u << 16) | 0x400000 : u << 16;             \
  }                                                                            \
  static U rl_bf16_of_f32##V(U u) {                                            \
    return (u & 0x7FFFFFFF) > 0x7F800000                                       \
               ? (u >> 16) | 0x40                                              \
               : (u + 0x7FFF + ((u >> 16) & 1)) >> 16;                         \
  }
RL_BF16_CASTS(, uint)
RL_BF16_CASTS(_16, uint16)

static uint rl_f32_of_f16(uint h) {
  uint s = (h & 0x8000) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  uint lead = 31 - clz(m | 1); /* a subnormal's leading bit */
  uint sub = (lead + 103) << 23 | ((m << (23 - lead)) & 0x7FFFFF);
  uint out = e == 31  ? 0x7F800000 | m << 13 | (m ? 0x400000 : 0)
             : e      ? (e + 112) << 23 | m << 13
             : m      ? sub
                      : 0;
  return s | out;
}

static uint rl_f16_of_f32(uint u) {
  uint s = (u >> 16) & 0x8000, a = u & 0x7FFFFFFF;
  uint normal = (a - 0x38000000 + 0xFFF + ((a >> 13) & 1)) >> 13;
  int shift = clamp(126 - (int)(a >> 23), 1, 31); /* below 2^-14 */
  uint m = (a & 0x7FFFFF) | 0x800000, q = m >> shift,
       rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
  uint sub = (a >> 23) < 102 ? 0 : q + (rem > mid || (rem == mid && (q & 1)));
  uint out = a > 0x7F800000   ? 0x7E00 | ((a >> 13) & 0x3FF)
             : a >= 0x477FF000 ? 0x7C00
             : a >= 0x38800000 ? normal
                               : sub;
  return s | out;
}

/* 16 f32s' bits as f16s' and back on a CPU device: OpenCL's
 * vstore_half_rte and vload_half, exact or rounded to nearest even by their
 * definition and one instruction where the CPU has one (x86's F16C): 1.6x
 * the integer path on PoCL (bench/README.md, "Casts in CPU boxes"); NaNs
 * come out as the scalar functions give them (x86's and Arm's
 * conversions), which test_casts checks. */
static ushort16 rl_f16_of_f32_16(uint16 u) {
  ushort16 h;
  vstore_half16_rte(as_float16(u), 0, (__private half *)&h);
  return h;
}
static uint16 rl_f32_of_f16_16(uint16 u) {
  ushort16 h = convert_ushort16(u);
  return as_uint16(vload_half16(0, (__private const half *)&h));
}

#define RL_IS(side, m, e) (RL_C##side##_M == m && RL_C##side##_E == e)
#if RL_IS(S, 23, 8) && RL_IS(D, 7, 8)
#define RL_FAST(u) rl_bf16_of_f32(u)
#elif RL_IS(S, 7, 8) && RL_IS(D, 23, 8)
#define RL_FAST(u) rl_f32_of_bf16(u)
#elif RL_IS(S, 10, 5) && RL_IS(D, 23, 8)
#define RL_FAST(u) rl_f32_of_f16(u)
#elif RL_IS(S, 23, 8) && RL_IS(D, 10, 5)
#define RL_FAST(u) rl_f16_of_f32(u)
#elif RL_IS(S, 7, 8) && RL_IS(D, 10, 5)
#define RL_FAST(u) rl_f16_of_f32(rl_f32_of_bf16(u))
#elif RL_IS(S, 10, 5) && RL_IS(D, 7, 8)
#define RL_FAST(u) rl_bf16_of_f32(rl_f32_of_f16(u))
#endif

/* A float source's bits (u) as f32's, exactly: for scalars and uint16s */
#define RL_F32_OF(V, u)                                                        \
  (RL_CS_M == 10  ? rl_f32_of_f16##V(u)                                        \
   : RL_CS_M == 7 ? rl_f32_of_bf16##V(u)                                       \
                  : (u))

#if defined(RL_CPU) && RL_CS_M && !RL_CD_M
/* Quantizing on a CPU device, to the reference's result (the exact
 * quotient of an f32 value over an f32 scale, rounded half to even) in f32
 * vectors. A scale under 2^-100 is first brought up by 2^100 with the value
 * (exact; a value that overflows saturates either way). The product by the
 * reciprocal, q, is then within 2^-11 of the quotient below 2^11 (past it,
 * the steps below keep q's sign and size, and it saturates), which so lies
 * within half of the half-way point h beside q's nearest integer n: the
 * exact residual's sign (by fma, never subnormal) says on which side, or
 * that it is h (half to even). Adding and taking off 1.5 * 2^23 rounds
 * half to even where rint, on PoCL, costs more. From f32 bits u, for a
 * uint and a uint16. */
#define RL_QUANTIZE(V, U, F, I)                                                \
  static I rl_quantize##V(U u, U ds, I dz) {                                   \
    F x = as_##F(u), s = as_##F(ds), m = s < 0x1p-100f ? (F)0x1p100f : (F)1;   \
    x *= m;                                                                    \
    s *= m;                                                                    \
    F q = x * (1.0f / s);                                                      \
    F n = (q + 0x1.8p23f) - 0x1.8p23f;                                         \
    F h = n + copysign((F)0.5f, q - n), e = fma(-h, s, x);                     \
    F by = e == 0 ? (F)0 : copysign((F)0.25f, e);                              \
    F k = (h + by + 0x1.8p23f) - 0x1.8p23f;                                   \
    k = fmin(fmax(k + convert_##F(dz), (F)RL_CD_LO), (F)RL_CD_HI);             \
    return isnan(x) ? dz : convert_##I(k);                                     \
  }
RL_QUANTIZE(, uint, float, int)
RL_QUANTIZE(_16, uint16, float16, int16)
#define RL_QUANTIZE_F32 1
#endif

/* 16 elements at a time, for CPU boxes and a CPU device's generic tiles
 * (RL_CPU; RL_CSV and RL_CDV, each side's bits as a vector; a GPU's
 * programs have no use for it): f32, f16 and bf16 to each other and to
 * 8-bit integers (rl_quantize_16); 8-bit integers to f32, f16 and bf16,
 * and to each other. */
#if RL_CS_BITS == 8
#define RL_CSV uchar16
#define RL_CSS uchar
#elif RL_CS_BITS == 16
#define RL_CSV ushort16
#define RL_CSS ushort
#elif RL_CS_BITS == 32
#define RL_CSV uint16
#define RL_CSS uint
#endif
#if RL_CD_BITS == 8
#define RL_CDV uchar16
#elif RL_CD_BITS == 16
#define RL_CDV ushort16
#elif RL_CD_BITS == 32
#define RL_CDV uint16
#endif
#if defined(RL_CPU) && defined(RL_CSV) && defined(RL_CDV)
#define RL_FLOATISH(side)                                                      \
  (RL_C##side##_M == 23 || RL_C##side##_M == 10 || RL_C##side##_M == 7)
/* (integers to f16 and bf16 round through f64: where the device has it) */
#if defined(cl_khr_fp64) || defined(__opencl_c_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define RL_F64 1
#else
#define RL_F64 0
#endif
#if RL_FLOATISH(S) && (RL_FLOATISH(D) || defined(RL_QUANTIZE_F32))
#define RL_VCAST 1
#elif !RL_CS_M && (RL_CD_M == 23 || !RL_CD_M || (RL_FLOATISH(D) && RL_F64))
#define RL_VCAST 1
#endif
#endif

#ifdef RL_VCAST
/* A shuffle's cost by lane size: on x86, 16-bit lanes take three
 * instructions a shuffle, 32- and 64-bit ones one (bench/README.md, "Conv
 * weights out of FRACTAL_Z"); without AVX-512, 16 lanes of 32 bits are two
 * registers, and the casts ran as fast shuffled in 16 bits as in 32, or
 * faster (bench/README.md, "Taking a weight's pixels apart"). A square of
 * 16 x 16 elements of type S cast to D converts its vectors before its
 * transpose where only the source's lanes are 16-bit (f16 -> f32, bf16 ->
 * i8); else after (a vector of 16 bytes transposes faster than one of 16
 * f32: i8 -> f32). Without AVX-512's 32 registers of 16 f32, 16 such
 * vectors do not fit: f32 -> 8 bits converts first there too
 * (bench/README.md, "Quantizing without AVX-512"). */
#ifdef __AVX512F__
#define RL_LANES_COST(t) (sizeof(t) >= 4 ? 0 : sizeof(t) == 1 ? 1 : 2)
#define RL_CONVERT_FIRST_OF(S, D) (sizeof(S) == 2 && sizeof(D) != 2)
#else
#define RL_LANES_COST(t) (sizeof(t) == 1 ? 1 : 2)
#define RL_CONVERT_FIRST_OF(S, D)                                              \
  ((sizeof(S) == 2 && sizeof(D) != 2) || (sizeof(S) == 4 && sizeof(D) == 1))
#endif
#if !RL_CS_M && (RL_CD_M == 10 || RL_CD_M == 7)
/* Dequantizing to f16 or bf16: the product (q - zero point) * scale, exact
 * in f64 (9 bits by 24), rounded to f32 to odd (toward zero, the last bit
 * set where inexact), so that rounding that to f16 or bf16, 13 or more
 * bits shorter, is the one rounding of the exact product. */
static uint16 rl_f32_odd_16(double16 d) {
  float16 t = convert_float16(d);
  double16 back = convert_double16(t);
  uint16 inexact = convert_uint16(back != d),
         away = convert_uint16(fabs(back) > fabs(d));
  return (as_uint16(t) + away) | (inexact & 1);
}
#endif

/* Each lane with its own scale bits and zero point on each side; unit:
 * the source's scale 1 and zero point 0 in every lane */
static RL_CDV rl_vcast_lanes(RL_CSV x, uint16 ss, int16 sz, uint16 ds,
                             int16 dz, int unit) {
  (void)ss, (void)sz, (void)ds, (void)dz, (void)unit;
#if RL_CS_M
  uint16 f = RL_F32_OF(_16, convert_uint16(x));
#else
  int16 q = RL_CS_SIGNED ? convert_int16(as_char16(x)) : convert_int16(x);
#if RL_CD_M == 10 || RL_CD_M == 7
  uint16 f;
  if (unit) /* (the generic kernels' scales come at run time) exact in f32 */
    f = as_uint16(convert_float16(q));
  else
    f = rl_f32_odd_16(convert_double16(q - sz) *
                      convert_double16(as_float16(ss)));
#else /* dequantize to f32: exact operands, rounded once */
  uint16 f = as_uint16(convert_float16(q - sz) * as_float16(ss));
#endif
#endif
#if !RL_CS_M && !RL_CD_M /* the zero points' difference, saturated */
  return convert_uchar16(
      as_uint16(clamp(q - sz + dz, (int)RL_CD_LO, (int)RL_CD_HI)));
#elif RL_CD_M == 23
  return f;
#elif RL_CD_M == 10
  return rl_f16_of_f32_16(f);
#elif RL_CD_M == 7
  return convert_ushort16(rl_bf16_of_f32_16(f));
#elif RL_CS_M /* the integer's bits, modulo 256 */
  return convert_uchar16(as_uint16(rl_quantize_16(f, ds, dz)));
#endif
}
static RL_CDV rl_vcast(RL_CSV x, long ss, long sz, long ds, long dz) {
  return rl_vcast_lanes(x, (uint16)(uint)ss, (int16)(int)sz, (uint16)(uint)ds,
                        (int16)(int)dz, ss == 0x3f800000L /* 1.0f */ && !sz);
}

/* A row's last data, n under 16: its n source elements `stride` apart from
 * `in` selected into a vector's first lanes, the others 0 (a runtime n:
 * an element inserted at a lane it computes went through memory) */
static RL_CSV rl_vfirst(__global const RL_CSS *in, long stride, long n) {
  const RL_CSV lanes = (RL_CSV)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                14, 15);
  RL_CSV v = (RL_CSV)0;
  for (long l = 0; l < n; l++)
    v = select(v, (RL_CSV)in[l * stride], lanes == (RL_CSV)l);
  return v;
}

/* y's first n lanes, the others `pad` */
static RL_CDV rl_vkeep(RL_CDV y, long n, RL_CDV pad) {
  const RL_CDV lanes = (RL_CDV)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                14, 15);
  return select(pad, y, lanes < (RL_CDV)n);
}
#endif

/* A source element's bits to the destination's, with the source's scale
 * bits and zero point (ss, sz) and the destination's (ds, dz). */
static ulong rl_cast(ulong x, long ss, long sz, long ds, long dz) {
#ifdef RL_FAST
  (void)ss, (void)sz, (void)ds, (void)dz;
  uint u = (uint)x;
  return RL_FAST(u);
#elif RL_CS_M
  rl_unpacked u = rl_unpack(x, RL_CS_M, RL_CS_E);
#if RL_CD_M /* float to float; NaN quiet, sign and leading payload kept */
  ulong top = (ulong)u.sign << (RL_CD_M + RL_CD_E) |
              ((1UL << RL_CD_E) - 1) << RL_CD_M;
  if (u.kind == 2)
    return top | 1UL << (RL_CD_M - 1) |
           (RL_CD_M >= RL_CS_M ? u.m << (RL_CD_M - RL_CS_M)
                               : u.m >> (RL_CS_M - RL_CD_M));
  if (u.kind == 1) return top;
  return rl_round(u.sign, u.m, u.e, RL_CD_M, RL_CD_E);
#elif defined(RL_QUANTIZE_F32) /* quantize, as below */
  return (ulong)(long)rl_quantize(RL_F32_OF(, (uint)x), ds, dz);
#else /* quantize; NaN to the zero point */
  long q = u.kind == 2   ? 0
           : u.kind == 1 ? 1024
                         : rl_quotient(u.m, u.e, (ulong)ds);
  long v = (u.sign && u.kind != 2 ? -q : q) + dz;
  return (ulong)clamp(v, (long)RL_CD_LO, (long)RL_CD_HI);
#endif
#else
  long q = RL_CS_SIGNED ? (long)(x << (64 - RL_CS_BITS)) >> (64 - RL_CS_BITS)
                        : (long)x;
  long d = q - sz;
#if RL_CD_M /* dequantize: (q - zero point) * scale, exact, rounded once */
  rl_unpacked s = rl_unpack((ulong)ss, 23, 8);
  return rl_round(d < 0, (ulong)(d < 0 ? -d : d) * s.m, s.e, RL_CD_M, RL_CD_E);
#else /* integer to integer: the zero points' difference, saturated */
  return (ulong)clamp(d + dz, (long)RL_CD_LO, (long)RL_CD_HI);
#endif
#endif
}

#if defined(RL_QC) || defined(RL_GQC)
/* Per channel (RL_QC in a specialised kernel, RL_GQC in a generic one; 1:
 * the destination's quantization, 2: the source's): the kernel's last
 * argument holds each 16 channels' scales (f32 bits) then their zero
 * points, blocks of 32 ints, so that a block reads as two vectors; channel
 * c's take the place of that side's in the plan's (ss, sz, ds, dz).
 * rl_chan(o), generated, is o's channel in a specialised kernel. */
#define RL_QC_ARG , __global const int *restrict qc
#define RL_QC_PASS , qc
#define RL_QC_S(c) ((long)(uint)qc[(c) + ((c) & ~15L)])
#define RL_QC_Z(c) ((long)qc[(c) + ((c) & ~15L) + 16])
static ulong rl_cast_at(ulong x, __global const int *restrict qc, long c,
                        long ss, long sz, long ds, long dz) {
#if RL_QC == 1 || RL_GQC == 1
  return rl_cast(x, ss, sz, RL_QC_S(c), RL_QC_Z(c));
#else
  return rl_cast(x, RL_QC_S(c), RL_QC_Z(c), ds, dz);
#endif
}
#ifdef RL_VCAST
/* 16 elements, each lane with its channel's scale bits s and zero point z
 * on the side per channel, the plan's on the other */
static RL_CDV rl_vcast_qc(RL_CSV x, uint16 s, int16 z, long ss, long sz,
                          long ds, long dz) {
#if RL_QC == 1 || RL_GQC == 1
  return rl_vcast_lanes(x, (uint16)(uint)ss, (int16)(int)sz, s, z, 0);
#else
  return rl_vcast_lanes(x, s, z, (uint16)(uint)ds, (int16)(int)dz, 0);
#endif
}
/* 16 lanes' scale bits and zero points: those of channels c, c + w, ...,
 * c + 15w (w 0: one channel) */
typedef struct rl_lanes {
  uint16 s;
  int16 z;
} rl_lanes;
static rl_lanes rl_lanes_at(__global const int *restrict qc, long c, long w) {
  rl_lanes q = {(uint16)(uint)RL_QC_S(c), (int16)(int)RL_QC_Z(c)};
  if (w == 1 && !(c & 15)) { /* a block from its first, as two vectors */
    q.s = as_uint16(vload16(0, qc + 2 * c));
    q.z = vload16(1, qc + 2 * c);
  } else if (w) {
    for (int l = 1; l < 16; l++) {
      q.s[l] = (uint)RL_QC_S(c + l * w);
      q.z[l] = (int)RL_QC_Z(c + l * w);
    }
  }
  return q;
}
/* 16 elements of channels c, c + w, ..., c + 15w, each lane with its
 * channel's quantization (inlined: PoCL called it, its vectors through
 * memory, in the generic tiles) */
static inline __attribute__((always_inline)) RL_CDV
rl_vcast_at(RL_CSV x, __global const int *restrict qc, long c, long w,
            long ss, long sz, long ds, long dz) {
  rl_lanes q = rl_lanes_at(qc, c, w);
  return rl_vcast_qc(x, q.s, q.z, ss, sz, ds, dz);
}
#endif
#endif
#ifdef RL_QC
#define RL_TRANSFORM_AT(x, o)                                                  \
  ((RL_T)rl_cast_at((ulong)(x), qc, (long)rl_chan(o), RL_Q_SS, RL_Q_SZ,        \
                    RL_Q_DS, RL_Q_DZ))
#endif

#ifdef RL_Q_PAD
#define RL_TRANSFORM(x)                                                        \
  ((RL_T)rl_cast((ulong)(x), RL_Q_SS, RL_Q_SZ, RL_Q_DS, RL_Q_DZ))
#define RL_PAD ((RL_T)RL_Q_PAD)
#else
#define RL_GC 455
#define RL_TRANSFORM(x)                                                        \
  ((RL_GD)rl_cast((ulong)(x), g[RL_GC], g[RL_GC + 1], g[RL_GC + 2],           \
                  g[RL_GC + 3]))
#define RL_PAD ((RL_GD)g[RL_GC + 4])
#ifdef RL_GQC /* element x of channel c; the channel's dim at RL_GC + 5 */
#define RL_TRANSFORM_C(x, c)                                                   \
  ((RL_GD)rl_cast_at((ulong)(x), qc, c, g[RL_GC], g[RL_GC + 1], g[RL_GC + 2], \
                     g[RL_GC + 3]))
#endif
#endif
