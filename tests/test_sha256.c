/* SHA-256 against the FIPS 180-2 / NIST CAVS examples ("", "abc", the two-block 448-bit message,
 * a million 'a'), fed whole and in odd pieces. */
#include <string.h>

#include "core/sha256.h"
#include "test_util.h"

static void digest_of(const char *msg, size_t n, size_t piece, char hex[65]) {
    ltx2_sha256 s;
    ltx2_sha256_init(&s);
    for (size_t i = 0; i < n; i += piece) ltx2_sha256_update(&s, msg + i, n - i < piece ? n - i : piece);
    ltx2_sha256_hex(&s, hex);
}

int main(void) {
    static const struct {
        const char *msg, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const size_t pieces[3] = {1, 7, 1000};
        for (int k = 0; k < 3; k++) {
            char hex[65];
            digest_of(v[i].msg, strlen(v[i].msg), pieces[k], hex);
            CHECK(strcmp(hex, v[i].hex) == 0, "sha256(\"%s\") in pieces of %zu: %s", v[i].msg, pieces[k], hex);
        }
    }
    static char million[1000000];
    memset(million, 'a', sizeof million);
    char hex[65];
    digest_of(million, sizeof million, 4099, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
          "sha256(10^6 x 'a'): %s", hex);
    return test_finish();
}
