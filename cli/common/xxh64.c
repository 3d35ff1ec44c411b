/* xxh64.c - XXH64 (xxHash's 64-bit hash, as its specification defines it)
 * of a buffer: the checksums of repack's completion records, which must
 * keep pace with the files they cover (sha256 here runs at ~115 MB/s) */
#include "cli.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

/* Little-endian loads, as the specification reads lanes. */
static uint64_t load64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static uint64_t load32(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24;
}

static uint64_t round64(uint64_t acc, uint64_t lane) {
  return rotl(acc + lane * P2, 31) * P1;
}

static uint64_t merge(uint64_t acc, uint64_t v) {
  return (acc ^ round64(0, v)) * P1 + P4;
}

uint64_t cli_xxh64(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data, *end = p + n;
  uint64_t acc;
  if (n >= 32) {
    uint64_t v[4] = {seed + P1 + P2, seed + P2, seed, seed - P1};
    for (; end - p >= 32; p += 32)
      for (int i = 0; i < 4; i++) v[i] = round64(v[i], load64(p + 8 * i));
    acc = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
    for (int i = 0; i < 4; i++) acc = merge(acc, v[i]);
  } else {
    acc = seed + P5;
  }
  acc += n;
  for (; end - p >= 8; p += 8)
    acc = rotl(acc ^ round64(0, load64(p)), 27) * P1 + P4;
  if (end - p >= 4) {
    acc = rotl(acc ^ load32(p) * P1, 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; p++) acc = rotl(acc ^ *p * P5, 11) * P1;
  acc ^= acc >> 33;
  acc *= P2;
  acc ^= acc >> 29;
  acc *= P3;
  return acc ^ acc >> 32;
}
