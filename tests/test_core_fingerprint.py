"Property tests of `core.fingerprint`: every single-bit flip and every swap of two different elements changes it, equal content gives equal fingerprints"
import pytest, torch
from fastai_paranoid.core import fingerprint, fingerprints

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool, torch.complex64, torch.uint8, torch.float64]
SIZES = [0, 1, 31, 32, 33, 4095, 4096, 4097, 65535, 65536, 65537, 2 * 65536 + 3 * 32 + 5]

def _random(n, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool: return torch.rand(n, generator=g) < 0.5
    if dtype in (torch.int64, torch.uint8): return torch.randint(0, 200, (n,), generator=g).to(dtype)
    if dtype == torch.complex64: return torch.randn(n, generator=g, dtype=torch.complex64)
    return torch.randn(n, generator=g).to(dtype)

def _flip(t, i, bit):
    "A copy of `t` with bit `bit` of element `i`'s raw bits flipped"
    u = t.clone()
    raw = u.view(-1).view(torch.uint8) if u.dtype != torch.bool else u.view(torch.uint8)
    size = u.element_size()
    raw.view(-1, size)[i, bit // 8] ^= 1 << (bit % 8)
    return u

def _positions(n): return sorted({0, n // 2, n - 1, min(n - 1, 32), min(n - 1, 65535), min(n - 1, 65536)}) if n else []

@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('n', SIZES)
def test_bit_flips_change_it(dtype, n):
    t = _random(n, dtype)
    fp = fingerprint(t)
    assert fingerprint(t.clone()) == fp and fingerprints([t])[0] == fp
    bits = 8 * t.element_size() if dtype != torch.bool else 1
    for i in _positions(n):
        for bit in sorted({0, bits // 2, bits - 1}):
            assert fingerprint(_flip(t, i, bit)) != fp, (dtype, n, i, bit)

@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('n', [2, 33, 64, 4095, 5000, 65536, 65537, 3 * 65536 + 7, 65536 + 4096 + 37])
def test_swaps_change_it(dtype, n):
    t = _random(n, dtype, seed=1)
    if dtype == torch.bool: t[0], t[32 % n], t[-1] = True, False, False
    fp = fingerprint(t)
    pairs = [(0, 1), (0, n - 1)] + ([(n // 2, n // 2 + 1)] if n > 2 else [])
    p0 = n // 65536 * 65536 + 2 # in the last, partial block
    pairs += [(i, j) for i, j in [(0, 32), (0, 64), (5, 5 + 32 * 2047), (3, 65536 + 3), (0, 65536), (65536 - 1, 65536),
                                  (p0, p0 + 32), (p0, p0 + 32 * 100), (n - 1, n - 33), (n - 2, n - 1)] if 0 <= i < n and 0 <= j < n and i != j]
    for i, j in pairs:
        if t[i] == t[j]: t[j] = ~t[i] if dtype == torch.bool else t[i] + 1
        fp = fingerprint(t)
        s = t.clone(); s[[i, j]] = s[[j, i]]
        assert fingerprint(s) != fp, (dtype, n, i, j)

def test_sign_swaps_in_one_lane():
    "x and -x differ by 2^31 as 32-bit integers: a swap of them, an even number of rows apart in the same lane, still shows"
    for n in (64 * 3, 65536, 5 * 65536):
        t = torch.ones(n); t[32 * 3] = -1.
        fp = fingerprint(t)
        for j in (32, 32 * 5, 32 * 2047):
            if j < n:
                s = t.clone(); s[[32 * 3, j]] = s[[j, 32 * 3]]
                assert fingerprint(s) != fp, (n, j)

def test_equal_content_equal_fingerprint():
    m = torch.randn(300, 700)
    assert fingerprint(m.t()) == fingerprint(m.t().contiguous())
    assert fingerprint(m.t()) != fingerprint(m)
    assert fingerprint(m[:, ::2]) == fingerprint(m[:, ::2].contiguous())
    c = torch.randn(70000, dtype=torch.complex64)
    assert fingerprint(c.conj()) == fingerprint(c.conj().resolve_conj())
    assert fingerprint(c.conj()) != fingerprint(c)
    assert fingerprint(torch.tensor(1.5)) == fingerprint(torch.tensor(1.5)) != fingerprint(torch.tensor([1.5]))
    assert fingerprint(torch.zeros(0, 3)) != fingerprint(torch.zeros(3, 0))
    ts = [torch.randn(5), torch.randn(70000), torch.arange(3), torch.randn(2, 65536).double()]
    assert fingerprints(ts) == [fingerprint(t) for t in ts]
    assert fingerprints(ts[::-1]) == [fingerprint(t) for t in ts[::-1]]
    mixed = [torch.zeros(0), torch.tensor(2.), torch.ones(3, dtype=torch.bool), torch.arange(5000, dtype=torch.int16), torch.randn(3, 4).t(),
             torch.randn(3, dtype=torch.complex64), torch.arange(7, dtype=torch.uint8), torch.randn(4100).half(), torch.randn(5)]
    assert fingerprints(mixed) == [fingerprint(t) for t in mixed]
    assert fingerprints(mixed + mixed[:3]) == [fingerprint(t) for t in mixed + mixed[:3]]

def test_same_across_processes():
    "The weights are computed, not drawn: a fresh interpreter gives the same fingerprint"
    import subprocess, sys
    code = "import torch; from fastai_paranoid.core import fingerprint; print(fingerprint(torch.arange(200003, dtype=torch.float32).sin()))"
    outs = {subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout for _ in range(2)}
    assert len(outs) == 1
    assert outs.pop().strip() == str(fingerprint(torch.arange(200003, dtype=torch.float32).sin()))

# The compiled CPU kernel and PyTorch's ops give the same numbers: fingerprints taken either way compare equal
from fastai_paranoid import core

@pytest.fixture
def kernel():
    k = core._native()
    if k is None: pytest.skip("no compiled fingerprint kernel here (no C compiler, or FASTAI_PARANOID_NATIVE=0): PyTorch's ops are tested above")
    return k

def _torch_only(monkeypatch): monkeypatch.setattr(core, '_native_kernel', None)

def _mixed():
    g = torch.Generator().manual_seed(3)
    ts = [_random(n, dtype, seed=n) for dtype in DTYPES for n in SIZES] + [_random(n, torch.int8) for n in (0, 5, 4096, 70000)]
    m = torch.randn(300, 700, generator=g)
    c = torch.randn(5000, dtype=torch.complex128, generator=g)
    ts += [m.t(), m[:, ::3], m.to(memory_format=torch.contiguous_format)[None].expand(2, -1, -1), c.conj(), c, c.conj().resolve_conj(),
           torch._neg_view(c), torch.randn(2, 3, 70, 70, generator=g).to(memory_format=torch.channels_last), torch.randn(4097, generator=g).to(torch.complex32),
           torch.randn(3 * 65536 + 17, generator=g).double()[1:], torch.randn(300, 70, generator=g).double().t(), torch.tensor(2.5), torch.zeros(0, 3), torch.ones(70000, dtype=torch.bool)]
    return ts

@pytest.mark.filterwarnings('ignore:ComplexHalf support is experimental')
def test_kernel_gives_the_torch_ops_numbers(kernel, monkeypatch):
    ts = _mixed()
    fast, one_by_one = fingerprints(ts), [fingerprint(t) for t in ts]
    _torch_only(monkeypatch)
    assert core._native() is None
    assert fingerprints(ts) == fast == one_by_one == [fingerprint(t) for t in ts]

def test_kernel_threads_give_the_same_numbers(kernel, monkeypatch):
    "States over 8 MB are split between threads, large tensors in pieces of 16 blocks: the wrap-around sums do not depend on the split"
    g = torch.Generator().manual_seed(4)
    ts = [torch.randn(40 * 65536 + 3 * 32 + 5, generator=g), torch.randn(33 * 65536, generator=g).half(), torch.randn(32 * 65536 + 1, generator=g).double(),
          torch.randn(100, generator=g), torch.randint(0, 255, (70000,), generator=g).to(torch.uint8)]
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(4)
        four = fingerprints(ts)
        torch.set_num_threads(1)
        one = fingerprints(ts)
    finally: torch.set_num_threads(threads)
    _torch_only(monkeypatch)
    assert four == one == fingerprints(ts)

def test_kernel_reads_in_place(kernel):
    "Contiguous tensors are read where they lie (no copy): the kernel sees a change made through a view"
    t = torch.randn(70000)
    fp = fingerprint(t)
    t.view(7, 10000)[3, 5] += 1
    assert fingerprint(t) != fp and fingerprint(t) == fingerprint(t.clone())

def test_the_kernel_is_there_where_a_compiler_is():
    "A kernel that failed its check against PyTorch's ops is switched off (the tests above would skip): here that is a failure"
    import shutil
    import os
    if shutil.which('cc') is None or os.environ.get('FASTAI_PARANOID_NATIVE') == '0': pytest.skip("no C compiler, or the kernel switched off")
    assert core._native() is not None

def test_a_kernel_that_disagrees_is_not_used(tmp_path):
    code = ("import logging, torch; from fastai_paranoid import core; logging.basicConfig();"
            "core._NATIVE_SOURCE = core._NATIVE_SOURCE.replace('lane_table[g] = mix31(g) + 1;', 'lane_table[g] = mix31(g) + 2;'); print(core._native() is None)")
    out, err = _fresh({'XDG_CACHE_HOME': str(tmp_path)}, code, stderr=True)
    assert out == "True" and "disagrees with PyTorch's ops; not used" in err

def _fresh(env, code, stderr=False):
    import os, subprocess, sys
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip() if not stderr else (out.stdout.strip(), out.stderr)

PROBE = "import torch; from fastai_paranoid import core; print(core._native() is not None, core.fingerprint(torch.arange(200003, dtype=torch.float32).sin()))"

def test_without_a_compiler_the_torch_ops_give_the_same_fingerprint(tmp_path):
    "No C compiler (CC fails), or the kernel switched off: the same numbers from PyTorch's ops"
    expected = str(fingerprint(torch.arange(200003, dtype=torch.float32).sin()))
    assert _fresh({'XDG_CACHE_HOME': str(tmp_path), 'CC': 'false'}, PROBE) == f"False {expected}"
    assert _fresh({'FASTAI_PARANOID_NATIVE': '0'}, PROBE) == f"False {expected}"
    assert not list(tmp_path.glob('fastai_paranoid/*.so'))

def test_the_kernel_is_built_once_and_cached(tmp_path, kernel):
    expected = str(fingerprint(torch.arange(200003, dtype=torch.float32).sin()))
    env = {'XDG_CACHE_HOME': str(tmp_path)}
    assert _fresh(env, PROBE) == f"True {expected}"
    built = list(tmp_path.glob('fastai_paranoid/fingerprint-*.so'))
    assert len(built) == 1
    mtime = built[0].stat().st_mtime_ns
    assert _fresh(env, PROBE) == f"True {expected}"
    assert [p.stat().st_mtime_ns for p in tmp_path.glob('fastai_paranoid/fingerprint-*.so')] == [mtime]
