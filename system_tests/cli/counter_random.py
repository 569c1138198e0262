"""numpy implementation of `einrel run --random SEED` (docs/cli.md): written from the documented definition,
independently of the C++ (core/tensor/src/detail/einrel_CounterRandom.hpp), and checked against Random123's known answers."""
import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter, key):
    """Philox4x32-10 of arrays of counters (4 words each, shape (4, n)) under one key (2 words)."""
    c = [np.asarray(w, dtype=np.uint64) & _MASK for w in counter]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for r in range(10):
        if r:
            k0, k1 = (k0 + _W0) & _MASK, (k1 + _W1) & _MASK
        p0, p1 = _M0 * c[0], _M1 * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & _MASK, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & _MASK]
    return c


def random_tensor(seed, stream, shape, dtype):
    """Input number `stream` (graph order) of shape `shape` for `--random seed`."""
    n = int(np.prod(shape, dtype=np.int64))
    index = np.arange(n, dtype=np.uint64)
    zeros = np.zeros(n, dtype=np.uint64)
    w = philox4x32_10([index & _MASK, index >> np.uint64(32), zeros + np.uint64(stream), zeros],
                      (seed & 0xFFFFFFFF, seed >> 32))
    if np.dtype(dtype) == np.float32:
        values = (w[0] >> np.uint64(8)).astype(np.float32) * np.float32(2.0**-23) - np.float32(1)
    else:
        bits = ((w[0] << np.uint64(32)) | w[1]) >> np.uint64(11)
        values = bits.astype(np.float64) * 2.0**-52 - 1.0
    return values.reshape(shape)


def self_test():
    """Random123's kat_vectors for philox4x32 10."""
    cases = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ]
    for counter, key, expected in cases:
        got = tuple(int(w[0]) for w in philox4x32_10([[x] for x in counter], key))
        assert got == expected, f"philox4x32_10{counter, key} = {[hex(g) for g in got]}"
