"""What a computation will need, against what the machine has: refuse before any work.

Each ``*_memory`` function returns a :class:`MemoryEstimate`: the arrays that dominate the peak
resident memory of one run, each a :class:`Term` with its formula in bytes and the parameters it
grows with. :func:`check_memory` compares the total with :func:`available_memory` and raises
:class:`ResourceError` (a ``ValueError``) naming the parameter of the largest term, the estimate
and the limit, unless ``force`` is set. The estimates are upper estimates of the *peak* (the
arrays alive at the same time, plus the temporaries of the step that allocates most); the tests
check each array term against ``nbytes`` of the real array and each total against the peak that
``tracemalloc`` measures at small sizes (the estimate lies between the measured peak and a small
multiple of it).

Shapes (docs/theory.md §1–§4): X: (N, D, d); the attention logits A: (D, D); the Monte Carlo
count vectors: (n_samples, L, 3) int64 with L = D/C; the exact expectation's multisets of count
types: M = C(L − 1 + K − 1, K − 1) rows over K = (C+1)(C+2)/2 types (fewer types when q ∈ {0, 1}).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # resources sits below setting's users; the Setting is only read here
    from .setting import Setting

__all__ = ["ResourceError", "Term", "MemoryEstimate", "available_memory", "check_memory", "format_bytes",
           "parse_bytes", "n_count_types", "n_exact_terms", "reduced_memory", "sample_memory", "simulate_memory",
           "theorem_3_2_memory", "transfer_memory", "vit_batch_memory", "vit_train_memory", "MEMORY_ENV"]

#: Environment variable that sets the memory limit (bytes, or with a K/M/G/T suffix, powers of 1024).
MEMORY_ENV = "THEORYDYN_MEMORY_LIMIT"

_F64, _I64, _I16, _I8, _BOOL = 8, 8, 2, 1, 1
#: data.sample draws the noise in chunks of this many float64 elements (theorydyn.data._CHUNK_ELEMS).
_CHUNK_ELEMS = 1 << 22
#: gdkernel: at most this many blocks of samples, each of at least MIN_BLOCK samples.
_MAX_BLOCKS, _MIN_BLOCK = 64, 64


#: Small arrays and buffers not modelled term by term (a fixed allowance in every estimate).
_SMALL_BYTES = 1 << 20


class ResourceError(ValueError):
    """A run that would not fit: names the parameter, the estimate and the limit."""


@dataclass(frozen=True)
class Term:
    """One array (or group of arrays) of an estimate: ``nbytes`` and the parameters it grows with."""

    what: str
    nbytes: int
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MemoryEstimate:
    """The peak memory of one run, as a sum of :class:`Term` s."""

    task: str
    terms: tuple[Term, ...]

    @property
    def total(self) -> int:
        return int(sum(t.nbytes for t in self.terms))

    @property
    def largest(self) -> Term:
        return max(self.terms, key=lambda t: t.nbytes)

    def __add__(self, other: "MemoryEstimate") -> "MemoryEstimate":
        return MemoryEstimate(f"{self.task} + {other.task}", self.terms + other.terms)

    def describe(self) -> str:
        """``task ≈ total: term (bytes), …`` with the three largest terms."""
        top = sorted(self.terms, key=lambda t: -t.nbytes)[:3]
        return f"{self.task} needs ≈ {format_bytes(self.total)} (" + "; ".join(
            f"{t.what}: {format_bytes(t.nbytes)}" for t in top) + ")"


def format_bytes(n: float) -> str:
    """1536 → '1.5 KiB' (powers of 1024)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def parse_bytes(text: str | int, name: str = MEMORY_ENV) -> int:
    """'8G', '512M', '1.5T', '123456' → bytes (K/M/G/T = powers of 1024, optional 'iB'/'B').

    Raises:
        ValueError: naming ``name``, for anything else or a value <= 0.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGTP]?)(?:i?B)?\s*", str(text), re.I)
        if not m:
            raise ValueError(f"{name} must be a number of bytes, optionally with K, M, G or T, got {text!r}")
        number = float(m.group(1)) * 1024 ** "BKMGTP".index(m.group(2).upper() or "B")
        if not math.isfinite(number):  # 1e400: float('inf'), which int() cannot take
            raise ValueError(f"{name} must be a finite number of bytes, got {text!r}")
        value = int(number)
    if value <= 0:
        raise ValueError(f"{name} must be > 0 bytes, got {text!r}")
    return value


def _read_int(path: str) -> int | None:
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory() -> tuple[int | None, str]:
    """(bytes a new run may use, where that number comes from), the tightest of:

    ``$THEORYDYN_MEMORY_LIMIT`` (when set it alone decides), ``MemAvailable`` of /proc/meminfo,
    the cgroup limit minus usage (v2 ``memory.max``/``memory.current``, v1
    ``memory.limit_in_bytes``/``memory.usage_in_bytes``), else free physical pages.
    (None, reason) when nothing can be read. Only local files are read; it never fails.
    """
    env = os.environ.get(MEMORY_ENV)
    if env:
        return parse_bytes(env), f"${MEMORY_ENV}"
    found: list[tuple[int, str]] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append((int(line.split()[1]) * 1024, "MemAvailable"))
                break
    except (OSError, ValueError, IndexError):
        pass
    for limit, usage, label in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "cgroup memory.max"),
                                ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                 "/sys/fs/cgroup/memory/memory.usage_in_bytes", "cgroup memory limit")):
        lim, used = _read_int(limit), _read_int(usage)
        if lim is not None and lim < 1 << 60:  # v1 reports "no limit" as a huge number
            found.append((max(lim - (used or 0), 0), label))
    if not found:
        try:
            found.append((os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "free physical pages"))
        except (ValueError, OSError, AttributeError):
            return None, "unknown (no /proc/meminfo, cgroup or sysconf)"
    return min(found)


def check_memory(estimate: MemoryEstimate, *, force: bool = False, available: int | None = None,
                 force_name: str = "force") -> MemoryEstimate:
    """Raise :class:`ResourceError` when ``estimate.total`` exceeds the available memory.

    Args:
        estimate: from one of the ``*_memory`` functions (or a sum of them).
        force: skip the refusal (the caller takes the risk of running out of memory).
        available: the limit in bytes (default: :func:`available_memory`; no check when unknown).
        force_name: how the caller spells the override, quoted in the message (e.g. ``--force``).

    Returns the estimate, so that a caller can log it.
    """
    if force:
        return estimate
    source = "given limit"
    if available is None:
        available, source = available_memory()
        if available is None:
            return estimate
    if estimate.total > available:
        big = estimate.largest
        named = ", ".join(f"{k}={v}" for k, v in big.params.items()) or "the setting"
        raise ResourceError(
            f"{named}: {estimate.describe()}, more than the {format_bytes(available)} of memory available "
            f"({source}); lower {' or '.join(big.params) or 'the size'}, or pass {force_name} to run anyway")
    return estimate


_SMALL = Term("small arrays and buffers", _SMALL_BYTES)


# ---- exact expectation ------------------------------------------------------------------------
def n_count_types(C: int, q: float) -> int:
    """Count types (n⁺, n⁻, n⁰) of a set of size C with nonzero probability under q (as computed in float)."""
    n = 0
    for a in range(C, -1, -1):
        for b in range(C - a + 1):
            c = C - a - b
            if math.comb(C, a) * math.comb(C - a, b) * (q / 2) ** (a + b) * (1 - q) ** c > 0:
                n += 1
    return n


def n_exact_terms(D: int, C: int, q: float) -> int:
    """Multisets of count types of the L − 1 random sets: C(L − 1 + K' − 1, K' − 1), K' = n_count_types."""
    k = n_count_types(C, q)
    return math.comb(D // C - 1 + k - 1, k - 1)


# ---- the reduced dynamics ------------------------------------------------------------------------
def reduced_memory(D: int, C: int, q: float, n_samples: int = 4000, expectation: str = "mc") -> MemoryEstimate:
    """Peak of building the bank of :func:`theorydyn.reduced.make_bank` (the integration itself is small).

    Monte Carlo: the (n_samples, K) int16 histograms of set types drawn in Numba, their int64 copy
    and sort keys when identical samples are merged (the peak), and the bank's arrays. Exact: M multisets, each row
    K int16 counts (two copies), the compressed rows (≤ min(K, L) nonzeros, two int64 each) and
    six float64/int64 vectors.
    """
    L, K = D // C, (C + 1) * (C + 2) // 2
    if expectation == "exact":
        M = n_exact_terms(D, C, q)
        nnz = M * min(K, L)
        return MemoryEstimate("reduced exact expectation", (
            Term(f"{M:,} multisets × {K} count types, int16, 2 copies", 2 * M * K * _I16, {"D": D, "C": C}),
            Term("compressed rows (int64 type and count per nonzero, ≤ min(K, L) nonzeros)", 2 * _I64 * nnz,
                 {"D": D, "C": C}),
            Term("weights, T, f, index vectors", 6 * _F64 * M, {"D": D, "C": C}),
            _SMALL,
        ))
    N = int(n_samples)
    # expected number of distinct set types per sample: the signal set's, plus each type that
    # appears among the L − 1 random sets, whose types are i.i.d. Multinomial(C; q/2, q/2, 1 − q)
    probs = [math.comb(C, a) * math.comb(C - a, b) * (q / 2) ** (a + b) * (1 - q) ** (C - a - b)
             for a in range(C + 1) for b in range(C + 1 - a)]
    nz = 1.0 + sum(1.0 - (1.0 - pk) ** (L - 1) for pk in probs)
    return MemoryEstimate("reduced Monte Carlo bank", (
        # the peak is the merge of identical samples; the draw before it (N(L−1) 32-bit uniforms
        # and the int16 histograms) is smaller
        Term(f"type histograms ({N}, K={K}) int16", N * K * _I16, {"n_samples": N}),
        Term(f"merge: the histograms as int64 ({N}, {K}) and their sort keys", N * K * _I64 + 4 * N * _I64,
             {"n_samples": N}),
        Term(f"bank arrays of the merged rows (≤ {N}): ≈ {nz:.1f} nonzero types per row and per-row vectors",
             int(2 * N * nz * _I64) + 5 * N * _F64, {"n_samples": N}),
        _SMALL,
    ))


# ---- data and the finite-sample simulator ----------------------------------------------------------
def sample_memory(D: int, C: int, d: int | None, N: int, itemsize: int = 8, label: str = "N") -> MemoryEstimate:
    """:func:`theorydyn.data.sample` of N samples: X (N, D, d) plus the larger of its temporaries.

    X is the one array that stays; before it, the feature coefficients need u (N, D) float64,
    z (N, D) int8 and three (N, D) boolean masks; while X fills, a noise chunk of
    ≤ 2^22 float64 elements and its projection (two chunks).
    """
    d = D if d is None else d
    chunk = min(N * D * d, max(D * d, _CHUNK_ELEMS // (D * d) * D * d))
    return MemoryEstimate(f"data ({label}={N})", (
        Term(f"X ({N}, {D}, {d}) {itemsize * 8}-bit floats", N * D * d * itemsize, {label: N, "D": D, "d": d}),
        Term(f"feature coefficients u, z, masks ({N}, {D})", N * D * (_F64 + _I8 + 4 * _BOOL) + 3 * N * _F64,
             {label: N, "D": D}),
        Term("noise chunks (float64, 2 live)", 2 * chunk * _F64, {"D": D, "d": d}),
        _SMALL,
    ))


def simulate_memory(D: int, C: int, d: int | None = None, N: int = 16384, n_test: int = 8192, dtype: str = "float64",
                    replicas: int = 1) -> MemoryEstimate:
    """Peak of :func:`theorydyn.simulate.simulate`: the training and test X, and the D × D arrays.

    Training X (N, D, d) and test X (n_test, D, d) in ``dtype``; the logits A and their copies
    (A, its gradient, the last good A, S, Sᵀ, the summed and the backward D × D arrays: 8 per
    replica) and the per-block partial gradients (nb, R, D, D) float64 with
    nb = ⌈N / max(64, ⌈N/64⌉)⌉ ≤ 64; the Setting's four (D, D) boolean masks; the test labels'
    float copies of z (2 × n_test × D float64).
    """
    d = D if d is None else d
    itemsize = 4 if str(dtype) == "float32" else 8
    block = max(_MIN_BLOCK, -(-N // _MAX_BLOCKS))
    nb = -(-N // block)
    R = int(replicas)
    train = sample_memory(D, C, d, N, itemsize, "N")
    test = sample_memory(D, C, d, n_test, itemsize, "n_test")
    # X of both stay; the sampling temporaries of one draw at a time (the larger of the two)
    temps = max((train.terms[1:], test.terms[1:]), key=lambda ts: sum(t.nbytes for t in ts))
    extra = (
        train.terms[0],
        test.terms[0],
        *temps,
        Term(f"(D, D) float64 arrays: logits, gradients, softmax ({8 * R} of them)", 8 * R * D * D * _F64, {"D": D}),
        Term(f"per-block partial gradients ({nb}, {R}, D, D) float64", nb * R * D * D * _F64, {"D": D, "N": N}),
        Term("(D, D) boolean masks of the Setting (4)", 4 * D * D * _BOOL, {"D": D}),
        Term(f"test labels: z as float64 twice ({n_test}, {D})", 2 * n_test * D * _F64, {"n_test": n_test, "D": D}),
        Term("per-sample vectors (labels, weights, outputs)", 4 * (N + n_test) * _F64, {"N": N, "n_test": n_test}),
    )
    return MemoryEstimate("simulate", extra + (_SMALL,))


def theorem_3_2_memory(D: int, C: int, d: int | None = None, N: int = 20_000) -> MemoryEstimate:
    """:func:`theorydyn.claims.theorems.check_theorem_3_2`: N samples (two seeds' worth at the
    hand-over between seeds) and a dozen D × D float64 matrices.

    The construction holds B, G, the eigenvectors, P, P⁻¹, W_Q, W_K and the Gram and logits
    matrices (≈ 12 live D × D float64 arrays with LAPACK work space), the boolean masks, and
    the N samples of :func:`sample_memory` plus their float64 projections (N, D) for f.
    """
    d = D if d is None else d
    data = sample_memory(D, C, d, N, 8, "N")
    return MemoryEstimate("Theorem 3.2 check", data.terms[:-1] + (
        # the check loops over seeds: the previous seed's X is alive while the next one is drawn
        Term(f"the previous seed's X ({N}, {D}, {d}) float64", N * D * d * _F64, {"N": N, "D": D, "d": d}),
        Term("D × D float64 matrices of the construction (12)", 12 * D * D * _F64, {"D": D}),
        Term("(D, D) boolean masks of the Setting (4)", 4 * D * D * _BOOL, {"D": D}),
        Term(f"projections ⟨w*, X_j⟩ and labels ({N}, {D}) float64 ×3", 3 * N * D * _F64, {"N": N, "D": D}),
        _SMALL,
    ))


# ---- the theorem checks -----------------------------------------------------------------------------
def theorem_3_1_memory(s: "Setting", N_fit: int = 100_000, N_test: int = 100_000, N_flat: int = 2_000):
    """Peak of :func:`theorydyn.claims.theorems.check_theorem_3_1` without the scan (one seed at a time), as a
    :class:`~theorydyn.resources.MemoryEstimate` (docs/theory.md §4).

    The exact route holds ≈ 5 float64 n × n grids, n = 2(L − 1)C + 1 (G, its rfft2, the power,
    the inverse and its shifted, clipped copies); the fitted GLMs hold z (N, D) int8 of the fit
    and test draws, their float64 copies, u (N, D) float64 and four (N, D) masks of the draw;
    the flattened fit holds X (N_flat, D, d) and a test X (min(N_test, 20000), D, d) float64.
    """

    n = 2 * (s.L - 1) * s.C + 1
    N_big = max(N_fit, N_test)
    flat = sample_memory(s.D, s.C, s.d, N_flat, 8, "N_flat")
    n_test_flat = min(N_test, 20_000)
    return MemoryEstimate("Theorem 3.1 check", (
        Term(f"exact law: 5 float64 grids ({n}, {n})", 5 * n * n * 8, {"D": s.D}),
        Term(f"z of the fit and test draws ({N_fit}+{N_test}, {s.D}) int8 and float64 copies",
             (N_fit + N_test) * s.D * 9, {"D": s.D}),
        Term(f"draw temporaries u, masks ({N_big}, {s.D})", N_big * s.D * (8 + 4), {"D": s.D}),
        Term(f"flattened X ({N_flat} + {n_test_flat}, {s.D}, {s.d}) float64", (N_flat + n_test_flat) * s.D * s.d * 8,
             {"D": s.D, "d": s.d}),
        *flat.terms[1:],
    ))


def theorems_memory(s: "Setting", only: list[str], full: bool) -> MemoryEstimate:
    """The largest peak among the theorem checks that ``python -m theorydyn.theorems`` (``only``: a subset
    of "3.1", "3.2"; ``full``: the full sizes) or the ledger will run (they run one after the other)."""

    parts = []
    if not only or "3.1" in only:
        parts.append(theorem_3_1_memory(s) if only else
                     theorem_3_1_memory(s, *((200_000, 200_000, 8_000) if full else (50_000, 50_000, 2_000))))
    if not only or "3.2" in only:
        parts.append(theorem_3_2_memory(s.D, s.C, s.d, N=50_000 if (full and not only) else 5_000))
    if not only:
        D = s.D if full else min(s.D, 32)
        parts.append(simulate_memory(D, s.C, s.d if (full or s.d != s.D) else D, N=16384))
    return max(parts, key=lambda e: e.total)


# ---- the vision benchmark ---------------------------------------------------------------------------
def vit_batch_memory(batch: int, width: int = 384, depth: int = 7, heads: int = 12, mlp: int | None = None,
                     patch: int = 4, image_size: int = 32, channels: int = 3, itemsize: int = 4) -> MemoryEstimate:
    """One training step of :class:`theorydyn.vision.model.ViT` on a batch: input and saved activations.

    With T = (image_size / patch)² tokens, each block keeps for the backward pass
    T·(8·width + 2·mlp) values (norms, q, k, v, outputs, residuals, the MLP's hidden layer
    before and after its activation) and 2·heads·T² (scores and softmax), in ``itemsize`` bytes;
    times ``depth``, plus the input batch (batch, channels, size, size). Measured against the
    tensors autograd saves (tests/test_resources.py) this is 1.1–1.8× of them, the rest being
    the transients of the backward pass. Parameters and optimizer state (independent of the
    batch) are left out; on a GPU compare with the device's free memory (``available=``).
    """
    mlp = width if mlp is None else mlp
    T = (image_size // patch) ** 2
    per_image = depth * (T * (8 * width + 2 * mlp) + 2 * heads * T * T) + 2 * T * width
    return MemoryEstimate(f"ViT step (batch={batch})", (
        Term(f"input batch ({batch}, {channels}, {image_size}, {image_size}) float32",
             batch * channels * image_size * image_size * 4, {"batch": batch}),
        Term(f"saved activations ({depth} blocks, {T} tokens, width {width})", batch * per_image * itemsize,
             {"batch": batch}),
    ))


# ---- the transfer experiment -------------------------------------------------------------------------
def transfer_memory(D: int, C: int, d: int | None, q: float, N_test: int, N_train: int, *,
                    ceiling_samples: int = 20000, flow_n_samples: int | None = 2000,
                    upstream_N: int | None = None) -> MemoryEstimate:
    """Peak of :func:`theorydyn.transfer.experiment.run` at one D (the D's run one after the other).

    The phases at D run in turn, so the peak is the largest of them (the D × D attentions, ≈ 8
    float64 matrices, live throughout):

    * the population references (``ceiling``, ``linear_reference``): feature values of
      ``ceiling_samples`` samples, u (n, D) float64, z (n, D) int8 and three (n, D) boolean masks;
    * the idealized pre-training (``flow_n_samples`` not None): the reduced Monte Carlo bank
      (:func:`reduced_memory`);
    * the finite-sample pre-training (``upstream_N`` not None): :func:`simulate_memory` in float32
      with its default 8192 test samples;
    * the rows: the test set in projected form (z, g: (N_test, D) float64, and its draw's
      u, int8 z and masks) with the (N_test, D) float64 outputs of one evaluation (u, u Sᵀ, σ: 3),
      and the ``N_train`` downstream samples X: (N_train, D, d) (:func:`sample_memory`).
    """
    d = D if d is None else d
    attn = Term("D × D float64 attentions and scores (≈ 8)", 8 * D * D * _F64, {"D": D})
    n = int(ceiling_samples)
    phases = [MemoryEstimate(f"transfer references at D={D}", (
        Term(f"feature values of {n} samples: u ({n}, {D}) float64, z int8, 3 masks", n * D * (_F64 + _I8 + 3 * _BOOL),
             {"D": D}), attn, _SMALL))]
    if flow_n_samples is not None:
        phases.append(reduced_memory(D, C, q, flow_n_samples) + MemoryEstimate("attentions", (attn,)))
    if upstream_N is not None:
        sim = simulate_memory(D, C, d, upstream_N, 8192, "float32")
        # its N is the upstream sample size (named so that a caller can tell it from the downstream Ñ)
        terms = tuple(Term(t.what, t.nbytes, {("upstream_N" if k == "N" else k): v for k, v in t.params.items()})
                      for t in sim.terms)
        phases.append(MemoryEstimate(f"finite-sample pre-training at D={D}", terms + (attn,)))
    N = int(N_test)
    train = sample_memory(D, C, d, N_train, 8, "N")
    phases.append(MemoryEstimate(f"transfer rows at D={D}", (
        Term(f"test set z, g ({N}, {D}) float64 and its draw's u, int8 z, masks", N * D * (2 * _F64 + _F64 + _I8 + 3 * _BOOL),
             {"N_test": N, "D": D}),
        Term(f"outputs of one evaluation ({N}, {D}) float64 ×3", 3 * N * D * _F64, {"N_test": N, "D": D}),
        *train.terms[:-1], attn, _SMALL)))
    return max(phases, key=lambda e: e.total)


def vit_train_memory(batch: int, width: int = 384, depth: int = 7, heads: int = 12, mlp: int | None = None,
                     patch: int = 4, image_size: int = 32, channels: int = 3, classes: int = 10,
                     itemsize: int = 4) -> MemoryEstimate:
    """:func:`vit_batch_memory` plus the weights of the ViT: parameters, gradients and AdamW's two
    moments (4 float32 copies) of ≈ depth·(4·width² + 2·width·mlp) block weights, the patch
    embedding (channels·patch²·width), the T·width positional encodings and the head (width·classes).
    A CLI refuses a network whose size alone would not fit (``--width 10**6``) with it."""
    mlp = width if mlp is None else mlp
    T = (image_size // patch) ** 2
    n = depth * (4 * width * width + 2 * width * mlp) + channels * patch * patch * width + T * width + width * classes
    return vit_batch_memory(batch, width, depth, heads, mlp, patch, image_size, channels, itemsize) + MemoryEstimate(
        "ViT weights", (Term(f"{n:,} parameters ×4 (weights, gradients, AdamW moments) float32", 16 * n,
                             {"width": width, "depth": depth}),))
