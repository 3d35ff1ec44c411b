/* test_checksums.c - the command's checksums against their specifications'
 * published values: SHA-256 (FIPS 180-4's examples, corpus manifests) and
 * XXH64 (xxHash's, repack's completion records), at every tail length */
#include "../cli/common/cli.h"
#include "check.h"

int main(void) {
  char hex[65];
  cli_sha256(hex, "abc", 3);
  CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223"
                     "b00361a396177a9cb410ff61f20015ad"),
        "sha256(abc) %s", hex);
  static const struct {
    const char *text;
    uint64_t seed, want;
  } xxh[] = {
      {"", 0, 0xEF46DB3751D8E999ULL},
      {"a", 0, 0xD24EC4F1A98C6E5BULL},
      {"abc", 0, 0x44BC2CF5AD770999ULL},
      /* 33 bytes: one stripe of 32 and a byte */
      {"0123456789abcdef0123456789abcdef!", 0, 0x8AFFF4DAAC4E677EULL},
  };
  for (size_t i = 0; i < sizeof xxh / sizeof xxh[0]; i++) {
    uint64_t h = cli_xxh64(xxh[i].text, strlen(xxh[i].text), xxh[i].seed);
    CHECK(h == xxh[i].want, "xxh64('%s') %016llx", xxh[i].text,
          (unsigned long long)h);
  }
  /* bytes 0, 1, ... 255, 0, ...: 24 stripes; a stripe, an 8-byte lane, a
   * 4-byte one and a byte; 13 bytes with a seed */
  unsigned char b[768];
  for (int i = 0; i < 768; i++) b[i] = (unsigned char)i;
  CHECK(cli_xxh64(b, 768, 0) == 0x8E03C838C596036FULL, "xxh64 of 768 bytes");
  CHECK(cli_xxh64(b, 45, 0) == 0x10FDD84D6409ABDFULL, "xxh64 of 45 bytes");
  CHECK(cli_xxh64(b, 13, 7) == 0x8778B28063FB3B84ULL, "xxh64 of 13, seed 7");
  return check_summary();
}
