/* Wine 8 has no bcryptprimitives.dll, which Rust's standard library imports on Windows for
 * `ProcessPrng` (its random source since Rust 1.78). Windows 10 and later have it. This stand-in,
 * installed into the test prefix only (scripts/wine-prefix.sh), answers it from the RtlGenRandom
 * Wine does have, so the Windows builds can run under Wine here. It never ships. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
