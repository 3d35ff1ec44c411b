/* fuzz_files.c - libFuzzer target: .npy and safetensors files
 *
 * The first byte picks the reader (odd: .npy, even: safetensors); the rest
 * is the file. A file the reader rejects is a clean rejection (the
 * sanitizers see to that). A file it accepts must hold:
 * - .npy: the data is what the shape and element size make, and ends the
 *   file; written again under a header of relayout_npy_header's (C order),
 *   it reads back with the same descr, shape and data;
 * - safetensors: the tensors cover the data section in order, each as many
 *   bytes as its shape and dtype make; written again under the header
 *   st_header_bytes gives, it reads back with the same tensors.
 */
#include "relayout_npy.h"
#include "safetensors.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what) {
  fprintf(stderr, "accepted file: %s\n", what);
  abort();
}

/* The bytes `size`-byte elements of this shape make; -1 past int64. */
static int64_t shape_bytes(int rank, const int64_t *shape, int64_t size) {
  int64_t n = size;
  for (int i = 0; i < rank; i++)
    if (shape[i] == 0) return 0;
  for (int i = 0; i < rank; i++)
    if (shape[i] < 0 || __builtin_mul_overflow(n, shape[i], &n)) return -1;
  return n;
}

/* Header then data, in one new buffer. */
static unsigned char *joined(const void *head, size_t hlen, const void *body,
                             size_t blen) {
  unsigned char *out = malloc(hlen + blen + 1);
  if (!out) fail("(the check ran out of memory)");
  memcpy(out, head, hlen);
  if (blen) memcpy(out + hlen, body, blen);
  return out;
}

static void npy(const unsigned char *file, size_t size) {
  relayout_npy_info a, b;
  relayout_error err;
  if (relayout_npy_parse(&a, file, size, &err)) return;
  if (a.data_offset < 0 ||
      (uint64_t)a.data_offset + (uint64_t)a.data_size != size)
    fail(".npy data does not end the file");
  if (shape_bytes(a.rank, a.shape, a.elem_size) != a.data_size)
    fail(".npy data is not the shape's size");
  size_t hlen = 0;
  if (a.rank < 1) return; /* relayout writes no 0-d arrays */
  if (relayout_npy_header(NULL, &hlen, a.descr, a.rank, a.shape, &err))
    fail(err.message);
  char *head = malloc(hlen);
  if (!head) fail("(the check ran out of memory)");
  if (relayout_npy_header(head, &hlen, a.descr, a.rank, a.shape, &err))
    fail(err.message);
  size_t n = (size_t)a.data_size;
  unsigned char *again = joined(head, hlen, file + a.data_offset, n);
  if (relayout_npy_parse(&b, again, hlen + n, &err)) fail(err.message);
  if (strcmp(a.descr, b.descr) || a.elem_size != b.elem_size ||
      a.rank != b.rank || b.fortran_order || a.data_size != b.data_size ||
      memcmp(a.shape, b.shape, (size_t)a.rank * sizeof a.shape[0]) ||
      memcmp(again + b.data_offset, file + a.data_offset, n))
    fail(".npy reads back differently under relayout's header");
  free(head);
  free(again);
}

static void same_tensors(const st_file *a, const st_file *b) {
  if (a->ntensors != b->ntensors || a->data_size != b->data_size ||
      memcmp(a->data, b->data, a->data_size))
    fail("safetensors reads back with other tensors");
  for (int i = 0; i < a->ntensors; i++) {
    const st_tensor *x = &a->tensors[i], *y = &b->tensors[i];
    if (strcmp(x->name, y->name) || strcmp(x->dtype, y->dtype) ||
        x->rank != y->rank || x->begin != y->begin || x->end != y->end ||
        memcmp(x->shape, y->shape, (size_t)x->rank * sizeof x->shape[0]))
      fail("safetensors reads back with another tensor");
  }
}

static void safetensors(const unsigned char *file, size_t size) {
  st_file a, b;
  relayout_error err;
  if (st_parse(&a, "input", file, size, &err)) return;
  uint64_t at = 0;
  for (int i = 0; i < a.ntensors; i++) {
    const st_tensor *t = &a.tensors[i];
    int64_t bytes =
        shape_bytes(t->rank, t->shape, relayout_dtype_bits(t->bits) / 8);
    if (t->begin != at || bytes < 0 || t->end - t->begin != (uint64_t)bytes)
      fail("safetensors tensors do not cover the data in order");
    at = t->end;
  }
  if (at != a.data_size) fail("safetensors data past the last tensor");
  char *head;
  size_t hlen;
  if (st_header_bytes(&head, &hlen, a.header, &err)) fail(err.message);
  unsigned char *again = joined(head, hlen, a.data, (size_t)a.data_size);
  if (st_parse(&b, "again", again, hlen + (size_t)a.data_size, &err))
    fail(err.message);
  same_tensors(&a, &b);
  st_close(&b);
  st_close(&a);
  free(head);
  free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  if (data[0] & 1)
    npy(data + 1, size - 1);
  else
    safetensors(data + 1, size - 1);
  return 0;
}
