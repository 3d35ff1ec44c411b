/* test_npy.c - .npy headers: round trips, versions 1-3, corrupt files */
#include "check.h"
#include "relayout_npy.h"

/* A .npy file: magic, version, header length, dict text, then data bytes. */
static size_t make(unsigned char *out, int major, const char *dict,
                   size_t data_bytes) {
  size_t prefix = major == 1 ? 10 : 12, n = strlen(dict);
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  for (size_t i = 0; i < prefix - 8; i++)
    out[8 + i] = (unsigned char)(n >> (8 * i));
  memcpy(out + prefix, dict, n);
  memset(out + prefix + n, 7, data_bytes);
  return prefix + n + data_bytes;
}

static void round_trip(void) {
  unsigned char file[4096];
  size_t len = sizeof file;
  const int64_t shape[2] = {20, 28};
  CHECK_OK(relayout_npy_header((char *)file, &len, "<f2", 2, shape, &e_));
  CHECK(len % 64 == 0 && file[len - 1] == '\n', "header pads to 64 bytes");
  memset(file + len, 0, 20 * 28 * 2);
  relayout_npy_info info;
  CHECK_OK(relayout_npy_parse(&info, file, len + 20 * 28 * 2, &e_));
  CHECK(info.rank == 2 && info.shape[0] == 20 && info.shape[1] == 28 &&
            info.elem_size == 2 && !info.fortran_order &&
            info.data_offset == (int64_t)len && !strcmp(info.descr, "<f2"),
        "parsed back what was written");
  size_t need = 0;
  CHECK_OK(relayout_npy_header(NULL, &need, "<f2", 2, shape, &e_));
  CHECK(need == len, "size query agrees");
  need = 10;
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "header needs",
              relayout_npy_header((char *)file, &need, "<f2", 2, shape, &e_));
  len = sizeof file;
  CHECK_OK(relayout_npy_header((char *)file, &len, "|u1", 1,
                               (const int64_t[]){5}, &e_));
  CHECK(strstr((char *)file + 10, "(5, )") != NULL, "rank 1 is a 1-tuple");
  relayout_dtype t;
  for (int d = 0; d < RELAYOUT_DTYPE_COUNT; d++) {
    const char *descr;
    if (relayout_dtype_bits((relayout_dtype)d) == 4) {
      CHECK_FAILS(RELAYOUT_ERR_UNSUPPORTED, "no packed 4-bit",
                  relayout_npy_descr(&descr, (relayout_dtype)d, &e_));
      continue;
    }
    CHECK_OK(relayout_npy_descr(&descr, (relayout_dtype)d, &e_));
    CHECK_OK(relayout_npy_dtype(&t, descr, &e_));
    CHECK(t == (relayout_dtype)d, "descr %s maps back", descr);
  }
}

static void versions(void) {
  unsigned char file[512];
  relayout_npy_info info;
  const char *dict = "{'shape': (3, 2), 'fortran_order': True, 'descr': '<i4'}";
  for (int v = 1; v <= 3; v++) {
    size_t n = make(file, v, dict, 24);
    CHECK_OK(relayout_npy_parse(&info, file, n, &e_));
    CHECK(info.fortran_order && info.elem_size == 4 && info.rank == 2,
          "version %d parses", v);
  }
  size_t n =
      make(file, 1,
           "{\"descr\":\"|b1\",\"fortran_order\":False,\"shape\":(4,),}", 4);
  CHECK_OK(relayout_npy_parse(&info, file, n, &e_));
}

static void corrupt(void) {
  static const struct {
    const char *dict;
    size_t data;
    relayout_status want;
    const char *part;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 7,
       RELAYOUT_ERR_FILE,
       "truncated: its shape needs 8 data bytes, it holds 7"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 9,
       RELAYOUT_ERR_FILE, "1 bytes after the 8"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", 8,
       RELAYOUT_ERR_UNSUPPORTED, "big-endian"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}", 16,
       RELAYOUT_ERR_UNSUPPORTED, "dtype '<c8' is not supported"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 8,
       RELAYOUT_ERR_FILE, "quoted string"},
      {"{'descr': '<f4', 'shape': (2,)}", 8, RELAYOUT_ERR_FILE, "missing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8,
       RELAYOUT_ERR_FILE, "unexpected key 'x'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", 8,
       RELAYOUT_ERR_FILE, "neither True nor False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}", 8,
       RELAYOUT_ERR_FILE, "whole numbers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0)}", 0,
       RELAYOUT_ERR_DIMS, "axis 1 has extent 0"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4,
       RELAYOUT_ERR_DIMS, "0-dimensional"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8,
       RELAYOUT_ERR_FILE, "not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
       "4294967296, 4294967296)}",
       0, RELAYOUT_ERR_OVERFLOW, "beyond 2^63"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       0, RELAYOUT_ERR_OVERFLOW, "beyond 2^62"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,"
       "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
       4, RELAYOUT_ERR_UNSUPPORTED, "more than 24 axes"},
      {"{'descr': '<f4", 0, RELAYOUT_ERR_FILE, "unterminated"},
      {"['descr']", 0, RELAYOUT_ERR_FILE, "does not start with '{'"},
  };
  unsigned char file[1024];
  relayout_npy_info info;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n = make(file, 1, cases[i].dict, cases[i].data);
    CHECK_FAILS(cases[i].want, cases[i].part,
                relayout_npy_parse(&info, file, n, &e_));
  }
  size_t n = make(file, 1,
                  "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8);
  file[0] = 'X';
  CHECK_FAILS(RELAYOUT_ERR_FILE, "not a .npy file",
              relayout_npy_parse(&info, file, n, &e_));
  file[0] = 0x93;
  file[6] = 4;
  CHECK_FAILS(RELAYOUT_ERR_FILE, "version 4.0",
              relayout_npy_parse(&info, file, n, &e_));
  file[6] = 1;
  file[8] = 0xFF;
  file[9] = 0xFF;
  CHECK_FAILS(RELAYOUT_ERR_FILE, "runs past the end",
              relayout_npy_parse(&info, file, n, &e_));
  n = make(file, 2, "{}", 0);
  memset(file + 8, 0xFF, 4);
  CHECK_FAILS(RELAYOUT_ERR_FILE, "beyond the 1048576-byte limit",
              relayout_npy_parse(&info, file, n, &e_));
  CHECK_FAILS(RELAYOUT_ERR_FILE, "magic",
              relayout_npy_parse(&info, file, 5, &e_));
}

/* The header alone, as a stream reads it: from its first 12 bytes the
 * length it needs, then the data's size and offset, for every version. */
static void header_alone(void) {
  unsigned char file[512];
  relayout_npy_info info;
  const char *dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3)}";
  for (int v = 1; v <= 3; v++) {
    size_t n = make(file, v, dict, 60), head = n - 60;
    memset(&info, 0, sizeof info);
    CHECK_FAILS(RELAYOUT_ERR_BUFFER, "runs past the end",
                relayout_npy_parse_header(&info, file, 12, &e_));
    CHECK(info.data_offset == (int64_t)head,
          "version %d: the header needs %lld bytes, not %zu", v,
          (long long)info.data_offset, head);
    CHECK_OK(relayout_npy_parse_header(&info, file, head, &e_));
    CHECK(info.data_offset == (int64_t)head && info.data_size == 60 &&
              info.rank == 2,
          "version %d: the header alone gives the data's place", v);
  }
  CHECK_FAILS(RELAYOUT_ERR_FILE, "magic",
              relayout_npy_parse_header(&info, file, 6, &e_));
}

/* Random corruptions of a valid file: each is parsed or refused, never a
 * crash or a read outside the (guarded) buffer. */
static void mutations(void) {
  unsigned char base[256];
  size_t n =
      make(base, 1,
           "{'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }", 24);
  int refused = 0;
  for (int i = 0; i < 20000; i++) {
    size_t len = (size_t)rng_range(1, (int64_t)n);
    guarded g = guarded_alloc(len, 0);
    memcpy(g.data, base, len);
    for (int k = (int)rng_range(0, 4); k > 0; k--)
      g.data[rng_next() % len] = (unsigned char)rng_next();
    relayout_npy_info info;
    relayout_error err;
    relayout_status s = relayout_npy_parse(&info, g.data, len, &err);
    if (s)
      refused++;
    else
      CHECK(info.data_offset + info.data_size == (int64_t)len,
            "accepted files are exact");
    guarded_free(&g);
  }
  CHECK(refused > 0, "some mutations are refused");
}

int main(void) {
  round_trip();
  versions();
  corrupt();
  header_alone();
  mutations();
  return check_summary();
}
